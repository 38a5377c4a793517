/**
 * The keyed door with a 0-SOL wallet of several transactions, on the embedded chain, to the
 * lamport: the fee sponsor pays only the first transaction (and is repaid in it); the owner pays
 * every later one from the rent the first returned (src/plan/sponsoredPrefix.ts). The chain's own
 * record of each transaction says who paid: its first account key is the fee payer, `meta.fee` what
 * it was charged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type KeyPairSigner,
  type Signature,
  createKeyPairSignerFromBytes,
} from '@solana/kit';
import { createSponsoredTestApp, createTestKey, getLamports, writeEmptyTokenAccounts, type SponsoredTestApp, type TestKey } from '@cinder/testkit';

// More closes than two legacy transactions hold, so the keyless plan (legacy by default) has at least three.
const ACCOUNTS = 70;
// The keyed door signs v1 where the cluster's gate is active (about 60 closes each): more than two hold.
const KEYED_ACCOUNTS = 130;
const TOKEN_ACCOUNT_RENT = 2_039_280n;

let s: SponsoredTestApp;
let owner: TestKey;
let keyless: TestKey;
let keylessSigner: KeyPairSigner;

before(async () => {
  s = await createSponsoredTestApp(5_000_000_000n);
  owner = await createTestKey();
  await writeEmptyTokenAccounts(s.t.chain, owner.address, KEYED_ACCOUNTS);
  keyless = await createTestKey();
  keylessSigner = await createKeyPairSignerFromBytes(keyless.secretKey);
  await writeEmptyTokenAccounts(s.t.chain, keyless.address, ACCOUNTS);
});

/** What a wallet does: add the owner's signature to a prepared transaction (the sponsor's slot stays empty). */
async function signAsWallet(base64Wire: string): Promise<string> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64Wire));
  return getBase64EncodedWireTransaction(await partiallySignTransaction([keylessSigner.keyPair], transaction));
}

const relay = (transactions: string[], relayToken?: string) =>
  s.t.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions, ...(relayToken ? { relayToken } : {}) } });
after(() => s.close());

async function onChain(signature: Signature): Promise<{ feePayer: string; fee: bigint; version: unknown }> {
  const transaction = await s.t.chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 1, encoding: 'json' }).send();
  if (!transaction?.meta) throw new Error(`transaction ${signature} is not on the chain`);
  return { feePayer: transaction.transaction.message.accountKeys[0]!, fee: transaction.meta.fee, version: transaction.version };
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
    assert.equal(BigInt(summary.netLamports), TOKEN_ACCOUNT_RENT * BigInt(KEYED_ACCOUNTS) - BigInt(summary.feeLamports));

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
    // Cinder signs, the gate is active: the sponsored one is v1 too, and repays the sponsor in itself.
    assert.deepEqual(landed.map((l) => l.version), signatures.map(() => 1));
    assert.equal(await getLamports(s.t.chain, owner.address), BigInt(summary.netLamports));
    assert.equal(await getLamports(s.t.chain, s.sponsor.signer.address), sponsorBefore, 'the sponsor ends where it began');
  });
});

describe('a 0-SOL wallet through keyless prepare and relay', () => {
  it('only the first is sponsored; a dependent relayed before it landed is refused with nothing sent; after it lands the rest land together', async () => {
    const sponsorBefore = await getLamports(s.t.chain, s.sponsor.signer.address);
    const prepare = await s.t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner: keyless.address, priorityFee: 0, feePayer: 'sponsor' } });
    assert.equal(prepare.statusCode, 200, prepare.body);
    const prepared = prepare.json();
    const n = prepared.transactions.length as number;
    assert.ok(n >= 3, `${n} transactions`);
    assert.ok(n <= 9, 'the owner-paid ones fit one relay request');
    assert.equal(prepared.sponsoredTransactions, 1);
    assert.deepEqual(prepared.dependsOn, [[], ...Array.from({ length: n - 1 }, () => [0])]);
    assert.equal(BigInt(prepared.details.summary.feeLamports), 10_000n + 5_000n * BigInt(n - 1));

    const signed = await Promise.all((prepared.transactions as string[]).map(signAsWallet));
    const signatureOf = (wire: string) => getSignatureFromTransaction(getTransactionDecoder().decode(getBase64Encoder().encode(wire)));
    const rest = signed.slice(1);

    // Too early: the owner holds nothing yet to pay these fees. Refused, nothing sent.
    const early = await relay(rest);
    assert.equal(early.statusCode, 400, early.body);
    assert.equal(early.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    const unknown = await s.t.chain.rpc.getSignatureStatuses(rest.map(signatureOf)).send();
    assert.ok(unknown.value.every((status) => status === null), 'none of them reached the chain');
    assert.equal(await getLamports(s.t.chain, keyless.address), 0n);

    // The owner-paid ones are not covered by the relay token: the sponsor signs only the first.
    const first = await relay([signed[0]!], prepared.relayToken);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().status, 'success', first.json().message);

    const together = await relay(rest);
    assert.equal(together.statusCode, 200, together.body);
    const body = together.json();
    assert.equal(body.status, 'success', body.message);
    assert.equal(body.details.transactions.length, n - 1);
    assert.ok(body.details.transactions.every((t: { sponsored: boolean }) => !t.sponsored));

    // The sponsored one's id is the sponsor's signature, added at the relay: its answer names it.
    const ids = [first.json().details.transactions[0].signature as Signature, ...rest.map(signatureOf)];
    const landed = await Promise.all(ids.map(onChain));
    assert.deepEqual(
      landed.map((l) => l.feePayer),
      [s.sponsor.signer.address, ...rest.map(() => keyless.address)],
    );
    assert.equal(await getLamports(s.t.chain, keyless.address), BigInt(prepared.details.summary.netLamports));
    assert.equal(BigInt(prepared.details.summary.netLamports), TOKEN_ACCOUNT_RENT * BigInt(ACCOUNTS) - BigInt(prepared.details.summary.feeLamports));
    assert.equal(await getLamports(s.t.chain, s.sponsor.signer.address), sponsorBefore, 'the sponsor ends where it began');
  });
});
