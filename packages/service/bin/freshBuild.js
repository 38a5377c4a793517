#!/usr/bin/env node
/* global process, URL */
/**
 * Keeps the build of the service and of its local chain (each package's dist/) as new as their
 * TypeScript sources, so that the launcher can always run JavaScript (Node loads it in a fraction
 * of the time a TypeScript loader takes) and what runs is still what the sources say:
 * - `npm ci` (the root package's `prepare` script) runs this file: a fresh clone has its build;
 * - the launcher (cinder-service.js) calls freshBuild() before each start: a source file newer than
 *   its JavaScript (an edit, a `git pull`) is compiled again, that file only.
 *
 * Each file is compiled on its own (TypeScript's transpileModule, with the options of the package's
 * tsconfig.build.json: the same JavaScript as `npm run build`), without a type check: the type
 * check is `npm run typecheck`'s job, and a full `tsc` takes some 20 s, too long for a start.
 * Without the TypeScript compiler (a production install) nothing is compiled: the build is what
 * `npm run build` made.
 */
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The packages the service runs from their build: itself and the local chain it embeds. */
export const PACKAGES = ['service', 'localnet'].map((name) => fileURLToPath(new URL(`../../${name}/`, import.meta.url)));

function sourcesOf(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourcesOf(path, found);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

const mtimeOf = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

/** The source files of a package whose JavaScript in dist/ is missing or older than they are. */
export function staleSources(pkg) {
  const src = join(pkg, 'src');
  if (!existsSync(src)) return [];
  return sourcesOf(src).filter((file) => {
    const built = mtimeOf(join(pkg, 'dist', relative(src, file)).replace(/\.tsx?$/, '.js'));
    return built === undefined || built < mtimeOf(file);
  });
}

function loadTypeScript() {
  try {
    return createRequire(import.meta.url)('typescript');
  } catch (error) {
    if (error?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** Writes through a file of its own then renames, so that two starts at once never leave half a file. */
function writeAtomically(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/**
 * Compiles every stale source file of the packages. Returns the files compiled, or null when some
 * were stale but there is no TypeScript compiler to compile them with (the build is then older
 * than its sources).
 */
export function freshBuild(packages = PACKAGES) {
  const stale = packages.map((pkg) => ({ pkg, files: staleSources(pkg) })).filter(({ files }) => files.length > 0);
  if (stale.length === 0) return [];
  const ts = loadTypeScript();
  if (!ts) return null;
  const compiled = [];
  for (const { pkg, files } of stale) {
    const config = ts.getParsedCommandLineOfConfigFile(join(pkg, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (!config) throw new Error(`cannot read ${join(pkg, 'tsconfig.build.json')}`);
    // Every package is "type": "module": ESM out, whatever NodeNext would infer for a lone file.
    const compilerOptions = { ...config.options, module: ts.ModuleKind.ESNext };
    for (const file of files) {
      const { outputText, sourceMapText } = ts.transpileModule(ts.sys.readFile(file) ?? '', { compilerOptions, fileName: file });
      const out = join(config.options.outDir, relative(config.options.rootDir, file)).replace(/\.tsx?$/, '.js');
      if (sourceMapText !== undefined) writeAtomically(`${out}.map`, sourceMapText);
      writeAtomically(out, outputText);
      compiled.push(file);
    }
  }
  return compiled;
}

// Run as a script (`npm ci`'s prepare): compile what is stale, say so.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const compiled = freshBuild();
  if (compiled === null) process.stderr.write('cinder: no TypeScript compiler here; the build (dist/) is left as it is\n');
  else if (compiled.length > 0) process.stderr.write(`cinder: compiled ${compiled.length} source files into dist/\n`);
}
