/**
 * The keyed door with a 0-SOL wallet of several transactions, on the embedded chain, to the
 * lamport: the fee sponsor pays only the first transaction (and is repaid in it); the owner pays
 * every later one from the rent the first returned (src/plan/sponsoredPrefix.ts). The chain's own
 * record of each transaction says who paid: its first account key is the fee payer, `meta.fee` what
 * it was charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Signature } from '@solana/kit';
import { createSponsoredTestApp, createTestKey, getLamports, writeEmptyTokenAccounts, type SponsoredTestApp, type TestKey } from '@cinder/testkit';

// More closes than two legacy transactions hold, so the plan has at least three.
const ACCOUNTS = 70;
const TOKEN_ACCOUNT_RENT = 2_039_280n;

let s: SponsoredTestApp;
let owner: TestKey;

before(async () => {
  s = await createSponsoredTestApp(5_000_000_000n);
  owner = await createTestKey();
  await writeEmptyTokenAccounts(s.t.chain, owner.address, ACCOUNTS);
});
after(() => s.close());

async function onChain(signature: Signature): Promise<{ feePayer: string; fee: bigint }> {
  const transaction = await s.t.chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  if (!transaction?.meta) throw new Error(`transaction ${signature} is not on the chain`);
  return { feePayer: transaction.transaction.message.accountKeys[0]!, fee: transaction.meta.fee };
}

describe('a 0-SOL wallet through the keyed door', () => {
  it('the sponsor pays only the first transaction; the owner pays the rest; the owner ends at the preview\'s net and the sponsor where it began', async () => {
    assert.equal(await getLamports(s.t.chain, owner.address), 0n);
    const sponsorBefore = await getLamports(s.t.chain, s.sponsor.signer.address);
    const preview = await s.t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.address}&priorityFee=0` });
    assert.equal(preview.statusCode, 200, preview.body);
    const { summary } = preview.json();
    assert.equal(summary.problem, null);
    assert.ok(summary.transactions >= 3, `${summary.transactions} transactions`);
    // One sponsored transaction (two signatures), every other one the owner's alone.
    assert.equal(BigInt(summary.feeLamports), 10_000n + 5_000n * BigInt(summary.transactions - 1));
    assert.equal(BigInt(summary.netLamports), TOKEN_ACCOUNT_RENT * BigInt(ACCOUNTS) - BigInt(summary.feeLamports));

    const reclaim = await s.t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee: 0 } });
    assert.equal(reclaim.statusCode, 200, reclaim.body);
    const body = reclaim.json();
    assert.equal(body.status, 'success', body.message);
    assert.equal(body.details.netLamports, summary.netLamports, 'preview net = reclaim net');
    const signatures = body.details.signatures as Signature[];
    assert.equal(signatures.length, summary.transactions);

    const landed = await Promise.all(signatures.map(onChain));
    assert.deepEqual(
      landed.map((l) => l.feePayer),
      [s.sponsor.signer.address, ...signatures.slice(1).map(() => owner.address)],
      'the sponsor is the fee payer of the first transaction only',
    );
    assert.deepEqual(landed.map((l) => l.fee), [10_000n, ...signatures.slice(1).map(() => 5_000n)]);
    assert.equal(await getLamports(s.t.chain, owner.address), BigInt(summary.netLamports));
    assert.equal(await getLamports(s.t.chain, s.sponsor.signer.address), sponsorBefore, 'the sponsor ends where it began');
  });
});
