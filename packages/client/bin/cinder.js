#!/usr/bin/env node
/* global process, URL */
/**
 * The `cinder` command (a client of Cinder: the service itself runs with `npm start`). Plain JavaScript, so that it
 * runs as installed, from either form of Cinder:
 * - a build (`npm run build`; a production install has only that): the JavaScript in dist/, as
 *   long as it is at least as new as every file of src/ (an older build is ignored, so what runs
 *   is always what the sources say). `npm test` builds the client first, so the CLI's tests run
 *   the JavaScript that ships (and skip tsx's start-up, half a second per command);
 * - else a checkout with its development dependencies (`npm ci`): the TypeScript sources in src/,
 *   through tsx.
 * Every command is a client: the SDK, src/index.ts (compiled to dist/index.js).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** dist/cli.js when no file of src/ is newer than it (or there is no src/), else null. */
function currentBuild() {
  const built = new URL('../dist/cli.js', import.meta.url);
  if (!existsSync(built)) return null;
  const builtAt = statSync(built).mtimeMs;
  const newerThanBuild = (dir) =>
    readdirSync(dir, { withFileTypes: true }).some((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? newerThanBuild(path) : statSync(path).mtimeMs > builtAt;
    });
  const src = fileURLToPath(new URL('../src', import.meta.url));
  return existsSync(src) && newerThanBuild(src) ? null : built;
}

async function loadCli() {
  const built = currentBuild();
  if (built) return import(built.href);
  const tsx = await loadTsx();
  if (tsx) {
    tsx.register();
    return import('../src/cli.ts');
  }
  process.stderr.write(
    'cinder: nothing to run: this install has neither a build of its sources (run `npm ci && npm run build`, then `npm ci --omit=dev` for production) nor the development dependencies (run `npm ci`)\n',
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
