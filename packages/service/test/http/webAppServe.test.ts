/**
 * The web app's files and how they are served: the committed bundle (web/bundle/) is exactly what
 * its sources build to (so it can never drift from them), and the page and its assets carry the
 * strict Content-Security-Policy, nosniff and no-referrer, with the server's settings in <meta> tags.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { BUNDLE_FILES, buildWebApp } from '../../web/build.ts';
import { clusterOf, WEB_APP_CSP } from '../../src/http/routes/webApp.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const BUNDLE = fileURLToPath(new URL('../../web/bundle/', import.meta.url));

describe('the committed bundle', () => {
  it('is byte for byte what web/build.ts makes from the sources (run `npm run build:web` after changing web/)', { timeout: 120_000 }, async () => {
    const out = await mkdtemp(join(tmpdir(), 'cinder-web-build-'));
    try {
      await buildWebApp(out);
      for (const name of BUNDLE_FILES) {
        const [built, committed] = await Promise.all([readFile(join(out, name)), readFile(join(BUNDLE, name))]);
        assert.ok(built.equals(committed), `web/bundle/${name} differs from a fresh build: run npm run build:web`);
      }
      // The same sources, built twice, give the same bytes (no timestamps, no absolute paths).
      const again = await mkdtemp(join(tmpdir(), 'cinder-web-build-'));
      await buildWebApp(again);
      for (const name of BUNDLE_FILES) assert.ok((await readFile(join(again, name))).equals(await readFile(join(out, name))), name);
      await rm(again, { recursive: true, force: true });
      assert.doesNotMatch(await readFile(join(out, 'app.js'), 'utf8'), /\/work\/|\/home\/|\/tmp\//, 'no machine paths in the bundle');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('stays small: the JavaScript is under 20 KB gzipped', async () => {
    const size = gzipSync(await readFile(join(BUNDLE, 'app.js')), { level: 9 }).length;
    assert.ok(size < 20 * 1024, `app.js is ${size} bytes gzipped`);
  });
});

describe('GET / and the assets', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => t.close());

  it('serves the page and each asset with the strict headers', async () => {
    assert.equal(
      WEB_APP_CSP,
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'none'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    for (const [path, type] of [
      ['/', 'text/html; charset=utf-8'],
      ['/app/app.js', 'text/javascript; charset=utf-8'],
      ['/app/app.css', 'text/css; charset=utf-8'],
      ['/app/icon.svg', 'image/svg+xml'],
    ] as const) {
      const response = await t.app.inject({ method: 'GET', url: path });
      assert.equal(response.statusCode, 200, path);
      assert.equal(response.headers['content-type'], type, path);
      assert.equal(response.headers['content-security-policy'], WEB_APP_CSP, path);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', path);
      assert.equal(response.headers['referrer-policy'], 'no-referrer', path);
      assert.equal(response.headers['x-frame-options'], 'DENY', path);
      const etag = response.headers.etag as string;
      const again = await t.app.inject({ method: 'GET', url: path, headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304, path);
      assert.equal(again.headers['content-security-policy'], WEB_APP_CSP, path);
    }
    const page = (await t.app.inject({ method: 'GET', url: '/' })).body;
    assert.match(page, /<script type="module" src="\/app\/app.js"><\/script>/);
    assert.doesNotMatch(page.replace('<script type="module" src="/app/app.js"></script>', ''), /<script/, 'no inline script');
    assert.doesNotMatch(page, /https?:\/\/(?!127\.0\.0\.1)/, 'nothing from another origin');
    assert.match(page, /<meta name="cinder-api-key" content="none">/);
    assert.match(page, /<meta name="cinder-cluster" content="">/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode < 400, true, 'the docs stay at /docs');
    assert.equal((await t.app.inject({ method: 'GET', url: '/app/nothing.js' })).statusCode, 404);
  });

  it('tells the page that API keys are on, without telling it a key', async () => {
    const keyed = await createTestApp({ apiKeys: ['secret-key-1'] }, { chain: t.chain });
    try {
      const page = (await keyed.app.inject({ method: 'GET', url: '/' })).body;
      assert.match(page, /<meta name="cinder-api-key" content="required">/);
      assert.doesNotMatch(page, /secret-key-1/);
      assert.equal((await keyed.app.inject({ method: 'GET', url: '/app/app.js' })).statusCode, 200, 'the page itself needs no key');
    } finally {
      await keyed.close();
    }
  });

  it('links to an explorer only for a public cluster', async () => {
    // By the node's genesis hash, whatever the provider's URL.
    assert.equal(clusterOf('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d'), 'mainnet-beta');
    assert.equal(clusterOf('EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG'), 'devnet');
    assert.equal(clusterOf('4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY'), 'testnet');
    assert.equal(clusterOf(await t.chain.rpc.getGenesisHash().send()), null, 'the embedded chain');
    assert.equal(clusterOf(null), null, 'an unreachable node');
    assert.equal(clusterOf('constructor'), null);
    assert.match((await t.app.inject({ method: 'GET', url: '/' })).body, /<meta name="cinder-cluster" content="">/);
  });
});
