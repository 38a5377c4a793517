/**
 * The SDK's whole-wallet reclaim and keyless methods (previewReclaim, reclaimRent, prepareBurn,
 * prepareReclaim, relay) against the real app and the embedded chain, to the lamport:
 * - the preview lists every account of both programs with its action, and its sums are the chain's;
 * - reclaimRent does what the preview showed: the owner gains exactly the preview's net, every
 *   account ends as the preview said, a second reclaim is NOTHING_TO_RECLAIM;
 * - prepare → sign with @solana/kit (as a wallet does) → relay lands a reclaim and a burn, and the
 *   owner's balance moves by the prepared plan's net;
 * - the SDK sends what the server needs (a priority fee of 1e-7 SOL as a decimal, the burn list,
 *   an Idempotency-Key) and surfaces the server's refusals as CinderApiError with their codes.
 *
 * Relied on (checked here against the chain): a closed account returns all of its lamports to the
 * owner; a transaction's base fee is 5,000 lamports per signature (one signature: the owner).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { CinderApiError, createCinderClient, type CinderClient } from '../../src/index.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, getLamports, mintTokens } from '@cinder/testkit';
import { lamportsOf, signPrepared, stillOpen, walletToReclaim } from './reclaimFixture.ts';

let t: TestApp;
let client: CinderClient;
const keys: string[] = [];

before(async () => {
  t = await createTestApp();
  client = createCinderClient({ baseUrl: await t.app.listen({ host: '127.0.0.1', port: 0 }) });
});
after(async () => {
  await t.close();
});

async function rejection(promise: Promise<unknown>): Promise<CinderApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CinderApiError, String(error));
    for (const key of keys) assert.ok(!`${error.message} ${JSON.stringify(error)}`.includes(key), 'no key in the error');
    return error;
  }
  assert.fail('expected a rejection');
}

describe('previewReclaim and reclaimRent', () => {
  it('the preview lists every account with its action and the chain\'s lamports; the reclaim nets exactly what it showed', async () => {
    const w = await walletToReclaim(t.chain, { classic: 4 });
    keys.push(w.key);
    const owner = w.signer.address;
    const preview = await client.previewReclaim({ owner });
    assert.equal(preview.owner, owner);

    const byAddress = new Map(preview.accounts.map((a) => [a.address, a]));
    assert.equal(preview.accounts.length, w.closable.length + 2, 'the closable ones, the frozen one and the kept one');
    for (const account of w.closable) {
      const a = byAddress.get(account)!;
      assert.ok(['close', 'unwrap'].includes(a.action), `${account}: ${a.action}`);
      assert.equal(a.lamports, String(await getLamports(t.chain, account)), 'the real lamports of each account');
    }
    assert.deepEqual([byAddress.get(w.frozen!)!.action, byAddress.get(w.frozen!)!.code, byAddress.get(w.frozen!)!.state], ['skip', 'ACCOUNT_FROZEN', 'frozen']);
    assert.deepEqual([byAddress.get(w.kept!.account)!.action, byAddress.get(w.kept!.account)!.amount], ['keep', '5000000']);

    const back = await lamportsOf(t.chain, w.closable);
    const s = preview.summary;
    assert.equal(s.reclaimLamports, String(back), 'what the closes return, to the lamport');
    assert.equal(s.transactions, 1);
    assert.equal(s.feeLamports, '5000', 'one signature, no priority fee');
    assert.equal(s.netLamports, String(back - 5000n));

    const before = await getLamports(t.chain, owner);
    const result = await client.reclaimRent({ userPrivateKey: w.key, priorityFee: 0 });
    assert.equal(result.status, 'success', result.message ?? '');
    assert.equal(result.details!.netLamports, s.netLamports, 'preview = reclaim');
    assert.equal((await getLamports(t.chain, owner)) - before, BigInt(s.netLamports), 'the owner gained exactly the net');
    assert.deepEqual(await stillOpen(t.chain, w.closable), [], 'every closable account is closed');
    assert.deepEqual(await stillOpen(t.chain, [w.frozen!, w.kept!.account]), [w.frozen!, w.kept!.account], 'the frozen and the kept accounts stay');
    assert.deepEqual(result.details!.skippedAccounts.map(({ address, code }) => ({ address, code })), [{ address: w.frozen!, code: 'ACCOUNT_FROZEN' }]);
    assert.deepEqual(result.signatures, result.details!.transactions.map((x) => x.signature));

    const again = await rejection(client.reclaimRent({ userPrivateKey: w.key, priorityFee: 0 }));
    assert.deepEqual([again.status, again.code], [400, 'NOTHING_TO_RECLAIM']);
  });

  it('burn lists mints to burn as well; a priority fee in exponent form reaches the server as a decimal', async () => {
    const w = await walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false });
    keys.push(w.key);
    // String(1e-7) is "1e-7": the SDK must send 0.0000001 (100 lamports), which the server accepts.
    const preview = await client.previewReclaim({ owner: w.signer.address, burn: [w.kept!.mint], priorityFee: 1e-7 });
    const kept = preview.accounts.find((a) => a.address === w.kept!.account)!;
    assert.equal(kept.action, 'burn_and_close');
    const fee = BigInt(preview.summary.feeLamports);
    assert.ok(fee > 5000n && fee <= 5100n, `base fee + at most the 100-lamport priority fee, got ${fee}`);

    const before = await getLamports(t.chain, w.signer.address);
    const result = await client.reclaimRent({ userPrivateKey: w.secretKey, priorityFee: 1e-7, burn: [w.kept!.mint] });
    assert.equal(result.status, 'success', result.message ?? '');
    assert.deepEqual(result.details!.burned, [{ mint: w.kept!.mint, amount: '5000000', decimals: 6 }]);
    assert.equal(result.details!.netLamports, preview.summary.netLamports);
    assert.equal((await getLamports(t.chain, w.signer.address)) - before, BigInt(preview.summary.netLamports));
    assert.equal((await fetchMint(t.chain.rpc, w.kept!.mint)).data.supply, 0n);
  });

  it('reclaimRent with the same idempotencyKey answers the first result again, without touching the chain', async () => {
    const w = await walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false, kept: false });
    keys.push(w.key);
    const idempotencyKey = `sdk-reclaim-${w.signer.address}`;
    const result = await client.reclaimRent({ userPrivateKey: w.key, priorityFee: 0, idempotencyKey });
    assert.equal(result.status, 'success', result.message ?? '');
    const after = await getLamports(t.chain, w.signer.address);
    // Without the Idempotency-Key record this would be a new reclaim: 400 NOTHING_TO_RECLAIM.
    const replay = await client.reclaimRent({ userPrivateKey: w.key, priorityFee: 0, idempotencyKey });
    assert.deepEqual(replay, result);
    assert.equal(await getLamports(t.chain, w.signer.address), after);
  });

  it('refuses a bad owner and a bad mint list with the server\'s codes', async () => {
    const owner = await rejection(client.previewReclaim({ owner: 'not-an-address' }));
    assert.deepEqual([owner.status, owner.code], [400, 'INVALID_OWNER']);
    const { signer } = await createFundedSigner(t.chain);
    const mints = await rejection(client.previewReclaim({ owner: signer.address, burn: ['nope'] }));
    assert.deepEqual([mints.status, mints.code], [400, 'INVALID_MINT']);
    const none = await rejection(client.reclaimRent({ userPrivateKey: 'x'.repeat(10), priorityFee: 0 }));
    assert.deepEqual([none.status, none.code], [400, 'INVALID_PRIVATE_KEY']);
    const argument = await rejection(client.previewReclaim({ owner: '' }));
    assert.deepEqual([argument.status, argument.code], [0, 'INVALID_ARGUMENT']);
  });
});

describe('prepare → sign with kit → relay', () => {
  it('prepareReclaim: the wallet signs, relay lands it, the owner gains the prepared net', async () => {
    const w = await walletToReclaim(t.chain, { classic: 2, frozen: false, kept: false });
    const owner = w.signer.address;
    const prepared = await client.prepareReclaim({ owner, priorityFee: 0 });
    assert.equal(prepared.feePayer, owner);
    assert.equal(prepared.relayToken, undefined, 'not sponsored');
    assert.match(prepared.lastValidBlockHeight, /^[0-9]+$/);
    assert.equal(prepared.transactions.length, prepared.details.summary.transactions);
    assert.equal(prepared.details.summary.reclaimLamports, String(await lamportsOf(t.chain, w.closable)));

    const unsigned = await rejection(client.relay({ transactions: prepared.transactions }));
    assert.deepEqual([unsigned.status, unsigned.code], [400, 'TRANSACTION_NOT_SIGNED']);

    const before = await getLamports(t.chain, owner);
    const result = await client.relay({ transactions: await signPrepared(prepared.transactions, w.signer) });
    assert.equal(result.status, 'success', result.message ?? '');
    assert.equal(result.signatures.length, prepared.transactions.length);
    assert.equal((await getLamports(t.chain, owner)) - before, BigInt(prepared.details.summary.netLamports));
    assert.deepEqual(await stillOpen(t.chain, w.closable), []);
  });

  it('prepareBurn: the wallet signs, relay burns and closes; relaying it again answers by signature', async () => {
    const { signer } = await createFundedSigner(t.chain);
    const mint = await createTestMint(t.chain, signer, { decimals: 6 });
    const ata: Address = await createAta(t.chain, signer, signer.address, mint);
    await mintTokens(t.chain, signer, mint, ata, 1_234_500_000n);
    const prepared = await client.prepareBurn({ owner: signer.address, mint, priorityFee: 0 });
    assert.equal(prepared.transactions.length, 1);
    const signed = await signPrepared(prepared.transactions, signer);
    const before = await getLamports(t.chain, signer.address);
    const result = await client.relay({ transactions: signed });
    assert.equal(result.status, 'success', result.message ?? '');
    assert.equal((await fetchMint(t.chain.rpc, mint)).data.supply, 0n);
    assert.equal(await getLamports(t.chain, ata), 0n);
    assert.equal((await getLamports(t.chain, signer.address)) - before, 2_039_280n - 5_000n, 'the rent of a 165-byte account, less one signature');

    const again = await client.relay({ transactions: signed });
    assert.equal(again.transactionId, result.transactionId);
    assert.equal(again.status, 'success');
    assert.equal((await getLamports(t.chain, signer.address)) - before, 2_039_280n - 5_000n, 'nothing moved twice');
  });
});
