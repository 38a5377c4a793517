/**
 * API keys over HTTP (contract, "Authentication (401)"): off without API_KEYS; with it, every /api
 * request needs a key as `Authorization: Bearer` or `X-API-Key`, compared in constant time, plain
 * or stored as `sha256:<hex>`; 401 problem+json with `WWW-Authenticate: Bearer`. Keys never reach
 * the log.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, describe, it, mock } from 'node:test';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createApiKeyVerifier, isApiPath } from '../../src/http/auth.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { startTestChain, type TestChain } from '@cinder/testkit';

const PLAIN_KEY = 'ck_live_0123456789abcdefghijklmnopqrstuv';
const HASHED_KEY = 'ck_hashed_ZYXWVUTSRQPONMLKJIHGFEDCBA98765';
const HASHED_ENTRY = `sha256:${createHash('sha256').update(HASHED_KEY).digest('hex')}`;
const WRONG_SAME_LENGTH = 'ck_live_0123456789abcdefghijklmnopqrstuw';

let chain: TestChain;
let open: TestApp;
let guarded: TestApp;

before(async () => {
  chain = await startTestChain();
  open = await createTestApp({}, { chain });
  guarded = await createTestApp({ apiKeys: [PLAIN_KEY, HASHED_ENTRY] }, { chain });
});
after(async () => {
  await open.close();
  await guarded.close();
  await chain.close();
});

const MISSING_DETAIL = 'This API requires an API key: send it as Authorization: Bearer <key> or X-API-Key: <key>.';
const INVALID_DETAIL = 'The API key is not valid.';

function assert401(response: { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown }, detail: string) {
  assert.equal(response.statusCode, 401, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(response.headers['www-authenticate'], 'Bearer');
  assert.deepEqual(response.json(), {
    type: 'urn:cinder:problem:unauthorized',
    title: 'Unauthorized',
    status: 401,
    detail,
    code: 'UNAUTHORIZED',
  });
}

const generate = (app: TestApp, headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'GET', url: '/api/generate_wallets?n=1', headers });

describe('API keys off (no API_KEYS)', () => {
  it('serves /api without any key, as in the specification examples', async () => {
    const response = await generate(open);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['www-authenticate'], undefined);
    assert.equal(response.json().wallets.length, 1);
  });

  it('ignores a key that is sent anyway', async () => {
    const response = await generate(open, { authorization: 'Bearer whatever' });
    assert.equal(response.statusCode, 200, response.body);
  });
});

describe('API keys on', () => {
  it('accepts the right key as Authorization: Bearer (any case of the scheme) and as X-API-Key', async () => {
    const variants: Record<string, string>[] = [
      { authorization: `Bearer ${PLAIN_KEY}` },
      { authorization: `bearer ${PLAIN_KEY}` },
      { 'x-api-key': PLAIN_KEY },
    ];
    for (const headers of variants) {
      const response = await generate(guarded, headers);
      assert.equal(response.statusCode, 200, `${JSON.stringify(Object.keys(headers))}: ${response.body}`);
    }
  });

  it('accepts a key configured as sha256:<hex>, and not the hash itself', async () => {
    assert.equal((await generate(guarded, { authorization: `Bearer ${HASHED_KEY}` })).statusCode, 200);
    assert.equal((await generate(guarded, { 'x-api-key': HASHED_KEY })).statusCode, 200);
    assert401(await generate(guarded, { 'x-api-key': HASHED_ENTRY }), INVALID_DETAIL);
    assert401(await generate(guarded, { 'x-api-key': HASHED_ENTRY.slice('sha256:'.length) }), INVALID_DETAIL);
  });

  it('401 without a key, with WWW-Authenticate: Bearer and the RateLimit-* headers', async () => {
    const response = await generate(guarded);
    assert401(response, MISSING_DETAIL);
    assert.equal(response.headers['ratelimit-limit'], String(guarded.config.rateLimit.generatePerMin));
    assert.match(String(response.headers['ratelimit-remaining']), /^\d+$/);
    assert.match(String(response.headers['ratelimit-reset']), /^\d+$/);
    assert.ok(response.headers['x-request-id']);
  });

  it('401 for an empty key, a wrong key of the same length, shorter, longer, and 8 KiB long', async () => {
    assert401(await generate(guarded, { authorization: 'Bearer ' }), MISSING_DETAIL);
    assert401(await generate(guarded, { 'x-api-key': '' }), MISSING_DETAIL);
    for (const key of [WRONG_SAME_LENGTH, PLAIN_KEY.slice(0, 10), `${PLAIN_KEY}x`, 'k'.repeat(8192), PLAIN_KEY.toUpperCase()]) {
      assert401(await generate(guarded, { authorization: `Bearer ${key}` }), INVALID_DETAIL);
      assert401(await generate(guarded, { 'x-api-key': key }), INVALID_DETAIL);
    }
  });

  it('401 for other schemes: Basic, or the key without "Bearer"', async () => {
    assert401(await generate(guarded, { authorization: `Basic ${Buffer.from(`u:${PLAIN_KEY}`).toString('base64')}` }), MISSING_DETAIL);
    assert401(await generate(guarded, { authorization: PLAIN_KEY }), MISSING_DETAIL);
  });

  it('guards every /api route, including unknown ones, before the body is read', async () => {
    const burn = await guarded.app.inject({
      method: 'POST',
      url: '/api/burn_tokens',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    assert401(burn, MISSING_DETAIL);
    assert.equal(burn.headers['ratelimit-limit'], String(guarded.config.rateLimit.burnPerMin));
    assert401(await guarded.app.inject({ method: 'GET', url: `/api/transactions/${'1'.repeat(64)}` }), MISSING_DETAIL);
    assert401(await guarded.app.inject({ method: 'GET', url: '/api/no_such_route' }), MISSING_DETAIL);
    assert401(await guarded.app.inject({ method: 'GET', url: '/API/generate_wallets?n=1' }), MISSING_DETAIL);
    // With a key the same requests reach their routes.
    const authorized = { authorization: `Bearer ${PLAIN_KEY}` };
    const badBody = await guarded.app.inject({
      method: 'POST',
      url: '/api/burn_tokens',
      headers: { 'content-type': 'application/json', ...authorized },
      payload: '{not json',
    });
    assert.equal(badBody.statusCode, 400);
    assert.equal(badBody.json().code, 'INVALID_JSON');
    const unknown = await guarded.app.inject({ method: 'GET', url: '/api/no_such_route', headers: authorized });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'NOT_FOUND');
  });

  it('leaves /health and /ready open', async () => {
    const health = await guarded.app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await guarded.app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 200, ready.body);
  });

  it('never logs a key, right or wrong', async () => {
    await generate(guarded, { authorization: `Bearer ${PLAIN_KEY}` });
    await generate(guarded, { 'x-api-key': HASHED_KEY });
    await generate(guarded, { 'x-api-key': WRONG_SAME_LENGTH });
    // An error path that logs: a 500 would log the error; a 404 logs the request line.
    await guarded.app.inject({ method: 'GET', url: '/api/nope', headers: { authorization: `Bearer ${WRONG_SAME_LENGTH}` } });
    const logs = guarded.logs();
    assert.ok(logs.length > 0);
    for (const secret of [PLAIN_KEY, HASHED_KEY, WRONG_SAME_LENGTH]) assert.ok(!logs.includes(secret), 'a key reached the log');
  });
});

describe('the logger', () => {
  it('redacts Authorization and X-API-Key if request headers ever reach a log line', () => {
    let out = '';
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _e, cb) => ((out += chunk.toString('utf8')), cb()) }));
    const headers = { authorization: `Bearer ${PLAIN_KEY}`, 'x-api-key': HASHED_KEY, accept: 'application/json' };
    logger.info({ req: { headers } }, 'request');
    logger.info({ headers }, 'headers');
    assert.ok(!out.includes(PLAIN_KEY) && !out.includes(HASHED_KEY), out);
    const lines = out.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines[0].req.headers, { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'application/json' });
    assert.deepEqual(lines[1].headers, { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'application/json' });
  });
});

describe('createApiKeyVerifier', () => {
  it('compares the SHA-256 digests of every entry, whatever the key and its length (no early exit)', () => {
    const verifier = createApiKeyVerifier(['first-key', 'second', `sha256:${createHash('sha256').update('third').digest('hex')}`]);
    const spy = mock.method(crypto, 'timingSafeEqual');
    syncBuiltinESMExports();
    try {
      for (const [key, valid] of [
        ['first-key', true],
        ['second', true],
        ['third', true],
        ['first-kex', false],
        ['x', false],
        ['y'.repeat(1000), false],
      ] as const) {
        spy.mock.resetCalls();
        assert.equal(verifier.verify(key) !== null, valid, key);
        assert.equal(spy.mock.callCount(), 3, `${key}: every entry is compared`);
        for (const call of spy.mock.calls) {
          assert.equal((call.arguments[0] as Buffer).length, 32);
          assert.equal((call.arguments[1] as Buffer).length, 32);
        }
      }
    } finally {
      spy.mock.restore();
      syncBuiltinESMExports();
    }
  });

  it('gives each key a stable id that is not the key', () => {
    const verifier = createApiKeyVerifier(['alpha', 'beta']);
    const id = verifier.verify('alpha');
    assert.match(id!, /^[0-9a-f]{24}$/);
    assert.equal(verifier.verify('alpha'), id);
    assert.notEqual(verifier.verify('beta'), id);
    assert.equal(verifier.verify('gamma'), null);
    // The same key configured as its hash has the same id.
    const hashed = createApiKeyVerifier([`sha256:${createHash('sha256').update('alpha').digest('hex')}`]);
    assert.equal(hashed.verify('alpha'), id);
  });

  it('knows which paths are /api', () => {
    for (const path of ['/api', '/api/', '/api/burn_tokens', '/API/x', '//api/x', '/api?x=1']) assert.ok(isApiPath(path), path);
    for (const path of ['/health', '/ready', '/metrics', '/apix', '/docs', '/openapi.json']) assert.ok(!isApiPath(path), path);
  });
});

describe('start-up warning', () => {
  it('warns loudly when listening on a non-loopback address without API_KEYS', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../src/server.ts', import.meta.url))], {
      env: {
        PATH: process.env.PATH,
        HOST: '0.0.0.0',
        PORT: '0',
        // No chain is needed to start; nothing in this test calls it.
        SOLANA_RPC_URL: 'http://127.0.0.1:9',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    // 'close': the process has exited AND both pipes are read to the end. Standard output and
    // standard error are two pipes read independently, so "Cinder listening on" (stdout) can
    // arrive before a warning written earlier to stderr: only complete output is checked.
    const closed = new Promise((resolve) => child.once('close', resolve));
    try {
      const deadline = Date.now() + 60_000;
      while (!output.includes('Cinder listening on') && child.exitCode === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGTERM');
      await closed;
      assert.match(output, /Cinder listening on/, output);
      const warning = output.split('\n').find((line) => line.includes('non-loopback'));
      assert.ok(warning, output);
      const entry = JSON.parse(warning) as { level: number; msg: string; host: string };
      assert.equal(entry.level, 40);
      assert.equal(entry.host, '0.0.0.0');
      assert.match(entry.msg, /^WARNING: listening on a non-loopback address without API_KEYS/);
      assert.match(output, /^cinder: WARNING: listening on 0\.0\.0\.0 \(not loopback\) without API_KEYS/m);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
    }
  });
});
