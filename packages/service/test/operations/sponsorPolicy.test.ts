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
import { createSponsorPolicy } from '../../src/operations/sponsorPolicy.ts';
import { createOperationLocks } from '../../src/store/operationLocks.ts';
import { createMemorySponsorLedger, createRedisSponsorLedger, type SponsorLedger } from '../../src/store/sponsorLedger.ts';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

const logger = pino({ level: 'silent' });
const defaults = loadConfig({}).sponsorPolicy;

async function policyWith(ledger: SponsorLedger, config: Partial<typeof defaults> = {}) {
  return createSponsorPolicy({
    signer: await generateKeyPairSigner(),
    config: { ...defaults, ...config },
    ledger,
    locks: createOperationLocks({ redis: null, logger }),
    metrics: createMetrics({ defaultMetrics: false }),
    logger,
  });
}

const owner = async () => (await generateKeyPairSigner()).address;
const wallet0 = 'WalletOfTheLossCapTest11111111111111111111111';
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
    let ledgers = 0;
    /** A ledger of its own (its own key prefix in Redis), or one more view of the ledger with `prefix`. */
    const ledger = (prefix = `cinder:test-sponsor:${ledgers++}:`): SponsorLedger => {
      if (!redis) return createMemorySponsorLedger();
      const client = new Redis(redis.url);
      clients.push(client);
      return createRedisSponsorLedger(client, { prefix });
    };
    before(async () => {
      if (kind === 'redis') redis = await startTestRedis();
    });
    after(async () => {
      for (const client of clients) client.disconnect();
      await redis?.stop();
    });

    it('one sponsored operation per wallet, from its signed relay: another operation is 409 naming its signatures; the same prepare joins; it ends with its last message', async () => {
      const shared = ledger('cinder:test-sponsor:shared:');
      // With Redis, two policies on one ledger behave as two instances.
      const [a, b] = [await policyWith(shared), await policyWith(kind === 'redis' ? ledger('cinder:test-sponsor:shared:') : shared)];
      const wallet = await owner();
      const account = await owner();
      const m1 = { identity: 'identity-1', signature: 'signature-1' };
      const m2 = { identity: 'identity-2', signature: 'signature-2' };
      assert.deepEqual(await a.beginTurn(wallet, 'token:A', [m1], [account]), ['identity-1']);
      const other = await code(b.beginTurn(wallet, 'token:B', [{ identity: 'identity-3', signature: 'signature-3' }], [account]));
      assert.equal(other?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      assert.equal(other?.status, 409);
      assert.match(other!.message, /sponsored transaction \(signature-1\) may land until/);
      assert.deepEqual(other!.extensions.signatures, ['signature-1']);
      assert.ok(Number(other!.headers['retry-after']) > 0);
      // The same prepare answer (one relay token) relayed in two requests: its second message joins the turn.
      assert.deepEqual(await b.beginTurn(wallet, 'token:A', [m1, m2], [account]), ['identity-2']);
      assert.deepEqual((await shared.turnOf(wallet))?.signatures, ['signature-1', 'signature-2']);
      assert.equal((await code(b.admit(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      assert.equal((await code(b.assertNoTurn(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS');
      // The account is the turn's: another message writing it conflicts, the turn's own does not.
      assert.deepEqual((await b.conflicts([account, wallet], null)).map((c) => c.account), [account]);
      assert.deepEqual(await b.conflicts([account], 'identity-1'), []);
      assert.deepEqual((await b.conflicts([account], 'identity-9')).map((c) => c.account), [account]);
      await b.abandon(wallet, ['identity-2']);
      assert.equal((await code(b.admit(wallet)))?.code, 'SPONSORED_OPERATION_IN_PROGRESS', 'one message left');
      await shared.finishMessage(wallet, 'identity-1');
      assert.equal(await code(b.admit(wallet)), null, 'all landed: the turn ended');
      assert.deepEqual(await b.conflicts([account], null), []);
    });

    it('the loss cap counts fees in flight: reservations within the cap are granted, one past it is refused until one is released', async () => {
      const store = ledger();
      const options = { capLamports: 40_000n, windowMs: 3_600_000, holdUntil: Date.now() + 60_000 };
      const results = await Promise.all(['s1', 's2', 's3', 's4', 's5'].map((key) => store.reserve(key, 20_000n, options)));
      assert.equal(results.filter((r) => r.ok).length, 2, 'two fees of 20,000 fit a cap of 40,000');
      const refused = results.find((r) => !r.ok);
      assert.ok(refused && !refused.ok && refused.reserved === 40_000n && refused.lost === 0n && refused.until > Date.now());
      const granted = ['s1', 's2', 's3', 's4', 's5'].filter((_, i) => results[i]!.ok);
      // One landed (released), one failed (its loss counted, then released): the loss still holds its share.
      await store.release(granted[0]!, 20_000n);
      await store.addLoss(wallet0, 20_000n, 3_600_000);
      await store.release(granted[1]!, 20_000n);
      assert.equal((await store.reserve('s6', 20_000n, options)).ok, true);
      const past = await store.reserve('s7', 20_000n, options);
      assert.ok(!past.ok && past.lost === 20_000n && past.reserved === 20_000n);
      const window = await store.losses(wallet0, 3_600_000);
      assert.deepEqual([window.global, window.owner, window.reserved], [20_000n, 20_000n, 20_000n]);
      const policy = await policyWith(store, { maxLossLamportsPerHour: 40_000n, maxLossLamportsPerOwnerPerHour: 1_000_000n });
      const unavailable = await code(policy.admit(await owner()));
      assert.equal(unavailable?.code, 'SPONSOR_UNAVAILABLE', 'lost + in flight reach the cap');
      assert.match(unavailable!.message, /0\.00002 SOL was lost .* and 0\.00002 SOL is at risk in sponsored transactions in flight/);
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
      assert.match(unavailable!.message, /loss budget of 0\.00003 SOL an hour: 0\.00003 SOL was lost/);
      const retryAfter = Number(unavailable!.headers['retry-after']);
      assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter} s: when the oldest loss leaves the sliding hour`);
      assert.deepEqual(await store.losses(first, 3_600_000).then((l) => [l.global, l.owner]), [30_000n, 20_000n]);
    });
  });
}
