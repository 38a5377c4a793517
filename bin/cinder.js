#!/usr/bin/env node
/* global process */
/**
 * The `cinder` command. Plain JavaScript, so that it runs as installed: it registers tsx (a runtime
 * dependency of Cinder) and hands over to the TypeScript CLI in src/client/cli.ts; nothing is built.
 * Client commands use the SDK, src/client/index.js (plain JavaScript as well).
 */
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/client/cli.ts');
process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
});
