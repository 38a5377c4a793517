/**
 * Money rule "one burn per owner and mint at a time", so that no one is charged twice, on the embedded
 * chain, checked to the lamport: identical burns sent together, without an Idempotency-Key, at
 * several RPC latencies (the chain's `delayMs` fault) and on two app instances sharing one real
 * Redis → exactly one transaction is signed and sent, the owner pays one fee, and every duplicate
 * gets the first one's answer. Without the lock, each request reads the accounts before any has
 * sent, so each signs its own burn: the second fails on chain and its owner pays its fee.
 *
 * Chain facts relied on: a classic SPL Token account (165 bytes) holds 2,039,280 lamports of rent,
 * returned by CloseAccount; a transaction with one signature and no priority fee costs 5,000
 * lamports; getSignaturesForAddress lists every transaction that touched the owner.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import type { TestApp } from '@cinder/testkit';
import { createAta, createTestMint, getLamports, mintTokens } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';
import { chain, createHolder, newApp, redis, useChainAndRedis, type Holder } from './holderFixture.ts';

const RENT_LAMPORTS = 2_039_280n;
const FEE_LAMPORTS = 5_000n;

useChainAndRedis();

const burn = (app: TestApp, h: Holder, mint: Address = h.mint, priorityFee = 0) =>
  app.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: { mint, priorityFee, userPrivateKey: h.key } });

async function chainState(h: Holder) {
  const signatures = await chain.rpc.getSignaturesForAddress(h.signer.address, { limit: 1000 }).send();
  return {
    owner: await getLamports(chain, h.signer.address),
    account: await getLamports(chain, h.ata),
    supply: (await fetchMint(chain.rpc, h.mint)).data.supply,
    transactions: signatures.length,
  };
}

const setDelay = (delayMs: number) => rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ delayMs }]);

function assertOneBurn(before: Awaited<ReturnType<typeof chainState>>, after: Awaited<ReturnType<typeof chainState>>, fee = FEE_LAMPORTS) {
  assert.deepEqual(
    after,
    { owner: before.owner + RENT_LAMPORTS - fee, account: 0n, supply: 0n, transactions: before.transactions + 1 },
    'exactly one transaction sent, one fee paid',
  );
}

describe('identical burns sent together, one instance, no Idempotency-Key', () => {
  let app: TestApp;
  before(async () => {
    app = await newApp();
  });

  // Byte-identical requests may build byte-identical transactions (one blockhash, deterministic
  // ed25519 signatures), which the chain itself deduplicates; a duplicate with another priority
  // fee is a different transaction, which only the lock keeps from being sent.
  for (const delayMs of [0, 100, 300]) {
    it(`RPC latency ${delayMs} ms: three duplicates (one with another fee) → one transaction, one fee, three identical answers`, async () => {
      const h = await createHolder();
      const before = await chainState(h);
      await setDelay(delayMs);
      const answers = await Promise.all([burn(app, h), burn(app, h, h.mint, 0.000001), burn(app, h)]);
      await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
      for (const answer of answers) {
        assert.equal(answer.statusCode, 200, answer.body);
        assert.equal(answer.body, answers[0]!.body, 'the duplicates get the first answer');
      }
      const first = answers[0]!.json();
      assert.equal(first.status, 'success');
      assert.equal(first.details.signatures.length, 1);
      assert.equal(first.details.reclaimedLamports, RENT_LAMPORTS.toString());
      // 5,000 per signature, plus at most the 1,000-lamport priority fee when that request ran.
      const fee = BigInt(first.details.feeLamports as string);
      assert.ok(fee >= FEE_LAMPORTS && fee <= FEE_LAMPORTS + 1000n, `fee ${fee}`);
      assertOneBurn(before, await chainState(h), fee);
    });
  }

  it('burns of two different mints of one owner both land: neither joins the other (they take turns on the wallet)', async () => {
    const h = await createHolder();
    const otherMint = await createTestMint(chain, h.signer, { decimals: 0 });
    const otherAta = await createAta(chain, h.signer, h.signer.address, otherMint);
    await mintTokens(chain, h.signer, otherMint, otherAta, 7n);
    const ownerBefore = await getLamports(chain, h.signer.address);
    await setDelay(100);
    const [a, b] = await Promise.all([burn(app, h), burn(app, h, otherMint)]);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(b.statusCode, 200, b.body);
    assert.notEqual(a.json().transactionId, b.json().transactionId);
    assert.equal(await getLamports(chain, h.signer.address), ownerBefore + 2n * (RENT_LAMPORTS - FEE_LAMPORTS));
  });

  it('a burn after the first one finished runs again and sees the chain as it is (nothing to burn)', async () => {
    const h = await createHolder();
    const first = await burn(app, h);
    assert.equal(first.statusCode, 200, first.body);
    const before = await chainState(h);
    const second = await burn(app, h);
    assert.equal(second.statusCode, 400, second.body);
    assert.equal(second.json().code, 'NO_TOKEN_ACCOUNT');
    assert.deepEqual(await chainState(h), before, 'nothing sent, no fee');
  });
});

/**
 * A burn answered `pending` (the RPC was lost after sending; the chain still answers 503 to
 * everything) may still land for about a minute. `second` is another instance sharing the Redis,
 * or, without Redis, the same app.
 */
async function pendingBurn(store: 'memory' | 'redis') {
  const overrides = { operationDeadlineMs: 2000, ...(store === 'redis' ? { redisUrl: redis.url } : {}) };
  const first = await newApp(overrides);
  const second = store === 'redis' ? await newApp(overrides) : first;
  const h = await createHolder();
  const before = await chainState(h);
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ failAfterSend: true }]);
  const pending = await burn(first, h);
  assert.equal(pending.statusCode, 200, pending.body);
  assert.equal(pending.json().status, 'pending');
  return { second, h, before, pending };
}

function pendingHolds(store: 'memory' | 'redis') {
  // A second burn of the same owner and mint would sign a transaction that can only fail once the
  // first lands: it gets the pending burn's answer instead, on any instance.
  it(`a burn still pending: the next burn of the owner and mint answers with it, nothing sent (${store})`, async () => {
    const { second, h, before, pending } = await pendingBurn(store);
    // A run of its own would be a 503, not this.
    const again = await burn(second, h);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.body, pending.body, 'the pending burn\'s answer, with its signature');
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    assertOneBurn(before, await chainState(h));
  });

  // A reclaim of the same wallet would plan the account the pending burn closes: it waits for its
  // turn and, the turn being held for landing, answers 409 with nothing sent, on any instance.
  it(`a burn still pending: a reclaim of the same wallet answers 409 RECLAIM_IN_PROGRESS, nothing sent (${store})`, async () => {
    const { second, h, before } = await pendingBurn(store);
    // A reclaim that ran would be a 503, not a 409.
    const reclaim = await second.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: h.key, priorityFee: 0, burn: [h.mint] } });
    assert.equal(reclaim.statusCode, 409, reclaim.body);
    assert.equal(reclaim.json().code, 'RECLAIM_IN_PROGRESS');
    assert.match(reclaim.json().detail, /sent transactions that may still land.*Nothing was sent/);
    assert.equal(reclaim.headers['retry-after'], '2');
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    assertOneBurn(before, await chainState(h));
  });
}

describe('a pending burn holds its owner and mint, and its owner\'s wallet', () => {
  pendingHolds('memory');
  pendingHolds('redis');
});

describe('identical burns on two instances sharing one Redis', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    [a, b] = await Promise.all([newApp({ redisUrl: redis.url }), newApp({ redisUrl: redis.url })]);
  });

  for (const delayMs of [50, 300]) {
    it(`RPC latency ${delayMs} ms: duplicates on A, B and A → one transaction, one fee, the same answer everywhere`, async () => {
      const h = await createHolder();
      const before = await chainState(h);
      await setDelay(delayMs);
      const answers = await Promise.all([burn(a, h), burn(b, h, h.mint, 0.000001), burn(a, h)]);
      await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
      for (const answer of answers) {
        assert.equal(answer.statusCode, 200, answer.body);
        assert.equal(answer.body, answers[0]!.body, 'every duplicate gets the answer of the one burn');
      }
      assert.equal(answers[0]!.json().status, 'success');
      assertOneBurn(before, await chainState(h), BigInt(answers[0]!.json().details.feeLamports as string));
    });
  }

  it('a burn on A and a reclaim of the same wallet on B at once take turns: every transaction lands, each rent comes back once', async () => {
    const h = await createHolder();
    const otherMint = await createTestMint(chain, h.signer, { decimals: 0 });
    const otherAta = await createAta(chain, h.signer, h.signer.address, otherMint); // empty: the reclaim closes it
    const ownerBefore = await getLamports(chain, h.signer.address);
    await setDelay(100);
    const [burned, reclaimed] = await Promise.all([
      burn(a, h),
      b.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: h.key, priorityFee: 0, burn: [h.mint] } }),
    ]);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    const answers = [burned, reclaimed].filter((r) => r.statusCode === 200).map((r) => r.json());
    // Whichever went second saw the chain after the first: a burn with nothing left to burn is a 400.
    for (const r of [burned, reclaimed]) if (r.statusCode !== 200) assert.equal(r.json().code, 'NO_TOKEN_ACCOUNT', r.body);
    const transactions = answers.flatMap((x) => x.details.transactions);
    assert.ok(transactions.length > 0 && transactions.every((tx: { status: string }) => tx.status === 'success'), JSON.stringify(transactions));
    assert.deepEqual(answers.flatMap((x) => x.details.closedAccounts).sort(), [h.ata, otherAta].sort());
    const fees = answers.reduce((sum, x) => sum + BigInt(x.details.feeLamports as string), 0n);
    assert.equal(await getLamports(chain, h.signer.address), ownerBefore + 2n * RENT_LAMPORTS - fees);
  });

  it('Redis unreachable: 503 SERVICE_UNAVAILABLE, nothing sent (the lock fails closed)', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    await redis.kill();
    try {
      const answer = await burn(a, h);
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(answer.json().code, 'SERVICE_UNAVAILABLE');
      assert.equal(answer.headers['retry-after'], '5');
    } finally {
      await redis.restart();
    }
    assert.deepEqual(await chainState(h), before, 'nothing sent, no fee');
  });
});
