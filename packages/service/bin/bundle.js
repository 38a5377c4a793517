/* global process */
/**
 * The service's build as one file: dist/server.bundle.js, made by esbuild from dist/server.js (the
 * JavaScript freshBuild.js compiled, so the same code) and the packages it imports. Node loads
 * one file several times faster than the 500-odd modules it replaces: each module costs the
 * loader a resolution, a read and, for CommonJS imported from an ES module, a scan of its source
 * for its exports — most of a start's CPU before this bundle.
 *
 * What esbuild cannot know, and this file tells it:
 * - where each module was: code that finds files beside itself (`import.meta.url` in an ES module,
 *   `__dirname` and `__filename` in CommonJS: the web app's files, the guide's pages, Swagger UI's
 *   assets) gets the address of its original file, so it finds what it found unbundled;
 * - what must stay outside: native addons (their binary is found at run time), packages that start
 *   a worker thread from a file of their own (piscina), and what is loaded only on demand (ioredis
 *   with REDIS_URL, marked for the guide, pino-pretty at a terminal, the local chain's build);
 * - those outside that an ES module imports are loaded with require(): Node then neither scans
 *   them nor runs their require() calls through its ES module loader.
 *
 * The bundle is stale when any file it was made from is newer than it or gone (each is listed in
 * dist/server.bundle.json); the launcher then runs dist/server.js, unbundled, unless esbuild is
 * here to make it again (it is with the development dependencies).
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep, posix } from 'node:path';

export const BUNDLE = 'server.bundle.js';
const MANIFEST = 'server.bundle.json';

/** Packages left outside the bundle: loaded from node_modules at run time. */
const EXTERNAL = [
  // native addons and their loaders: the binary is looked for beside the package
  'sodium-native',
  'bufferutil',
  'utf-8-validate',
  // starts its worker threads from a file of its own
  'piscina',
  // loaded only when asked for: not worth a byte of the bundle otherwise
  'ioredis',
  'marked',
  'pino-pretty',
  // the embedded chain's native LiteSVM (the chain's own code is bundled: a chunk loaded only without SOLANA_RPC_URL)
  'litesvm',
  // Fastify's default schema compilers (Ajv, fast-json-stringify): the app gives it lazy ones
  // (src/http/lazyCompilers.ts), which load these on a route's first request
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
];

const bundlePath = (pkg) => join(pkg, 'dist', BUNDLE);
const manifestPath = (pkg) => join(pkg, 'dist', MANIFEST);
const mtimeOf = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

/** The bundle is missing, or older than one of the files it was made from (or one is gone). */
export function bundleStale(pkg) {
  const made = mtimeOf(bundlePath(pkg));
  if (made === undefined || !existsSync(manifestPath(pkg))) return true;
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(manifestPath(pkg), 'utf8')).inputs;
  } catch {
    return true;
  }
  return inputs.some((file) => {
    const at = mtimeOf(join(pkg, file));
    return at === undefined || at > made;
  });
}

/**
 * What the launcher runs: the bundle when it is as new as everything it was made from, else the
 * build file by file (dist/server.js); undefined when there is no build at all.
 */
export function launchTarget(pkg) {
  if (existsSync(bundlePath(pkg)) && !bundleStale(pkg)) return bundlePath(pkg);
  const unbundled = join(pkg, 'dist', 'server.js');
  return existsSync(unbundled) ? unbundled : undefined;
}

/** Makes the bundle again when it is stale and esbuild is here. Returns whether it did. */
export async function freshBundle(pkg) {
  if (!existsSync(join(pkg, 'dist', 'server.js')) || !bundleStale(pkg)) return false;
  return bundleService(pkg);
}

/** Is the module at `path` CommonJS? (.cjs, or .js in a package that is not "type": "module") */
function commonJsTest() {
  const typeOfDir = new Map();
  const packageType = (dir) => {
    if (typeOfDir.has(dir)) return typeOfDir.get(dir);
    const manifest = join(dir, 'package.json');
    let type;
    if (existsSync(manifest)) {
      try {
        type = JSON.parse(readFileSync(manifest, 'utf8')).type ?? 'commonjs';
      } catch {
        type = 'commonjs';
      }
    } else type = dirname(dir) === dir ? 'commonjs' : packageType(dirname(dir));
    typeOfDir.set(dir, type);
    return type;
  };
  return (path) => path.endsWith('.cjs') || (path.endsWith('.js') && packageType(dirname(path)) !== 'module');
}

/**
 * Makes dist/server.bundle.js (and its manifest) for the service in `pkg`; false without esbuild.
 * Written beside it then renamed, so that a start at the same moment never reads half a bundle.
 */
export async function bundleService(pkg) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch (error) {
    if (error?.code === 'MODULE_NOT_FOUND') return false;
    throw error;
  }
  const outfile = bundlePath(pkg);
  const outDir = dirname(outfile);
  const isCommonJs = commonJsTest();
  // From the bundle's directory to a file's, as a relative URL (posix separators).
  const fromBundle = (path) => {
    const rel = relative(outDir, path).split(sep).join(posix.sep);
    return rel.startsWith('.') ? rel : `./${rel}`;
  };
  const whereItWas = {
    name: 'where-it-was',
    setup(build) {
      build.onLoad({ filter: /\.(c|m)?js$/ }, (args) => {
        let text = readFileSync(args.path, 'utf8');
        const usesMeta = text.includes('import.meta.url');
        const usesDir = /\b__(dirname|filename)\b/.test(text);
        if (!usesMeta && !usesDir) return undefined;
        if (usesMeta) text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle(args.path))}, import.meta.url).href`);
        if (usesDir && isCommonJs(args.path)) {
          // __cinderBundleDir: the bundle's directory (the banner); this module's own, from it.
          text =
            `var __filename = require('node:path').join(__cinderBundleDir, ${JSON.stringify(relative(outDir, args.path))});` +
            ` var __dirname = require('node:path').dirname(__filename);\n${text}`;
        }
        return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
  // An external package an ES module imports: a CommonJS module of one line that require()s it,
  // so that esbuild's interop gives the importer its exports and Node's ES loader never sees it.
  const requireExternals = {
    name: 'require-externals',
    setup(build) {
      const pattern = new RegExp(`^(${EXTERNAL.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})(/.*)?$`);
      build.onResolve({ filter: pattern }, (args) => {
        if (args.namespace === 'required-external') return { path: args.path, external: true };
        // A dynamic import() stays one: loaded on demand, as an ES module or not.
        if (args.kind === 'dynamic-import' || args.kind === 'require-call') return { path: args.path, external: true };
        return { path: args.path, namespace: 'required-external' };
      });
      build.onLoad({ filter: /.*/, namespace: 'required-external' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
    },
  };
  // The embedded chain: its build (the service's own build imports it by path, the bundle by name),
  // in a chunk of its own that only a start without SOLANA_RPC_URL loads, sharing @solana/kit.
  const localnetBuild = {
    name: 'localnet-build',
    setup(build) {
      build.onResolve({ filter: /^@cinder\/localnet$/ }, () => ({
        path: join(dirname(createRequire(join(pkg, 'package.json')).resolve('@cinder/localnet/package.json')), 'dist', 'index.js'),
      }));
    },
  };
  // Made in a directory of its own, then moved beside dist/server.js: the chunks first, the entry
  // last, so that a start at the same moment finds either the old bundle or the whole new one.
  const staging = join(outDir, `.bundle.${process.pid}.tmp`);
  rmSync(staging, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { [BUNDLE.replace(/\.js$/, '')]: join(pkg, 'dist', 'server.js') },
    absWorkingDir: pkg,
    bundle: true,
    splitting: true,
    chunkNames: `${BUNDLE.replace(/\.js$/, '')}-[hash]`,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: staging,
    write: true,
    metafile: true,
    logLevel: 'error',
    // The service's sources ask for the chain's build by name when bundled (src/server.ts).
    define: { 'import.meta.cinderBundled': 'true' },
    // Not minified: stack traces and profiles keep their names; Node parses the whole file lazily anyway.
    banner: {
      js: [
        "import { createRequire as __cinderCreateRequire } from 'node:module';",
        "import { dirname as __cinderDirname } from 'node:path';",
        "import { fileURLToPath as __cinderFileURLToPath } from 'node:url';",
        // The require() of the CommonJS code inside, and of the packages left outside.
        'const require = __cinderCreateRequire(import.meta.url);',
        'const __cinderBundleDir = __cinderDirname(__cinderFileURLToPath(import.meta.url));',
      ].join(' '),
    },
    plugins: [localnetBuild, requireExternals, whereItWas],
  });
  // Every file it was made from, relative to the package: the staleness check stats each.
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes(':'))
    .map((input) => relative(pkg, join(pkg, input)));
  const made = readdirSync(staging);
  for (const file of made.filter((name) => name !== BUNDLE)) renameSync(join(staging, file), join(outDir, file));
  writeFileSync(`${manifestPath(pkg)}.${process.pid}.tmp`, JSON.stringify({ inputs }));
  renameSync(`${manifestPath(pkg)}.${process.pid}.tmp`, manifestPath(pkg));
  // Never older than what it was made from, even a file dated in the future (a clock set
  // differently where it was written): else it would be made again at every start.
  const newest = Math.max(...inputs.map((file) => mtimeOf(join(pkg, file)) ?? 0));
  if (newest > Date.now()) utimesSync(join(staging, BUNDLE), new Date(), (Math.ceil(newest) + 1) / 1000);
  renameSync(join(staging, BUNDLE), outfile);
  rmSync(staging, { recursive: true, force: true });
  // The chunks of earlier bundles (their names are their content's hash).
  const chunk = new RegExp(`^${BUNDLE.replace(/\.js$/, '').replace('.', '\\.')}-.*\\.js$`);
  for (const name of readdirSync(outDir)) if (chunk.test(name) && !made.includes(name)) rmSync(join(outDir, name), { force: true });
  return true;
}
