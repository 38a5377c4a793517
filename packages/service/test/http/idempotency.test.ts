/**
 * Idempotency-Key on POST /api/burn_tokens, against the embedded chain, with the in-memory store
 * and with a real Redis (where a second instance sees the first one's records):
 * sequential duplicates replay the first answer and the chain shows one burn; concurrent
 * duplicates → one 200 + one 409; another body → 400; answers where nothing was sent are not
 * stored; Redis never holds the body (it carries the private key).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import type { Config } from '../../src/config.ts';
import { createMemoryIdempotencyStore } from '../../src/store/idempotencyStore.ts';
import { createTestApp, metricValue, type TestApp } from '@cinder/testkit';
import { createAta, createTestMint, createTokenHolder, mintTokens, startTestChain, type TestChain, type TokenHolder } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

let chain: TestChain;
let redis: TestRedis;
const apps: TestApp[] = [];
const secretsUsed: string[] = [];

before(async () => {
  [chain, redis] = await Promise.all([startTestChain(), startTestRedis()]);
});
after(async () => {
  for (const app of apps) {
    const logs = app.logs();
    for (const secret of secretsUsed) assert.ok(!logs.includes(secret), 'a private key reached the log');
  }
  await Promise.all(apps.map((a) => a.close()));
  await chain.close();
  await redis.stop();
});

async function newApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const app = await createTestApp(overrides, { chain });
  apps.push(app);
  return app;
}

type Holder = TokenHolder;

async function createHolder(amount = 1_000_000n): Promise<Holder> {
  const holder = await createTokenHolder(chain, { amount, decimals: 6 });
  secretsUsed.push(holder.key);
  return holder;
}

const supplyOf = async (mint: Address) => (await fetchMint(chain.rpc, mint)).data.supply;

let keyCounter = 0;
const newKey = () => `idem-${process.pid}-${++keyCounter}-${Math.random().toString(36).slice(2)}`;

function burn(app: TestApp, body: unknown, idempotencyKey?: string, headers: Record<string, string> = {}) {
  return app.app.inject({
    method: 'POST',
    url: '/api/burn_tokens',
    headers: { 'content-type': 'application/json', ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }), ...headers },
    payload: JSON.stringify(body),
  });
}

const bodyOf = (h: Holder, priorityFee = 0.000001) => ({ mint: h.mint, priorityFee, userPrivateKey: h.key });

function assertProblem(response: Awaited<ReturnType<typeof burn>>, status: number, code: string, title: string, detail: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.deepEqual(response.json(), {
    type: `urn:cinder:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    detail,
    code,
  });
}

const REUSED_DETAIL = 'This Idempotency-Key was used with a different request body in the last 24 hours. Use a new key for a new request.';
const IN_PROGRESS_DETAIL = 'A request with this Idempotency-Key is still in progress. Retry when it has finished to get its answer.';

function behaviour(store: 'memory' | 'redis') {
  let app: TestApp;
  before(async () => {
    app = await newApp(store === 'redis' ? { redisUrl: redis.url } : {});
  });

  it('a sequential duplicate gets the first answer and the chain is not touched again', async () => {
    const h = await createHolder();
    const key = newKey();
    const sendsBefore = await metricValue(app, 'cinder_rpc_calls_total', 'method="sendTransaction"');
    const first = await burn(app, bodyOf(h), key);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().status, 'success');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(await supplyOf(h.mint), 0n);

    // Tokens again in a new account: a second execution would burn them, a replay does not.
    await createAta(chain, h.signer, h.signer.address, h.mint);
    await mintTokens(chain, h.signer, h.mint, h.ata, 500n);

    const second = await burn(app, bodyOf(h), key);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(second.body, first.body);
    assert.equal(second.json().transactionId, first.json().transactionId);
    assert.equal(await supplyOf(h.mint), 500n, 'the replay burned nothing');
    assert.equal(await metricValue(app, 'cinder_rpc_calls_total', 'method="sendTransaction"'), sendsBefore + 1);
    assert.ok((await metricValue(app, 'cinder_idempotency_total', 'result="replayed"')) >= 1);

    // The same body written differently (field order, spacing) is the same request.
    const reordered = await app.app.inject({
      method: 'POST',
      url: '/api/burn_tokens',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      payload: `{ "userPrivateKey": "${h.key}", "priorityFee": 1e-6, "mint": "${h.mint}" }`,
    });
    assert.equal(reordered.statusCode, 200, reordered.body);
    assert.equal(reordered.body, first.body);

    // Without the key, the same body is a new burn.
    const fresh = await burn(app, bodyOf(h));
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.notEqual(fresh.json().transactionId, first.json().transactionId);
    assert.equal(await supplyOf(h.mint), 0n);
  });

  it('concurrent duplicates: one runs (200), the other gets 409 REQUEST_IN_PROGRESS', async () => {
    const h = await createHolder();
    const key = newKey();
    const [a, b] = await Promise.all([burn(app, bodyOf(h), key), burn(app, bodyOf(h), key)]);
    const [ok, busy] = a.statusCode === 200 ? [a, b] : [b, a];
    assert.equal(ok.statusCode, 200, ok.body);
    assertProblem(busy, 409, 'REQUEST_IN_PROGRESS', 'Request in progress', IN_PROGRESS_DETAIL);
    assert.equal(busy.headers['retry-after'], '1');
    // Once finished, the retry gets the answer.
    const retry = await burn(app, bodyOf(h), key);
    assert.equal(retry.statusCode, 200);
    assert.equal(retry.body, ok.body);
  });

  it('the same key with another body: 400 IDEMPOTENCY_KEY_REUSED, during and after the first request', async () => {
    const h = await createHolder();
    const key = newKey();
    const [first, other] = await Promise.all([burn(app, bodyOf(h), key), burn(app, bodyOf(h, 0.000002), key)]);
    const [ok, reused] = first.statusCode === 200 ? [first, other] : [other, first];
    assert.equal(ok.statusCode, 200, ok.body);
    assertProblem(reused, 400, 'IDEMPOTENCY_KEY_REUSED', 'Idempotency key reused with a different request', REUSED_DETAIL);
    assertProblem(await burn(app, bodyOf(h, 0.000003), key), 400, 'IDEMPOTENCY_KEY_REUSED', 'Idempotency key reused with a different request', REUSED_DETAIL);
    // Another owner's request with the same key is its own record (idempotencyScope.test.ts): not a reuse.
    const otherHolder = await createHolder();
    const others = await burn(app, bodyOf(otherHolder), key);
    assert.equal(others.statusCode, 200, others.body);
    assert.equal(others.headers['idempotent-replayed'], undefined);
  });

  it('an answer where nothing was sent (a 400 of chain state) is not stored: the retry runs again', async () => {
    const h = await createHolder(0n);
    const key = newKey();
    // No token account of a fresh mint for this owner.
    const mint = await createTestMint(chain, h.signer, { decimals: 6 });
    const body = { mint, priorityFee: 0, userPrivateKey: h.key };
    const first = await burn(app, body, key);
    assert.equal(first.statusCode, 400, first.body);
    assert.equal(first.json().code, 'NO_TOKEN_ACCOUNT');
    const ata = await createAta(chain, h.signer, h.signer.address, mint);
    await mintTokens(chain, h.signer, mint, ata, 42n);
    const retry = await burn(app, body, key);
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(retry.json().details.burnedAmount, '42');
    // And that 200 is stored.
    const again = await burn(app, body, key);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, retry.body);
  });

  it('a body that fails validation never reaches the store', async () => {
    const key = newKey();
    const invalid = await burn(app, { mint: 'x' }, key);
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().code, 'MISSING_FIELD');
    // The key is still free for a real request.
    const h = await createHolder();
    const ok = await burn(app, bodyOf(h), key);
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('rejects a malformed Idempotency-Key with 400 INVALID_IDEMPOTENCY_KEY', async () => {
    const h = await createHolder(0n);
    for (const bad of ['x'.repeat(256), ' leading-space', 'tab\there', 'é']) {
      const response = await burn(app, bodyOf(h), bad);
      assert.equal(response.statusCode, 400, bad);
      assert.deepEqual(response.json(), {
        type: 'urn:cinder:problem:invalid-idempotency-key',
        title: 'Invalid idempotency key',
        status: 400,
        detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID is a good choice).',
        code: 'INVALID_IDEMPOTENCY_KEY',
        errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
  });
}

describe('Idempotency-Key, in-memory store', () => behaviour('memory'));
describe('Idempotency-Key, Redis store', () => behaviour('redis'));

describe('Idempotency-Key across instances and clients', () => {
  it('a record written by instance A is replayed by instance B (one Redis)', async () => {
    const [a, b] = await Promise.all([newApp({ redisUrl: redis.url }), newApp({ redisUrl: redis.url })]);
    const h = await createHolder();
    const key = newKey();
    const first = await burn(a, bodyOf(h), key);
    assert.equal(first.statusCode, 200, first.body);
    const second = await burn(b, bodyOf(h), key);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
  });

  it('Redis holds hashes and the response, never the body or the key', async () => {
    const h = await createHolder();
    const app = await newApp({ redisUrl: redis.url });
    const key = newKey();
    const response = await burn(app, bodyOf(h), key);
    assert.equal(response.statusCode, 200, response.body);
    const keys = (await redis.command('KEYS cinder:idem:*')).split('\r\n').filter((line) => line.startsWith('cinder:idem:'));
    assert.ok(keys.length >= 1);
    for (const redisKey of keys) {
      assert.match(redisKey, /^cinder:idem:[0-9a-f]{64}$/);
      const value = await redis.command(`GET ${redisKey}`);
      assert.ok(!value.includes(key), 'the Idempotency-Key is stored only hashed');
      for (const secret of secretsUsed) {
        assert.ok(!value.includes(secret), 'a private key reached Redis');
        assert.ok(!value.includes(secret.slice(0, 16)), 'part of a private key reached Redis');
      }
    }
    const ttl = Number((await redis.command(`PTTL cinder:idem:${keys[0]!.slice('cinder:idem:'.length)}`)).replace(/^:/, ''));
    assert.ok(ttl > 23 * 3600 * 1000 && ttl <= 24 * 3600 * 1000, `ttl ${ttl}`);
  });

  it('with API keys, each key has its own Idempotency-Key space', async () => {
    const app = await newApp({ apiKeys: ['client-a', 'client-b'] });
    const h = await createHolder();
    const other = await createHolder();
    const key = newKey();
    const a = await burn(app, bodyOf(h), key, { 'x-api-key': 'client-a' });
    assert.equal(a.statusCode, 200, a.body);
    // The same Idempotency-Key from another client is not a reuse, and not A's answer.
    const b = await burn(app, bodyOf(other), key, { 'x-api-key': 'client-b' });
    assert.equal(b.statusCode, 200, b.body);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.notEqual(b.json().transactionId, a.json().transactionId);
    const aAgain = await burn(app, bodyOf(h), key, { 'x-api-key': 'client-a' });
    assert.equal(aAgain.body, a.body);
  });
});

describe('Idempotency-Key on the whole-wallet reclaim', () => {
  it('POST /api/reclaim_rent (idempotent in its route config) replays its first answer: nothing is sent again', async () => {
    const app = await newApp();
    const h = await createHolder();
    const key = newKey();
    const reclaim = () =>
      app.app.inject({
        method: 'POST',
        url: '/api/reclaim_rent',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify({ userPrivateKey: h.key, priorityFee: 0, burn: [h.mint] }),
      });
    const first = await reclaim();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().status, 'success');
    assert.equal(await supplyOf(h.mint), 0n);
    await createAta(chain, h.signer, h.signer.address, h.mint);
    await mintTokens(chain, h.signer, h.mint, h.ata, 500n);
    const second = await reclaim();
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
    assert.equal(await supplyOf(h.mint), 500n, 'the replay burned nothing');
  });
});

describe('in-memory idempotency store', () => {
  const response = { status: 200, contentType: 'application/json; charset=utf-8', body: '{}' };

  it('keeps at most maxRecords, dropping the oldest first', async () => {
    const store = createMemoryIdempotencyStore({ maxRecords: 2 });
    for (const key of ['a', 'b', 'c']) {
      const begun = await store.begin(key, 'fp', 60_000);
      assert.equal(begun.kind, 'started');
      if (begun.kind === 'started') await store.complete(key, begun.token, 'fp', response, 60_000);
    }
    assert.equal((await store.begin('a', 'fp', 60_000)).kind, 'started', 'the oldest record was dropped');
    assert.equal((await store.begin('c', 'fp', 60_000)).kind, 'replay');
  });

  it('lets a pending record expire, and ignores a late complete from a former owner', async () => {
    const store = createMemoryIdempotencyStore();
    const first = await store.begin('k', 'fp', 1);
    assert.equal(first.kind, 'started');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await store.begin('k', 'fp', 60_000);
    assert.equal(second.kind, 'started', 'the expired lock freed the key');
    if (first.kind === 'started') await store.complete('k', first.token, 'fp', { ...response, body: '"stale"' }, 60_000);
    assert.equal((await store.begin('k', 'fp', 60_000)).kind, 'in_progress', 'the former owner did not overwrite');
    if (second.kind === 'started') await store.release('k', second.token);
    assert.equal((await store.begin('k', 'fp', 60_000)).kind, 'started', 'released');
  });
});
