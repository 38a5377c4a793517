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
 *
 * TypeBox, which the service's schemas and configuration are written with, is published as some
 * 700 ES modules, and Node's loader pays for each: half a second of a start that is otherwise one.
 * The build bundles it into dist/vendor/ (esbuild, one file per entry point the sources import, the
 * code they share in one chunk) and the compiled files import it from there. Pure JavaScript with
 * no file of its own to find at run time, it behaves the same bundled.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE, freshBundle } from './bundle.js';

const SERVICE = fileURLToPath(new URL('../', import.meta.url));
/** The packages the service runs from their build: itself and the local chain it embeds. */
export const PACKAGES = [SERVICE, fileURLToPath(new URL('../../localnet/', import.meta.url))];

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

const require = createRequire(import.meta.url);

function loadOptional(name) {
  try {
    return require(name);
  } catch (error) {
    if (error?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** The bundled packages: each entry point the sources import → its file under dist/vendor/. */
const VENDORED = { typebox: 'typebox.js', 'typebox/value': 'typebox-value.js' };
const vendorDir = (pkg) => join(pkg, 'dist', 'vendor');

/** The installed version of a package (its package.json, found above its entry point: not every package exports it). */
function installedVersion(name, pkg) {
  for (let dir = dirname(require.resolve(name, { paths: [pkg] })); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name: found, version } = JSON.parse(readFileSync(manifest, 'utf8'));
      if (found === name) return version;
    }
  }
  throw new Error(`cannot find the package.json of ${name}`);
}

const VERSIONS = 'versions.json';

/** The versions of the bundled packages a bundle would have now: the installed ones. */
const vendorVersions = (pkg) => JSON.stringify(Object.fromEntries([...new Set(Object.keys(VENDORED).map((specifier) => specifier.split('/')[0]))].map((name) => [name, installedVersion(name, pkg)])));

/** The service's bundle is missing, or was made from other versions than those installed. */
function vendorStale(pkg) {
  if (!existsSync(join(pkg, 'src'))) return false;
  const bundled = existsSync(join(vendorDir(pkg), VERSIONS)) ? readFileSync(join(vendorDir(pkg), VERSIONS), 'utf8') : undefined;
  return bundled !== vendorVersions(pkg) || Object.values(VENDORED).some((file) => !existsSync(join(vendorDir(pkg), file)));
}

/** Bundles TypeBox into dist/vendor/ with esbuild; false without esbuild (the build then imports TypeBox itself). */
function bundleVendored(pkg) {
  const esbuild = loadOptional('esbuild');
  if (!esbuild) return false;
  const staging = join(pkg, 'dist', `vendor.${process.pid}.tmp`);
  rmSync(staging, { recursive: true, force: true });
  esbuild.buildSync({
    entryPoints: Object.entries(VENDORED).map(([specifier, file]) => ({ in: require.resolve(specifier, { paths: [pkg] }), out: file.replace(/\.js$/, '') })),
    absWorkingDir: pkg,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: staging,
    logLevel: 'warning',
  });
  writeFileSync(join(staging, VERSIONS), vendorVersions(pkg));
  rmSync(vendorDir(pkg), { recursive: true, force: true });
  try {
    renameSync(staging, vendorDir(pkg));
  } catch (error) {
    // Another start bundled the same versions at the same moment: theirs is as good as this one.
    rmSync(staging, { recursive: true, force: true });
    if (vendorStale(pkg)) throw error;
  }
  return true;
}

/** A transformer that points the imports of vendored packages at their bundle (a path relative to `out`). */
function importsFromVendor(ts, pkg, out) {
  const target = (specifier) => {
    const file = VENDORED[specifier];
    if (!file) return undefined;
    const path = relative(dirname(out), join(vendorDir(pkg), file)).split(sep).join(posix.sep);
    return path.startsWith('.') ? path : `./${path}`;
  };
  return (context) => (sourceFile) => {
    const visit = (node) => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const path = target(node.moduleSpecifier.text);
        if (path) {
          return ts.isImportDeclaration(node)
            ? context.factory.updateImportDeclaration(node, node.modifiers, node.importClause, context.factory.createStringLiteral(path), node.attributes)
            : context.factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, context.factory.createStringLiteral(path), node.attributes);
        }
      }
      return node;
    };
    return ts.visitEachChild(sourceFile, visit, context);
  };
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
  const stale = packages
    .map((pkg) => {
      const vendor = pkg === SERVICE && vendorStale(pkg);
      // A new bundle: every file compiled again, so that each imports it (or TypeBox itself, without esbuild).
      return { pkg, vendor, files: vendor ? sourcesOf(join(pkg, 'src')) : staleSources(pkg) };
    })
    .filter(({ files }) => files.length > 0);
  if (stale.length === 0) return [];
  const ts = loadOptional('typescript');
  if (!ts) return null;
  const compiled = [];
  for (const { pkg, vendor, files } of stale) {
    const vendored = vendor ? bundleVendored(pkg) : pkg === SERVICE && existsSync(vendorDir(pkg));
    const config = ts.getParsedCommandLineOfConfigFile(join(pkg, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (!config) throw new Error(`cannot read ${join(pkg, 'tsconfig.build.json')}`);
    // Every package is "type": "module": ESM out, whatever NodeNext would infer for a lone file.
    const compilerOptions = { ...config.options, module: ts.ModuleKind.ESNext };
    for (const file of files) {
      const out = join(config.options.outDir, relative(config.options.rootDir, file)).replace(/\.tsx?$/, '.js');
      const transformers = vendored ? { after: [importsFromVendor(ts, pkg, out)] } : undefined;
      const { outputText, sourceMapText } = ts.transpileModule(ts.sys.readFile(file) ?? '', { compilerOptions, fileName: file, transformers });
      if (sourceMapText !== undefined) writeAtomically(`${out}.map`, sourceMapText);
      writeAtomically(out, outputText);
      // Never older than its source, even one dated in the future (a clock set differently where it
      // was written): else it would be compiled again at every start.
      const sourceAt = mtimeOf(file);
      if (sourceAt > Date.now()) utimesSync(out, new Date(), (Math.ceil(sourceAt) + 1) / 1000);
      compiled.push(file);
    }
  }
  return compiled;
}

// Run as a script (`npm ci`'s prepare, `npm run build`): compile what is stale, say so. Arguments:
// the package directories to build (default: the service and the local chain).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const packages = process.argv.length > 2 ? process.argv.slice(2).map((dir) => join(process.cwd(), dir, '/')) : PACKAGES;
  const compiled = freshBuild(packages);
  if (compiled === null) process.stderr.write('cinder: no TypeScript compiler here; the build (dist/) is left as it is\n');
  else if (compiled.length > 0) process.stderr.write(`cinder: compiled ${compiled.length} source files into dist/\n`);
  // The service's bundle, made from what was just compiled (bundle.js).
  if (compiled !== null && packages.includes(SERVICE) && (await freshBundle(SERVICE))) process.stderr.write(`cinder: bundled the service into dist/${BUNDLE}\n`);
}
