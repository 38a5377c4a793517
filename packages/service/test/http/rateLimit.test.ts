/**
 * Rate limits over HTTP (contract, "Rate limits (429)"): per client (API key, else IP; TRUST_PROXY
 * decides about X-Forwarded-For), per route, plus the wallets-per-minute budget of generate that
 * counts n. The same behaviour with the in-memory store and with a real Redis; two instances on
 * one Redis enforce one limit; Redis killed → rate limiting fails open (and a burn with an
 * Idempotency-Key answers 503); Redis back → normal. Last, two real server processes on two
 * ports behind no balancer at all share one limit through Redis.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from '../../src/config.ts';
import { createTestApp, metricValue, type TestApp } from '@cinder/testkit';
import { startTestChain, type TestChain } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

let chain: TestChain;
let redis: TestRedis;
const apps: TestApp[] = [];

before(async () => {
  [chain, redis] = await Promise.all([startTestChain(), startTestRedis()]);
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await chain.close();
  await redis.stop();
});

const LIMITS = { burnPerMin: 3, generatePerMin: 4, walletsPerMin: 10 };

async function newApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const app = await createTestApp({ rateLimit: LIMITS, rateLimitStatusPerMin: 5, ...overrides }, { chain });
  apps.push(app);
  return app;
}

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

let clientCounter = 0;
/** A fresh client address per test, so tests sharing an app (and a Redis) do not share counters. */
const newClient = () => `10.${(++clientCounter >> 8) & 255}.${clientCounter & 255}.7`;

const generate = (app: TestApp, n: number, client: string, headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'GET', url: `/api/generate_wallets?n=${n}`, remoteAddress: client, headers });

const burnBody = { mint: 'not-a-mint', priorityFee: 0, userPrivateKey: 'x' };
const burn = (app: TestApp, client: string, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url: '/api/burn_tokens',
    remoteAddress: client,
    headers: { 'content-type': 'application/json', ...headers },
    payload: burnBody,
  });

function rateHeaders(response: Response) {
  return {
    limit: response.headers['ratelimit-limit'],
    remaining: response.headers['ratelimit-remaining'],
    reset: Number(response.headers['ratelimit-reset']),
  };
}

function assertHeaders(response: Response, limit: number, remaining: number) {
  const h = rateHeaders(response);
  assert.equal(h.limit, String(limit), response.body);
  assert.equal(h.remaining, String(remaining), response.body);
  assert.ok(h.reset >= 1 && h.reset <= 60, `RateLimit-Reset ${h.reset}`);
}

function assert429(response: Response, limit: number, detail: RegExp): number {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${response.headers['retry-after']}`);
  assert.equal(response.headers['ratelimit-limit'], String(limit));
  assert.equal(response.headers['ratelimit-remaining'], response.headers['ratelimit-remaining']);
  assert.equal(Number(response.headers['ratelimit-reset']), retryAfter);
  const body = response.json();
  assert.match(body.detail, detail);
  assert.ok(body.detail.includes(`Retry in ${retryAfter} s.`) || !/Retry in/.test(body.detail));
  assert.deepEqual(body, {
    type: 'urn:cinder:problem:rate-limited',
    title: 'Too Many Requests',
    status: 429,
    detail: body.detail,
    code: 'RATE_LIMITED',
  });
  return retryAfter;
}

/** The behaviour every store must have on one instance. */
function oneInstanceBehaviour(store: 'memory' | 'redis') {
  let app: TestApp;
  before(async () => {
    app = await newApp(store === 'redis' ? { redisUrl: redis.url } : {});
  });

  it('counts burn requests per client: RateLimit-* on each answer, then 429 with Retry-After', async () => {
    const client = newClient();
    for (let i = 1; i <= 3; i++) {
      const response = await burn(app, client);
      assert.equal(response.statusCode, 400, response.body); // the route ran: a bad mint
      assertHeaders(response, 3, 3 - i);
    }
    const refused = await burn(app, client);
    const retryAfter = assert429(refused, 3, /^Rate limit reached: 3 burn requests per minute for this client\. Retry in \d+ s\.$/);
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.json().detail, `Rate limit reached: 3 burn requests per minute for this client. Retry in ${retryAfter} s.`);
    // Another client, and another route for the same client, are not affected.
    assertHeaders(await burn(app, newClient()), 3, 2);
    const other = await generate(app, 1, client);
    assert.equal(other.statusCode, 200);
    assertHeaders(other, 4, 3);
  });

  it('counts generate requests, and a wallets budget that counts n, not requests', async () => {
    const client = newClient();
    // n=4: 6 wallets left of 10 (60 %), 3 requests left of 4 (75 %): the headers describe the wallets.
    const first = await generate(app, 4, client);
    assert.equal(first.statusCode, 200, first.body);
    assertHeaders(first, 10, 6);
    const second = await generate(app, 4, client);
    assertHeaders(second, 10, 2);
    // 2 wallets left: n=3 does not fit and uses nothing.
    const refused = await generate(app, 3, client);
    assert429(refused, 10, /^Wallet budget reached: 10 wallets per minute for this client, 2 left in this window and n=3 asked\. Retry in \d+ s\.$/);
    assert.equal(refused.headers['ratelimit-remaining'], '2');
    // A request the route refuses (bad n) does not touch the budget but counts as a request.
    const invalid = await generate(app, 0, client);
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().code, 'INVALID_N');
    // 4 requests used: the request limit is reached before the budget.
    const overRequests = await generate(app, 2, client);
    assert429(overRequests, 4, /^Rate limit reached: 4 generate_wallets requests per minute for this client\. Retry in \d+ s\.$/);
  });

  it('refuses an n larger than the whole budget with a 429 that says so', async () => {
    const response = await generate(app, 11, newClient());
    assert429(response, 10, /^n=11 is more than the budget of 10 wallets per minute per client\. Ask for fewer wallets\.$/);
  });

  it('limits the other /api routes (status, unknown paths) per client, and leaves /health alone', async () => {
    const client = newClient();
    const signature = '1'.repeat(64);
    for (let i = 1; i <= 5; i++) {
      const response = await app.app.inject({ method: 'GET', url: i % 2 ? `/api/transactions/${signature}` : '/api/nope', remoteAddress: client });
      assert.ok([400, 404].includes(response.statusCode), response.body);
      assertHeaders(response, 5, 5 - i);
    }
    assert429(await app.app.inject({ method: 'GET', url: '/api/nope', remoteAddress: client }), 5, /^Rate limit reached: 5 requests per minute/);
    const health = await app.app.inject({ method: 'GET', url: '/health', remoteAddress: client });
    assert.equal(health.statusCode, 200);
    assert.equal(health.headers['ratelimit-limit'], undefined);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY says otherwise', async () => {
    const client = newClient();
    for (let i = 0; i < 3; i++) await burn(app, client, { 'x-forwarded-for': `203.0.113.${i}` });
    assert429(await burn(app, client, { 'x-forwarded-for': '203.0.113.99' }), 3, /burn requests/);
  });
}

describe('configuration', () => {
  it('reads every limit from its variable, and refuses a limit that is not a positive integer', () => {
    const config = loadConfig({
      RATE_LIMIT_BURN_PER_MIN: '7',
      RATE_LIMIT_GENERATE_PER_MIN: '8',
      RATE_LIMIT_WALLETS_PER_MIN: '9',
      RATE_LIMIT_STATUS_PER_MIN: '11',
    });
    assert.deepEqual(config.rateLimit, { burnPerMin: 7, generatePerMin: 8, walletsPerMin: 9 });
    assert.equal(config.rateLimitStatusPerMin, 11);
    assert.equal(loadConfig({ SOLANA_RPC_URL: 'https://api.devnet.solana.com' }).rateLimitStatusPerMin, 300);
    for (const bad of ['0', '-1', '1.5', 'x']) {
      assert.throws(() => loadConfig({ RATE_LIMIT_STATUS_PER_MIN: bad }), ConfigError, bad);
    }
  });
});

describe('one instance, in-memory store', () => oneInstanceBehaviour('memory'));
describe('one instance, Redis store', () => oneInstanceBehaviour('redis'));

describe('per client', () => {
  it('with TRUST_PROXY, X-Forwarded-For names the client', async () => {
    const app = await newApp({ trustProxy: true });
    const proxy = newClient();
    for (let i = 0; i < 3; i++) assert.equal((await burn(app, proxy, { 'x-forwarded-for': '198.51.100.1' })).statusCode, 400);
    assert429(await burn(app, proxy, { 'x-forwarded-for': '198.51.100.1' }), 3, /burn requests/);
    assertHeaders(await burn(app, proxy, { 'x-forwarded-for': '198.51.100.2' }), 3, 2);
  });

  it('an API key is one client whatever its address; a bad key counts against the address', async () => {
    const app = await newApp({ apiKeys: ['key-one', 'key-two'] });
    for (let i = 0; i < 3; i++) assert.equal((await burn(app, newClient(), { 'x-api-key': 'key-one' })).statusCode, 400);
    assert429(await burn(app, newClient(), { authorization: 'Bearer key-one' }), 3, /burn requests/);
    assertHeaders(await burn(app, newClient(), { 'x-api-key': 'key-two' }), 3, 2);
    // Unauthenticated requests are limited per address: a 401 is refused before its body is read,
    // so it costs a request of the general budget (5), not a burn, and carries that budget's headers.
    const stranger = newClient();
    for (let i = 1; i <= 5; i++) {
      const response = await burn(app, stranger, { 'x-api-key': 'wrong' });
      assert.equal(response.statusCode, 401);
      assertHeaders(response, 5, 5 - i);
    }
    assert429(await burn(app, stranger, { 'x-api-key': 'wrong' }), 5, /^Rate limit reached: 5 requests per minute/);
  });
});

describe('two instances sharing one Redis', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    [a, b] = await Promise.all([newApp({ redisUrl: redis.url }), newApp({ redisUrl: redis.url })]);
  });

  it('enforce one limit: requests spread over A and B count once', async () => {
    const client = newClient();
    assertHeaders(await burn(a, client), 3, 2);
    assertHeaders(await burn(b, client), 3, 1);
    assertHeaders(await burn(a, client), 3, 0);
    assert429(await burn(b, client), 3, /burn requests/);
    assert429(await burn(a, client), 3, /burn requests/);
  });

  it('a key limited on A is limited on B, and the wallets budget is shared too', async () => {
    const [keyed, keyedB] = await Promise.all([
      newApp({ redisUrl: redis.url, apiKeys: ['shared-key'] }),
      newApp({ redisUrl: redis.url, apiKeys: ['shared-key'] }),
    ]);
    for (let i = 0; i < 3; i++) assert.equal((await burn(keyed, newClient(), { 'x-api-key': 'shared-key' })).statusCode, 400);
    assert429(await burn(keyedB, newClient(), { 'x-api-key': 'shared-key' }), 3, /burn requests/);

    const client = newClient();
    assert.equal((await generate(a, 6, client)).statusCode, 200);
    assert429(await generate(b, 5, client), 10, /4 left in this window and n=5 asked/);
    const fits = await generate(b, 4, client);
    assert.equal(fits.statusCode, 200);
    assertHeaders(fits, 10, 0);
  });

  it('Redis killed: rate limits fail open (logged, counted), a burn with an Idempotency-Key answers 503; Redis back: normal', async () => {
    const client = newClient();
    for (let i = 0; i < 3; i++) await burn(a, client);
    assert429(await burn(a, client), 3, /burn requests/);

    await redis.kill();
    try {
      // Let the clients notice the connection is gone.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const open = await burn(a, client);
      // A stalled client would wait for the connection to come back (the test's own timeout); the
      // store's command timeout is 1 s. The margin is for a machine with both cores busy.
      assert.ok(Date.now() - started < 10_000, 'a dead Redis must not stall requests');
      assert.equal(open.statusCode, 400, open.body); // let through: the route ran
      assert.equal(open.headers['ratelimit-limit'], undefined);
      const wallets = await generate(b, 2, client);
      assert.equal(wallets.statusCode, 200, wallets.body);
      assert.equal(wallets.json().wallets.length, 2);

      // A key the idempotency record can be scoped by (its owner), as a real burn has.
      const idempotent = await a.app.inject({
        method: 'POST',
        url: '/api/burn_tokens',
        remoteAddress: client,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'while-redis-is-down' },
        payload: { ...burnBody, userPrivateKey: (await createTestKey()).base58SecretKey },
      });
      assert.equal(idempotent.statusCode, 503, idempotent.body);
      assert.equal(idempotent.headers['retry-after'], '5');
      assert.equal(idempotent.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(idempotent.json(), {
        type: 'urn:cinder:problem:service-unavailable',
        title: 'Service unavailable',
        status: 503,
        detail: 'The idempotency store is unavailable, so a burn with an Idempotency-Key cannot be run safely; nothing was sent. Retry shortly.',
        code: 'SERVICE_UNAVAILABLE',
      });

      assert.match(a.logs(), /rate-limit store unavailable \(Redis\): failing open/);
      assert.match(a.logs(), /idempotency store unavailable \(Redis\) before a burn: answering 503/);
      assert.ok((await metricValue(a, 'cinder_rate_limit_fail_open_total', 'route="burn"')) >= 1);
      assert.ok((await metricValue(a, 'cinder_redis_errors_total', 'operation="rate_limit"')) >= 1);
      assert.ok((await metricValue(a, 'cinder_redis_errors_total', 'operation="idempotency"')) >= 1);
      assert.ok((await metricValue(b, 'cinder_redis_errors_total', 'operation="rate_limit"')) >= 1);
      // /health stays up.
      assert.equal((await a.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
    } finally {
      await redis.restart();
    }

    // Back: both instances reconnect by themselves and limit again (the new Redis is empty).
    const deadline = Date.now() + 15_000;
    const fresh = newClient();
    for (const app of [a, b]) {
      for (;;) {
        const response = await app.app.inject({ method: 'GET', url: '/api/nope', remoteAddress: fresh });
        if (response.headers['ratelimit-limit'] !== undefined) break;
        assert.ok(Date.now() < deadline, 'the app did not reconnect to Redis');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    assertHeaders(await burn(a, client), 3, 2);
    assertHeaders(await burn(b, client), 3, 1);
    const idempotent = await b.app.inject({
      method: 'POST',
      url: '/api/burn_tokens',
      remoteAddress: client,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'after-redis-is-back' },
      payload: burnBody,
    });
    assert.equal(idempotent.statusCode, 400, idempotent.body); // the route ran (a bad mint), not 503
    assert.equal(idempotent.json().code, 'INVALID_MINT');
    assert.match(a.logs(), /Redis connection restored/);
  });
});

describe('several server processes on one machine, one Redis', () => {
  const children: ChildProcess[] = [];
  after(async () => {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });

  async function startServer(port: number): Promise<string> {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../src/server.ts', import.meta.url))], {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        REDIS_URL: redis.url,
        SERVER_SECRET: 'cinder-test-server-secret-not-for-production',
        SOLANA_RPC_URL: chain.localnet.rpcUrl,
        RATE_LIMIT_GENERATE_PER_MIN: '4',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const match = /Cinder listening on (http:\/\/\S+)/.exec(output);
      if (match) return match[1]!;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('N instances on a port range share one limit (any load balancer in front)', async () => {
    const free = async () => {
      const { createServer } = await import('node:net');
      return new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as { port: number };
          server.close(() => resolve(port));
        });
      });
    };
    const urls = await Promise.all([free().then(startServer), free().then(startServer)]);
    // A client whose requests a round-robin balancer spreads over both instances.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${urls[i % 2]}/api/generate_wallets?n=1`);
      statuses.push(response.status);
      if (response.status === 200) assert.equal(response.headers.get('ratelimit-remaining'), String(3 - i));
      else {
        assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.ok(Number(response.headers.get('retry-after')) >= 1);
      }
      await response.arrayBuffer();
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  });
});
