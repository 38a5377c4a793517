/**
 * The fee sponsor's policy and its ledger, without a chain: the fee bound, the per-wallet turn,
 * strikes and the hourly loss budgets, with the ledger in memory and in a real Redis (shared by two
 * policies, as by two instances). The same rules end to end on the embedded chain are in
 * test/http/sponsorRaces.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { CinderError } from '../../src/errors.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createSponsorPolicy, messageHash } from '../../src/operations/sponsorPolicy.ts';
import { createOperationLocks } from '../../src/store/operationLocks.ts';
import { createMemorySponsorLedger, createRedisSponsorLedger, type SponsorLedger } from '../../src/store/sponsorLedger.ts';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

const logger = pino({ level: 'silent' });
const defaults = loadConfig({}).sponsorPolicy;

async function policyWith(ledger: SponsorLedger, config: Partial<typeof defaults> = {}) {
  const sponsor = (await generateKeyPairSigner()).address;
  return createSponsorPolicy({
    sponsor,
    config: { ...defaults, ...config },
    ledger,
    locks: createOperationLocks({ redis: null, logger }),
    metrics: createMetrics({ defaultMetrics: false }),
    logger,
  });
}

const owner = async () => (await generateKeyPairSigner()).address;
const code = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => (e instanceof CinderError ? e : Promise.reject(e)));

describe('the sponsor policy defaults', () => {
  it('are the documented ones: 20,000 lamports a transaction, 24 h strikes, 1,000,000 lamports an hour, 20,000 per wallet', () => {
    assert.deepEqual(defaults, { maxFeeLamports: 20_000n, strikeMs: 86_400_000, maxLossLamportsPerHour: 1_000_000n, maxLossLamportsPerOwnerPerHour: 20_000n });
  });

  it('are set by SPONSOR_MAX_FEE_LAMPORTS, SPONSOR_STRIKE_MS, SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR, SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR; RELAY_ANY_TRANSACTION', () => {
    const config = loadConfig({
      SPONSOR_MAX_FEE_LAMPORTS: '15000',
      SPONSOR_STRIKE_MS: '0',
      SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR: '500000',
      SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR: '40000',
      RELAY_ANY_TRANSACTION: 'true',
    });
    assert.deepEqual(config.sponsorPolicy, { maxFeeLamports: 15_000n, strikeMs: 0, maxLossLamportsPerHour: 500_000n, maxLossLamportsPerOwnerPerHour: 40_000n });
    assert.equal(config.relayAnyTransaction, true);
    assert.equal(loadConfig({}).relayAnyTransaction, false);
    assert.throws(() => loadConfig({ SPONSOR_MAX_FEE_LAMPORTS: '0' }), /SPONSOR_MAX_FEE_LAMPORTS/);
    assert.throws(() => loadConfig({ RELAY_ANY_TRANSACTION: 'yes' }), /RELAY_ANY_TRANSACTION/);
  });

  it('the fee bound: a plan whose transaction could cost more is a 400 naming the bound', async () => {
    const policy = await policyWith(createMemorySponsorLedger());
    policy.assertFeeWithinBound([20_000n, 15_000n]);
    assert.throws(() => policy.assertFeeWithinBound([10_000n, 20_001n]), (e: unknown) => {
      assert.ok(e instanceof CinderError);
      assert.equal(e.code, 'INVALID_PRIORITY_FEE');
      assert.equal(e.status, 400);
      assert.match(e.message, /at most 0\.00002 SOL \(two signatures and a priority fee of at most 0\.00001 SOL per transaction; this plan has 2 transactions/);
      return true;
    });
  });
});

for (const kind of ['memory', 'redis'] as const) {
  describe(`the sponsor ledger in ${kind}`, () => {
    let redis: TestRedis | null = null;
    const clients: Redis[] = [];
    const ledger = (): SponsorLedger => {
      if (!redis) return createMemorySponsorLedger();
      const client = new Redis(redis.url);
      clients.push(client);
      return createRedisSponsorLedger(client);
    };
    before(async () => {
      if (kind === 'redis') redis = await startTestRedis();
    });
    after(async () => {
      for (const client of clients) client.disconnect();
      await redis?.stop();
    });

    it('one sponsored operation per wallet: a second turn is 409 naming when the first ends; its accounts are found; it ends with its last message', async () => {
      const shared = ledger();
      // With Redis, two policies on one ledger behave as two instances.
      const [a, b] = [await policyWith(shared), await policyWith(kind === 'redis' ? ledger() : shared)];
      const wallet = await owner();
      const account = await owner();
      const [m1, m2] = [new Uint8Array([1]), new Uint8Array([2])];
      const expiresAt = await a.beginTurn(wallet, [m1, m2], [account]);
      const second = await code(b.beginTurn(wallet, [m1], [account]));
      assert.equal(second?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      assert.equal(second?.status, 409);
      assert.match(second!.message, new RegExp(`outstanding until ${new Date(expiresAt).toISOString().replace(/\./g, '\\.')}`));
      assert.ok(Number(second!.headers['retry-after']) > 0);
      assert.equal((await code(b.admit(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      assert.equal((await code(b.assertNoTurn(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      // The account is the turn's: another message writing it conflicts, the turn's own does not.
      assert.deepEqual(await b.conflicts([account, wallet], null), [account]);
      assert.deepEqual(await b.conflicts([account], m1), []);
      assert.deepEqual(await b.conflicts([account], new Uint8Array([3])), [account]);
      await shared.finishMessage(wallet, messageHash(m1));
      assert.equal((await code(b.admit(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS', 'one message left');
      await shared.finishMessage(wallet, messageHash(m2));
      assert.equal(await code(b.admit(wallet)), null, 'all landed: the turn ended');
      assert.deepEqual(await b.conflicts([account], null), []);
    });

    it('strikes: a struck wallet is declined (403 SPONSOR_DECLINED, pay the fee yourself) until the strike ends', async () => {
      const store = ledger();
      const policy = await policyWith(store);
      const wallet = await owner();
      await store.strike(wallet, 60_000);
      const declined = await code(policy.admit(wallet));
      assert.equal(declined?.code, 'SPONSOR_DECLINED');
      assert.equal(declined?.status, 403);
      assert.match(declined!.message, /failed on chain at the sponsor's cost\. Pay the fee from the wallet itself/);
      assert.equal(await code(policy.admit(await owner())), null, 'another wallet is not struck');
    });

    it('the loss budgets: over the global one 503 SPONSOR_UNAVAILABLE with Retry-After; over a wallet\'s own, that wallet is declined', async () => {
      const store = ledger();
      const policy = await policyWith(store, { maxLossLamportsPerHour: 30_000n, maxLossLamportsPerOwnerPerHour: 20_000n, strikeMs: 0 });
      const [first, second, third] = [await owner(), await owner(), await owner()];
      await store.addLoss(first, 20_000n, 3_600_000);
      assert.equal((await code(policy.admit(first)))?.code, 'SPONSOR_DECLINED', 'the wallet\'s own hourly budget is spent');
      assert.equal(await code(policy.admit(second)), null, 'the global budget is not');
      await store.addLoss(second, 10_000n, 3_600_000);
      const unavailable = await code(policy.admit(third));
      assert.equal(unavailable?.code, 'SPONSOR_UNAVAILABLE');
      assert.equal(unavailable?.status, 503);
      assert.match(unavailable!.message, /lost its hourly budget \(0\.00003 SOL\)/);
      const retryAfter = Number(unavailable!.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After ${retryAfter} s: the end of the hour`);
      assert.deepEqual(await store.losses(first, 3_600_000).then((l) => [l.global, l.owner]), [30_000n, 20_000n]);
    });
  });
}
