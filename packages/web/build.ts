/**
 * Builds the web app into packages/web/bundle/ (committed: `npm start` and the production install serve it
 * as it is, without esbuild): app.js (the page's TypeScript and its dependencies, minified), app.css,
 * index.html and icon.svg. Deterministic: the same sources give the same bytes (no timestamps, no
 * absolute paths), and test/e2e/webAppBuild.test.ts rebuilds and compares.
 *
 *   npm run build:web              # into packages/web/bundle/
 *   node --import tsx web/build.ts OUT_DIR
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const WEB = fileURLToPath(new URL('.', import.meta.url));
/** The files of a built bundle, in packages/web/bundle/. */
export const BUNDLE_FILES = ['app.js', 'app.css', 'index.html', 'icon.svg'] as const;

export async function buildWebApp(outDir: string): Promise<void> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await build({
    absWorkingDir: WEB,
    entryPoints: { app: 'src/main.tsx' },
    bundle: true,
    format: 'esm',
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: false,
    charset: 'utf8',
    legalComments: 'eof',
    outdir: outDir,
    logLevel: 'warning',
  });
  await build({ absWorkingDir: WEB, entryPoints: { app: 'app.css' }, bundle: true, minify: true, outdir: outDir, logLevel: 'warning' });
  await copyFile(`${WEB}index.html`, `${outDir}/index.html`);
  await copyFile(`${WEB}icon.svg`, `${outDir}/icon.svg`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWebApp(process.argv[2] ?? `${WEB}bundle`);
}
