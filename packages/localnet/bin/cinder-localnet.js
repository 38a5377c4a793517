#!/usr/bin/env node
/* global process, URL */
/**
 * `cinder-localnet [--port N]` (`npm run localnet` at the repository root): the local chain on its
 * own, from TypeScript sources through tsx in a checkout, or from dist/ after `npm run build`.
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

const tsx = await loadTsx();
if (tsx) {
  tsx.register();
  await import('../src/main.ts');
} else {
  const built = new URL('../dist/main.js', import.meta.url);
  if (!existsSync(built)) {
    process.stderr.write('cinder-localnet: nothing to run: run `npm ci` (development) or `npm run build` first\n');
    process.exit(1);
  }
  await import(built.href);
}
