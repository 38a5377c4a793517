#!/usr/bin/env node
/* global process, URL */
/**
 * The service (`npm start` at the repository root). Plain JavaScript, so that it runs from either
 * form of Cinder, always from the JavaScript build (dist/), which Node loads several times faster
 * than a TypeScript loader would load the sources:
 * - a checkout with its development dependencies (`npm ci`, which builds): any source file newer
 *   than its JavaScript is compiled again first (freshBuild.js), so what runs is always what the
 *   sources say;
 * - a production install (`npm run build`, then `npm ci --omit=dev`): the build as it is.
 * The build runs as one file where it can (dist/server.bundle.js, bundle.js): made again here
 * when it is older than what it was made from and esbuild is installed, else dist/server.js runs.
 * Configuration comes from the environment (see docs/deployment.md).
 */
import nodeModule from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freshBundle, launchTarget } from './bundle.js';
import { freshBuild } from './freshBuild.js';

// Node 22.1+: V8's compiled code kept on disk between starts (NODE_COMPILE_CACHE, or the system's
// temporary directory), which roughly halves the time spent compiling modules. Absent on Node 20.
nodeModule.enableCompileCache?.();

const compiled = freshBuild();
if (compiled === null) {
  process.stderr.write(
    'cinder-service: warning: some source files are newer than the build and there is no TypeScript compiler here to compile them: running the build as it is (`npm run build` updates it)\n',
  );
}
const service = fileURLToPath(new URL('../', import.meta.url));
// The service's build as one file, made again from what was just compiled (bundle.js).
if (compiled !== null) await freshBundle(service);
const built = launchTarget(service);
if (built === undefined) {
  process.stderr.write(
    'cinder-service: nothing to run: this install has neither the development dependencies (run `npm ci`) nor a build (run `npm ci && npm run build`, then `npm ci --omit=dev` for production)\n',
  );
  process.exit(1);
}
await import(pathToFileURL(built).href);
