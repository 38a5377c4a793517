#!/usr/bin/env node
/* global process, URL */
/**
 * The service (`npm start` at the repository root). Plain JavaScript, so that it runs from either
 * form of Cinder:
 * - a checkout with its development dependencies (`npm ci`): the TypeScript sources through tsx,
 *   so what runs is always what the sources say (a dist/ left by an older build is ignored);
 * - a production install (`npm run build`, then `npm ci --omit=dev`): the JavaScript in dist/.
 * Configuration comes from the environment (see docs/deployment.md).
 */
import { existsSync } from 'node:fs';
import { register } from 'node:module';

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
  await import('../src/server.ts');
} else {
  const built = new URL('../dist/server.js', import.meta.url);
  if (!existsSync(built)) {
    process.stderr.write(
      'cinder-service: nothing to run: this install has neither the development dependencies (run `npm ci`) nor a build (run `npm ci && npm run build`, then `npm ci --omit=dev` for production)\n',
    );
    process.exit(1);
  }
  register('./production-condition.js', import.meta.url);
  await import(built.href);
}
