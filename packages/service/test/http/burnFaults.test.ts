/**
 * Landing burns under injected RPC faults (the local chain's test-only fault injection): for each
 * fault, the HTTP answer, exactly one burn or none on the chain, and an answer within the deadline.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { fetchMint } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTokenHolder, getLamports, type TokenHolder } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';
import { maxPerSecond, startRpcProxy } from '../chain/rpcProxy.ts';

const DEADLINE_MS = 4000;
/**
 * How late past the deadline an answer may come and still show that the deadline bounded it: the
 * fault it answers in spite of (a hung RPC, a stalled cluster) would hold it for ever, and a busy
 * machine may add seconds of its own.
 */
const DEADLINE_SLACK_MS = 15_000;
let t: TestApp;
const chainAdapter = { rebroadcastIntervalMs: 300, callTimeoutMs: 1000 };

before(async () => {
  t = await createTestApp({ operationDeadlineMs: DEADLINE_MS }, { chainAdapter });
});
afterEach(async () => {
  await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults', []);
});
after(async () => {
  await t.close();
});

const faults = (settings: Record<string, unknown>) => rpcResult(t.chain.localnet.rpcUrl, 'localnet_setFaults', [settings]);
const warp = (slots: number) => rpcResult(t.chain.localnet.rpcUrl, 'localnet_warpSlots', [slots]);

type Holder = TokenHolder;
const createHolder = () => createTokenHolder(t.chain);

async function burn(h: Holder, through: TestApp = t) {
  const started = Date.now();
  const response = await through.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: { mint: h.mint, priorityFee: 0, userPrivateKey: h.key } });
  return { response, elapsed: Date.now() - started };
}

/**
 * A burn through a fresh app on the same chain, whose deadline no busy machine reaches: for the
 * faults a burn must land through. Fresh, so that its blockhash is read after the other tests' warps.
 */
async function burnThatMustLand(h: Holder) {
  const landing = await createTestApp({ operationDeadlineMs: 300_000 }, { chain: t.chain, chainAdapter });
  try {
    return await burn(h, landing);
  } finally {
    await landing.close();
  }
}

async function chainState(h: Holder) {
  return {
    owner: await getLamports(t.chain, h.signer.address),
    account: await getLamports(t.chain, h.ata),
    supply: (await fetchMint(t.chain.rpc, h.mint)).data.supply,
  };
}

async function assertBurnedOnce(h: Holder, before: Awaited<ReturnType<typeof chainState>>) {
  assert.deepEqual(await chainState(h), { owner: before.owner + 2_039_280n - 5000n, account: 0n, supply: 0n }, 'exactly one burn, one fee');
}

async function assertNotBurned(h: Holder, before: Awaited<ReturnType<typeof chainState>>) {
  assert.deepEqual(await chainState(h), before, 'nothing burned, no fee paid');
}

describe('burns under RPC faults', () => {
  it('a dropped send is rebroadcast and lands once', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ dropSends: 1 });
    const { response } = await burnThatMustLand(h);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'success');
    assert.equal(await rpcResult(t.chain.localnet.rpcUrl, 'localnet_getDroppedSends', []), 1);
    await assertBurnedOnce(h, before);
  });

  it('a transaction that never lands expires: failed, nothing burned, and it stays failed', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ dropSends: 1_000_000 });
    const burning = burn(h);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await warp(200); // past the blockhash's lastValidBlockHeight
    const { response, elapsed } = await burning;
    assert.ok(elapsed < DEADLINE_MS + DEADLINE_SLACK_MS, `answered after ${elapsed} ms`);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'failed');
    // The wording belongs to the operation's messages; what it must say: this transaction expired, nothing was burned.
    assert.ok(body.message.includes(`transaction ${body.transactionId} failed: its blockhash expired before it landed`), body.message);
    assert.match(body.message, /Nothing was burned/);
    assert.deepEqual(body.details.closedAccounts, []);
    assert.equal(body.details.burnedAmount, '0');
    await assertNotBurned(h, before);
    const status = await t.app.inject({ method: 'GET', url: `/api/transactions/${body.transactionId}` });
    assert.equal(status.json().status, 'failed');
    assert.match(status.json().message, /expired without landing; nothing was burned/);
  });

  it('429 answers are retried after backoff', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ failRequests: 3, failStatus: 429, retryAfterSeconds: 0 });
    const { response } = await burnThatMustLand(h);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'success');
    await assertBurnedOnce(h, before);
  });

  it('dropped connections are retried', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ closeConnections: 2 });
    const { response } = await burnThatMustLand(h);
    assert.equal(response.statusCode, 200, response.body);
    await assertBurnedOnce(h, before);
  });

  it('slow answers still land', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ delayMs: 150 });
    const { response } = await burnThatMustLand(h);
    assert.equal(response.statusCode, 200, response.body);
    await assertBurnedOnce(h, before);
  });

  for (const failStatus of [500, 503] as const) {
    it(`an RPC answering ${failStatus} before anything was sent: 503 RPC_UNAVAILABLE with Retry-After, nothing sent`, async () => {
      const h = await createHolder();
      const before = await chainState(h);
      await faults({ failRequests: 1_000_000, failStatus });
      const { response, elapsed } = await burn(h);
      assert.ok(elapsed < DEADLINE_MS + DEADLINE_SLACK_MS, `answered after ${elapsed} ms`);
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['retry-after'], '5');
      assert.deepEqual(response.json(), {
        type: 'urn:cinder:problem:rpc-unavailable',
        title: 'Solana RPC unavailable',
        status: 503,
        detail: 'The Solana RPC node did not answer; nothing was sent. Try again shortly.',
        code: 'RPC_UNAVAILABLE',
      });
      await faults({ failRequests: 0 });
      await assertNotBurned(h, before);
    });
  }

  it('an RPC that hangs answers within the deadline', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ delayMs: 60_000 });
    const { response, elapsed } = await burn(h);
    assert.ok(elapsed < DEADLINE_MS + DEADLINE_SLACK_MS, `answered after ${elapsed} ms`);
    assert.equal(response.statusCode, 503, response.body);
    assert.equal(response.json().code, 'RPC_UNAVAILABLE');
    await faults({ delayMs: 0 });
    await assertNotBurned(h, before);
  });

  it('the RPC lost right after sending: pending with the signature, then success once it is back', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ failAfterSend: true });
    const { response, elapsed } = await burn(h);
    assert.ok(elapsed < DEADLINE_MS + DEADLINE_SLACK_MS, `answered after ${elapsed} ms`);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'pending');
    assert.match(body.transactionId, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.match(body.message, /outcome is unknown.*GET \/api\/transactions\/\{signature\}; do not resend/);
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    const status = await t.app.inject({ method: 'GET', url: `/api/transactions/${body.transactionId}` });
    assert.equal(status.json().status, 'success');
    await assertBurnedOnce(h, before);
  });

  it('a stalled cluster: pending within the deadline, pending on GET, failed once it expired; nothing burned', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await faults({ haltBlocks: true });
    const { response, elapsed } = await burn(h);
    assert.ok(elapsed < DEADLINE_MS + DEADLINE_SLACK_MS, `answered after ${elapsed} ms`);
    const body = response.json();
    assert.equal(body.status, 'pending', body.message);
    const pending = await t.app.inject({ method: 'GET', url: `/api/transactions/${body.transactionId}` });
    assert.equal(pending.statusCode, 200);
    assert.equal(pending.json().status, 'pending');
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    await warp(200);
    const expired = await t.app.inject({ method: 'GET', url: `/api/transactions/${body.transactionId}` });
    assert.equal(expired.json().status, 'failed');
    await assertNotBurned(h, before);
  });

  it('a provider that refuses beyond 10 requests/s and SOLANA_RPC_MAX_RPS=10: concurrent burns all succeed, none refused', async () => {
    const proxy = await startRpcProxy(t.chain.localnet.rpcUrl, { maxRps: 10 });
    const budgeted = await createTestApp(
      { operationDeadlineMs: 60_000, solanaRpcMaxRps: 10 },
      { chain: t.chain, chainAdapter: { rpcUrl: proxy.url, rebroadcastIntervalMs: 2000 } },
    );
    try {
      const holders = await Promise.all(Array.from({ length: 8 }, createHolder));
      const befores = await Promise.all(holders.map(chainState));
      const responses = await Promise.all(
        holders.map((h) =>
          budgeted.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: { mint: h.mint, priorityFee: 0, userPrivateKey: h.key } }),
        ),
      );
      for (const response of responses) {
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().status, 'success');
      }
      assert.deepEqual(proxy.refusals, [], 'the provider refused nothing');
      assert.ok(maxPerSecond(proxy.requests.map((r) => r.at)) <= 10);
      for (const [i, h] of holders.entries()) await assertBurnedOnce(h, befores[i]!);
    } finally {
      await budgeted.close();
      await proxy.close();
    }
  });
});
