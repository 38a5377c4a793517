#!/usr/bin/env node
/* global process, URL */
/**
 * The `cinder` command (a client of Cinder: the service itself runs with `npm start`). Plain JavaScript, so that it
 * runs as installed, from either form of Cinder:
 * - a checkout with its development dependencies (`npm ci`): the TypeScript sources in src/,
 *   through tsx, so what runs is always what the sources say (a dist/ left by an older build is
 *   ignored);
 * - a production install (`npm run build`, then `npm ci --omit=dev`: no tsx, no TypeScript): the
 *   JavaScript that the build wrote to dist/.
 * Every command is a client: the SDK, src/index.ts (compiled to dist/index.js).
 */
import { existsSync } from 'node:fs';

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

async function loadCli() {
  const tsx = await loadTsx();
  if (tsx) {
    tsx.register();
    return import('../src/cli.ts');
  }
  const built = new URL('../dist/cli.js', import.meta.url);
  if (existsSync(built)) return import(built.href);
  process.stderr.write(
    'cinder: nothing to run: this install has neither the development dependencies (run `npm ci`) nor a build (run `npm ci && npm run build`, then `npm ci --omit=dev` for production)\n',
  );
  process.exit(1);
}

const { main } = await loadCli();
process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
});
