/**
 * The hourly loss cap holds under concurrency, end to end on the embedded chain, to the lamport:
 * five fresh 0-SOL wallets are prepared and relayed at once, and each races its own close straight
 * to the chain while its sponsored transaction is in flight (`holdSendsMs` puts time between the
 * service's simulation and the landing, as on a real cluster). The cap (set to 40,000 lamports for
 * the test; the fee of each sponsored transaction is about 20,000) counts what the transactions in
 * flight could still lose, so no more are sent than the cap can pay for: the sponsor's loss on chain
 * stays within it, and the others are 503 SPONSOR_UNAVAILABLE with Retry-After, nothing sent. Past
 * the cap, the losses of the sliding hour keep a further wallet at 503.
 *
 * Solana facts relied on: a transaction that fails on chain still charges its fee payer its whole
 * fee; CloseAccount of an account that no longer exists fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createKeyPairSignerFromBytes,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getCloseAccountInstruction } from '@solana-program/token';
import type { Sponsor } from '../../src/keys/sponsor.ts';
import { loadConfig } from '../../src/config.ts';
import { createAuxTokenAccount, createFundedSigner, createSponsoredTestApp, createTestKey, createTestMint, getLamports, metricValue, rpcResult, sendInstructions, startTestRedis, type SponsoredTestApp, type TestRedis, type TestApp, chainFee, waitUntil } from '@cinder/testkit';

const CAP = 40_000n;
const WALLETS = 5;
/** Far longer than one HTTP round trip to the local chain: the attacker's closes certainly land first. */
const HOLD_MS = 8_000;

let t: TestApp;
let sponsor: Sponsor;
let sponsored: SponsoredTestApp;
let funder: KeyPairSigner;
let redis: TestRedis | null = null;

/** The app with the cap set low, its sponsor's ledger in memory or in a real Redis. */
async function start(store: 'memory' | 'redis'): Promise<void> {
  if (store === 'redis') redis = await startTestRedis();
  sponsored = await createSponsoredTestApp(5_000_000_000n, {
    sponsorPolicy: { ...loadConfig({}).sponsorPolicy, maxLossLamportsPerHour: CAP },
    ...(redis ? { redisUrl: redis.url } : {}),
  });
  ({ t, sponsor } = sponsored);
  funder = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
}
async function stop(): Promise<void> {
  await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults');
  await sponsored.close();
  await redis?.stop();
  redis = null;
}

async function attackerWallet(): Promise<{ owner: KeyPairSigner; account: Address }> {
  const key = await createTestKey();
  const owner = await createKeyPairSignerFromBytes(key.secretKey);
  const mint = await createTestMint(t.chain, funder, { decimals: 0 });
  const account = await createAuxTokenAccount(t.chain, funder, owner.address, mint);
  return { owner, account };
}

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
const sponsorBalance = () => getLamports(t.chain, sponsor.signer.address);

/** Prepared with the highest fee the sponsor accepts (what an attacker picks), signed by the owner. */
async function preparedAndSigned(owner: KeyPairSigner) {
  const prepared = await post('/api/reclaim_rent/prepare', { owner: owner.address, priorityFee: 0.00001, feePayer: 'sponsor' });
  assert.equal(prepared.statusCode, 200, prepared.body);
  const { transactions, relayToken } = prepared.json() as { transactions: string[]; relayToken: string };
  assert.equal(transactions.length, 1);
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(transactions[0]!));
  return { wire: getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], transaction)), relayToken };
}



for (const store of ['memory', 'redis'] as const) {
  describe(`the hourly loss cap under concurrent sponsored relays (sponsor ledger in ${store})`, () => {
    before(() => start(store));
    after(stop);

    it(`${WALLETS} wallets relayed at once, each racing its own close to the chain: the sponsor loses at most the cap, to the lamport; the rest are 503 with Retry-After`, async () => {
      const wallets = await Promise.all(Array.from({ length: WALLETS }, attackerWallet));
      const signedWires = await Promise.all(wallets.map((w) => preparedAndSigned(w.owner)));
      const sponsorBefore = await sponsorBalance();
      const lostBefore = BigInt(await metricValue(t, 'cinder_sponsor_lamports_lost_total'));
      const sendsBefore = await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"');

      await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setFaults', [{ holdSendsMs: HOLD_MS }]);
      const relays = signedWires.map((s) => post('/api/transactions', { transactions: [s.wire], relayToken: s.relayToken }));
      // Two fees fit the cap: once those two are in flight, every other relay has its answer.
      const answers: (Awaited<(typeof relays)[number]> | null)[] = relays.map(() => null);
      relays.forEach((relay, i) => void relay.then((response) => (answers[i] = response)));
      await waitUntil(
        async () =>
          (await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"')) - sendsBefore >= 2 && answers.filter((a) => a !== null).length >= WALLETS - 2,
        'two sends in flight and the other relays answered',
      );
      await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setFaults', [{ holdSendsMs: 0 }]);
      // The owners whose sponsored transactions are in flight close their accounts straight on chain, the rent going elsewhere.
      const inFlight = wallets.filter((_, i) => answers[i] === null);
      assert.equal(inFlight.length, 2, 'two relays are still in flight');
      await Promise.all(
        inFlight.map(({ owner, account }) => sendInstructions(t.chain, funder, [getCloseAccountInstruction({ account, destination: funder.address, owner })])),
      );
      const responses = await Promise.all(relays);

      const refused = responses.filter((r) => r.statusCode === 503);
      const sent = responses.filter((r) => r.statusCode === 200);
      assert.equal(refused.length, WALLETS - 2, responses.map((r) => r.body).join('\n'));
      assert.equal(sent.length, 2);
      for (const response of refused) {
        assert.equal(response.json().code, 'SPONSOR_UNAVAILABLE');
        assert.match(response.json().detail, /loss budget of 0\.00004 SOL an hour: 0 SOL was lost .* and 0\.0000\d+ SOL is at risk in sponsored transactions in flight.*Nothing was sent/);
        assert.ok(Number(response.headers['retry-after']) > 0);
      }
      let fees = 0n;
      for (const response of sent) {
        assert.equal(response.json().status, 'failed', response.json().message);
        fees += await chainFee(t.chain, response.json().transactionId);
      }
      const lost = sponsorBefore - (await sponsorBalance());
      assert.equal(lost, fees, 'the sponsor lost exactly the fees of the two transactions that failed');
      assert.ok(lost > 0n && lost <= CAP, `the sponsor lost ${lost} lamports against a cap of ${CAP}`);
      assert.equal(BigInt(await metricValue(t, 'cinder_sponsor_lamports_lost_total')) - lostBefore, lost, 'every lamport lost is counted');

      // Past the cap: a further wallet is refused (at its prepare or its relay) until the losses leave the sliding hour.
      const next = await attackerWallet();
      const prepared = await post('/api/reclaim_rent/prepare', { owner: next.owner.address, priorityFee: 0.00001, feePayer: 'sponsor' });
      const answer =
        prepared.statusCode === 200
          ? await post('/api/transactions', {
              transactions: [getBase64EncodedWireTransaction(await partiallySignTransaction([next.owner.keyPair], getTransactionDecoder().decode(getBase64Encoder().encode(prepared.json().transactions[0]))))],
              relayToken: prepared.json().relayToken,
            })
          : prepared;
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.json().code, 'SPONSOR_UNAVAILABLE');
      assert.ok(Number(answer.headers['retry-after']) > 3_000, 'the oldest loss leaves the sliding hour in about an hour');
      assert.equal(await sponsorBalance(), sponsorBefore - lost, 'nothing more was lost');
    });
  });
}
