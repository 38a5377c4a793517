/**
 * GET /metrics (Prometheus text format): who may read it (loopback only, or METRICS_TOKEN), and
 * what it counts: requests by route and status, latency, burns by outcome, lamports reclaimed,
 * wallets generated, RPC calls and errors by method, rate-limit rejections.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder } from '@solana/kit';
import { buildApp, type CinderApp } from '../../src/app.ts';
import { createChainAdapter } from '../../src/chain/chainAdapter.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, mintTokens, startTestChain, type TestChain } from '@cinder/testkit';

let chain: TestChain;
let app: TestApp;
let guarded: TestApp;

before(async () => {
  chain = await startTestChain();
  [app, guarded] = await Promise.all([
    createTestApp({ rateLimit: { burnPerMin: 1000, generatePerMin: 1000, walletsPerMin: 1_000_000 }, apiKeys: ['api-key'] }, { chain }),
    createTestApp({ metricsToken: 'metrics-secret-token' }, { chain }),
  ]);
});
after(async () => {
  await Promise.all([app.close(), guarded.close()]);
  await chain.close();
});

async function scrape(target: TestApp | CinderApp): Promise<string> {
  const instance = 'app' in target ? target.app : target;
  const response = await instance.inject({ method: 'GET', url: '/metrics' });
  assert.equal(response.statusCode, 200, response.body);
  return response.body;
}

function value(text: string, sample: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('GET /metrics access', () => {
  it('is open to a direct loopback client, in the Prometheus text format, without an API key', async () => {
    const response = await app.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['ratelimit-limit'], undefined);
    for (const name of [
      'cinder_http_requests_total',
      'cinder_http_request_duration_seconds',
      'cinder_burns_total',
      'cinder_lamports_reclaimed_total',
      'cinder_wallets_generated_total',
      'cinder_rpc_calls_total',
      'cinder_rpc_errors_total',
      'cinder_rate_limit_rejections_total',
      'cinder_redis_errors_total',
      'cinder_process_resident_memory_bytes',
    ]) {
      assert.match(response.body, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
  });

  it('403 to anyone else without METRICS_TOKEN, and to a proxied request from loopback', async () => {
    const expected = {
      type: 'urn:cinder:problem:forbidden',
      title: 'Forbidden',
      status: 403,
      detail: 'GET /metrics is served to loopback clients only; set METRICS_TOKEN to read it from elsewhere.',
      code: 'FORBIDDEN',
    };
    for (const request of [
      { remoteAddress: '10.1.2.3' },
      { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } },
      { remoteAddress: '127.0.0.1', headers: { forwarded: 'for=203.0.113.9' } },
    ]) {
      const response = await app.app.inject({ method: 'GET', url: '/metrics', ...request });
      assert.equal(response.statusCode, 403, JSON.stringify(request));
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(response.json(), expected);
    }
  });

  it('with METRICS_TOKEN: the token from anywhere, 401 with WWW-Authenticate: Bearer otherwise (loopback too)', async () => {
    const ok = await guarded.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { authorization: 'Bearer metrics-secret-token' } });
    assert.equal(ok.statusCode, 200);
    for (const headers of [
      {},
      { authorization: 'Bearer metrics-secret-tokeN' },
      { authorization: 'Bearer short' },
      { authorization: `Bearer ${'x'.repeat(5000)}` },
      { authorization: 'metrics-secret-token' },
    ]) {
      const response = await guarded.app.inject({ method: 'GET', url: '/metrics', headers });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      assert.equal(response.headers['www-authenticate'], 'Bearer');
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(response.json(), {
        type: 'urn:cinder:problem:unauthorized',
        title: 'Unauthorized',
        status: 401,
        detail: 'GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.',
        code: 'UNAUTHORIZED',
      });
    }
    assert.ok(!guarded.logs().includes('metrics-secret-token'));
  });
});

describe('what /metrics counts', () => {
  const auth = { 'x-api-key': 'api-key' };

  it('requests by route and status, with latency; unknown routes as "unmatched"', async () => {
    await app.app.inject({ method: 'GET', url: '/api/generate_wallets?n=3', headers: auth });
    await app.app.inject({ method: 'GET', url: '/api/generate_wallets?n=2', headers: auth });
    await app.app.inject({ method: 'GET', url: '/api/generate_wallets?n=x', headers: auth });
    await app.app.inject({ method: 'GET', url: '/api/generate_wallets?n=1' }); // 401
    await app.app.inject({ method: 'GET', url: '/no/such/thing/12345' });
    const text = await scrape(app);
    assert.equal(value(text, 'cinder_http_requests_total{method="GET",route="/api/generate_wallets",status="200"}'), 2);
    assert.equal(value(text, 'cinder_http_requests_total{method="GET",route="/api/generate_wallets",status="400"}'), 1);
    assert.equal(value(text, 'cinder_http_requests_total{method="GET",route="/api/generate_wallets",status="401"}'), 1);
    assert.equal(value(text, 'cinder_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
    assert.ok(!text.includes('12345'), 'raw paths are not labels');
    assert.equal(value(text, 'cinder_http_request_duration_seconds_count{method="GET",route="/api/generate_wallets",status="200"}'), 2);
    assert.equal(value(text, 'cinder_wallets_generated_total'), 5);
  });

  it('burns by outcome, lamports reclaimed, RPC calls by method', async () => {
    const { signer, secretKey } = await createFundedSigner(chain);
    const mint = await createTestMint(chain, signer, { decimals: 6 });
    const ata = await createAta(chain, signer, signer.address, mint);
    await mintTokens(chain, signer, mint, ata, 10n);
    const body = { mint, priorityFee: 0, userPrivateKey: getBase58Decoder().decode(secretKey) };
    const request = { method: 'POST' as const, url: '/api/burn_tokens', headers: { 'content-type': 'application/json', ...auth }, payload: body };
    const burned = await app.app.inject({ ...request, headers: { ...request.headers, 'idempotency-key': 'metrics-burn' } });
    assert.equal(burned.statusCode, 200, burned.body);
    // A replay is not a second burn.
    const replay = await app.app.inject({ ...request, headers: { ...request.headers, 'idempotency-key': 'metrics-burn' } });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const rejected = await app.app.inject(request); // the account is closed now
    assert.equal(rejected.statusCode, 400);
    const text = await scrape(app);
    assert.equal(value(text, 'cinder_burns_total{outcome="success"}'), 1);
    assert.equal(value(text, 'cinder_burns_total{outcome="rejected"}'), 1);
    assert.equal(value(text, 'cinder_lamports_reclaimed_total'), 2_039_280);
    assert.equal(value(text, 'cinder_rpc_calls_total{method="sendTransaction"}'), 1);
    assert.ok(value(text, 'cinder_rpc_calls_total{method="getTokenAccountsByOwner"}') >= 2);
    assert.ok(value(text, 'cinder_rpc_duration_seconds_count{method="simulateTransaction"}') >= 1);
    assert.equal(value(text, 'cinder_idempotency_total{result="replayed"}'), 1);
  });

  it('rate-limit rejections by route and limit', async () => {
    const limited = await createTestApp({ rateLimit: { burnPerMin: 1, generatePerMin: 5, walletsPerMin: 3 } }, { chain });
    try {
      // A body that passes validation: only those count against the burn budget (src/http/rateLimit.ts).
      const payload = { mint: 'not-a-mint', priorityFee: 0, userPrivateKey: 'x' };
      const burn = () => limited.app.inject({ method: 'POST', url: '/api/burn_tokens', headers: { 'content-type': 'application/json' }, payload });
      await burn();
      assert.equal((await burn()).statusCode, 429);
      assert.equal((await limited.app.inject({ method: 'GET', url: '/api/generate_wallets?n=4' })).statusCode, 429);
      const text = await scrape(limited);
      assert.equal(value(text, 'cinder_rate_limit_rejections_total{route="burn",limit="requests"}'), 1);
      assert.equal(value(text, 'cinder_rate_limit_rejections_total{route="generate",limit="wallets"}'), 1);
      assert.equal(value(text, 'cinder_burns_total{outcome="rejected"}'), 1, 'a 429 is not a burn');
    } finally {
      await limited.close();
    }
  });

  it('RPC errors by method when the node does not answer', async () => {
    const config = Object.freeze({ ...loadConfig({ LOG_LEVEL: 'silent' }) });
    const logger = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));
    const wallets = createWalletGenerator({ vanityTimeoutMs: 1000 });
    const dead = createChainAdapter({ rpcUrl: 'http://127.0.0.1:9', commitment: 'confirmed', callTimeoutMs: 500, maxReadAttempts: 1 });
    const broken = await buildApp({ config, logger, chain: dead, wallets });
    try {
      assert.equal((await broken.inject({ method: 'GET', url: '/ready' })).statusCode, 503);
      const status = await broken.inject({ method: 'GET', url: `/api/transactions/${'1'.repeat(64)}` });
      assert.equal(status.statusCode, 503, status.body);
      const text = await scrape(broken);
      assert.equal(value(text, 'cinder_rpc_calls_total{method="healthCheck"}'), 1);
      assert.equal(value(text, 'cinder_rpc_errors_total{method="healthCheck"}'), 1);
      assert.equal(value(text, 'cinder_rpc_errors_total{method="getSignatureStatuses"}'), 1);
    } finally {
      await broken.close();
      await wallets.close();
    }
  });
});
