/**
 * How the service serves the web app: the page and its assets carry the strict
 * Content-Security-Policy, nosniff and no-referrer, with the server's settings in <meta> tags.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clusterOf, WEB_APP_CSP } from '../../src/http/routes/webApp.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';

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
