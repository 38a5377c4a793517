/**
 * The launcher runs the service's build as one file (packages/service/bin/bundle.js): esbuild
 * bundles dist/server.js with the packages it imports. These check what a bundler could get
 * wrong and a start would not show at once:
 * - code that finds files beside itself (`import.meta.url` in an ES module, `__dirname` in
 *   CommonJS) still finds them: the guide's pages, the web app, Swagger UI's assets, the
 *   package.json the document's version comes from;
 * - what stays outside (the wallet pool's worker threads, sodium-native) still loads;
 * - a bundle older than any file it was made from, or made from a file that is gone, is stale, and
 *   the launcher then runs the build file by file until it is made again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SERVICE = fileURLToPath(new URL('../../packages/service/', import.meta.url));

/** The launcher's module (plain JavaScript, no declarations: it runs before any build exists). */
const bundler = (await import(pathToFileURL(join(SERVICE, 'bin', 'bundle.js')).href)) as {
  BUNDLE: string;
  bundleService: (pkg: string) => Promise<boolean>;
  freshBundle: (pkg: string) => Promise<boolean>;
  bundleStale: (pkg: string) => boolean;
  launchTarget: (pkg: string) => string | undefined;
};

/** A package whose build reads a file beside an ES module of its own and beside a CommonJS dependency. */
function fixture(): string {
  const pkg = `${mkdtempSync(join(tmpdir(), 'cinder-bundle-'))}/`;
  mkdirSync(join(pkg, 'dist', 'sub'), { recursive: true });
  mkdirSync(join(pkg, 'node_modules', 'beside', 'lib'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), '{"type":"module"}');
  writeFileSync(join(pkg, 'dist', 'server.js'), "import beside from 'beside';\nimport { own } from './sub/own.js';\nexport const found = { own, beside };\n");
  writeFileSync(join(pkg, 'dist', 'sub', 'own.js'), "import { readFileSync } from 'node:fs';\nexport const own = readFileSync(new URL('./own.txt', import.meta.url), 'utf8');\n");
  writeFileSync(join(pkg, 'dist', 'sub', 'own.txt'), 'beside the ES module');
  writeFileSync(join(pkg, 'node_modules', 'beside', 'package.json'), '{"name":"beside","main":"lib/index.js"}');
  writeFileSync(
    join(pkg, 'node_modules', 'beside', 'lib', 'index.js'),
    "const { join } = require('node:path');\nmodule.exports = require('node:fs').readFileSync(join(__dirname, '..', 'data.txt'), 'utf8');\n",
  );
  writeFileSync(join(pkg, 'node_modules', 'beside', 'data.txt'), 'beside the CommonJS module');
  return pkg;
}

it('bundles into one file that finds what its modules found beside them, and is stale when a file it was made from is newer or gone', async () => {
  const pkg = fixture();
  try {
    assert.equal(bundler.bundleStale(pkg), true, 'no bundle yet');
    assert.equal(bundler.launchTarget(pkg), join(pkg, 'dist', 'server.js'), 'without a bundle: file by file');
    assert.equal(await bundler.freshBundle(pkg), true);
    assert.equal(bundler.bundleStale(pkg), false);
    assert.equal(await bundler.freshBundle(pkg), false, 'nothing to do the second time');
    const bundle = join(pkg, 'dist', bundler.BUNDLE);
    assert.equal(bundler.launchTarget(pkg), bundle);
    const text = readFileSync(bundle, 'utf8');
    assert.doesNotMatch(text, /^import .* from ["'](beside|\.\/sub\/own\.js)["']/m, 'both inside the bundle');
    const { found } = (await import(pathToFileURL(bundle).href)) as { found: { own: string; beside: string } };
    assert.deepEqual(found, { own: 'beside the ES module', beside: 'beside the CommonJS module' });

    // A dependency updated (its file newer than the bundle): stale, file by file until bundled again.
    const later = new Date(Date.now() + 5000);
    utimesSync(join(pkg, 'node_modules', 'beside', 'lib', 'index.js'), later, later);
    assert.equal(bundler.bundleStale(pkg), true);
    assert.equal(bundler.launchTarget(pkg), join(pkg, 'dist', 'server.js'));
    assert.equal(await bundler.freshBundle(pkg), true);
    assert.equal(bundler.bundleStale(pkg), false);

    // A file it was made from removed: stale.
    rmSync(join(pkg, 'dist', 'sub', 'own.js'));
    assert.equal(bundler.bundleStale(pkg), true);
  } finally {
    rmSync(pkg, { recursive: true, force: true });
  }
});

/** Starts a file of the service's build with an RPC URL nothing answers (no chain is needed here); its URL once it listens. */
async function startBuild(file: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [file], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'error', SOLANA_RPC_URL: 'http://127.0.0.1:9', STATE_DIR: mkdtempSync(join(tmpdir(), 'cinder-bundle-state-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 120_000;
  let url: string | undefined;
  while (!(url = /^Cinder listening on (http:\/\/\S+)$/m.exec(output)?.[1])) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the build did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

it("the service's bundle is what the launcher runs, and it serves the guide, the web app, Swagger UI's files, the document's version and a pooled wallet batch", async () => {
  await bundler.freshBundle(SERVICE);
  const bundle = join(SERVICE, 'dist', bundler.BUNDLE);
  assert.equal(bundler.launchTarget(SERVICE), bundle);
  const server = await startBuild(bundle);
  try {
    const get = async (path: string) => {
      const response = await fetch(`${server.url}${path}`);
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    };
    const guide = await get('/guide');
    assert.equal(guide.status, 200);
    assert.match(guide.text, /<title>[^<]+· Cinder<\/title>/);
    const page = await get('/');
    assert.equal(page.status, 200);
    const script = /<script[^>]+src="([^"]+)"/.exec(page.text)?.[1];
    assert.ok(script, page.text);
    const app = await get(script);
    assert.equal(app.status, 200);
    assert.ok(app.text.length > 1000, 'the web app bundle, read from the web package');
    const css = await get('/docs/static/swagger-ui.css');
    assert.equal(css.status, 200);
    assert.match(css.type ?? '', /^text\/css/);
    assert.match(css.text, /swagger-ui/);
    const document = JSON.parse((await get('/openapi.json')).text) as { info: { version: string } };
    const { version } = JSON.parse(readFileSync(join(SERVICE, 'package.json'), 'utf8')) as { version: string };
    assert.equal(document.info.version, version);
    // Large enough to go to the wallet pool's worker threads (dist/wallets/worker.js, outside the bundle).
    const wallets = await get('/api/generate_wallets?n=100');
    assert.equal(wallets.status, 200, wallets.text);
    const body = JSON.parse(wallets.text) as { wallets: string[] };
    assert.equal(new Set(body.wallets).size, 100);
  } finally {
    await server.stop();
  }
});
