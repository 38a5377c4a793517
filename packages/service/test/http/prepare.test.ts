/**
 * Keyless prepare: the unsigned transactions of the same plan as the keyed operation, which a
 * wallet signs (here @solana/kit, as a user's script would) and sends itself; checked on chain to
 * the lamport. (Relaying them through POST /api/transactions is tested in test/http/relay*.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  airdropFactory,
  createKeyPairFromBytes,
  lamports,
  getBase64Encoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  signTransaction,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, getLamports, mintTokens } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';

let t: TestApp;
let payer: KeyPairSigner;

before(async () => {
  t = await createTestApp();
  payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
});
after(() => t.close());

/** What a wallet does with a prepared transaction: decode, sign with the owner's key, send. */
async function signAndSend(wire: string, secretKey: Uint8Array): Promise<string> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const signed = await signTransaction([await createKeyPairFromBytes(secretKey)], transaction);
  return t.chain.rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
}

async function confirmed(signature: string) {
  for (let i = 0; i < 200; i++) {
    const { value } = await t.chain.rpc.getSignatureStatuses([signature as never]).send();
    if (value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized') return value[0];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${signature} did not confirm`);
}

describe('POST /api/reclaim_rent/prepare and /api/burn_tokens/prepare', () => {
  it('returns unsigned transactions of the preview\'s plan; signed by the wallet they land, and the owner gets the preview\'s net', async () => {
    const owner = await createTestKey();
    // Fund the owner and give it three empty accounts and a balance to keep.
    await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({ recipientAddress: owner.address, lamports: lamports(10_000_000n), commitment: 'confirmed' });
    const empties: Address[] = [];
    for (let i = 0; i < 3; i++) empties.push(await createAta(t.chain, payer, owner.address, await createTestMint(t.chain, payer, { decimals: 0 })));
    const keptMint = await createTestMint(t.chain, payer, { decimals: 0 });
    await mintTokens(t.chain, payer, keptMint, await createAta(t.chain, payer, owner.address, keptMint), 4n);

    const preview = (await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.address}` })).json();
    const response = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner: owner.address, priorityFee: 0 } });
    assert.equal(response.statusCode, 200, response.body);
    const prepared = response.json();
    assert.equal(prepared.feePayer, owner.address);
    assert.equal(prepared.relayToken, undefined, 'no relay token when the owner pays');
    assert.deepEqual(prepared.details.summary, preview.summary, 'the same plan as the preview');
    assert.equal(prepared.transactions.length, 1);
    assert.match(prepared.lastValidBlockHeight, /^[0-9]+$/);
    // Unsigned: one signature slot, zeroed.
    const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(prepared.transactions[0]));
    assert.deepEqual(Object.values(decoded.signatures), [null]);

    const before = await getLamports(t.chain, owner.address);
    const signature = await signAndSend(prepared.transactions[0], owner.secretKey);
    assert.equal((await confirmed(signature)).err, null);
    assert.equal(await getLamports(t.chain, owner.address), before + BigInt(preview.summary.netLamports));
    for (const account of empties) assert.equal(await getLamports(t.chain, account), 0n);
  });

  it('prepare of a burn for an owner that cannot pay: 400 INSUFFICIENT_SOL_FOR_FEE (no sponsor configured: 503 when asked for one)', async () => {
    const owner = await createTestKey();
    const mint = await createTestMint(t.chain, payer, { decimals: 0 });
    await mintTokens(t.chain, payer, mint, await createAta(t.chain, payer, owner.address, mint), 4n);
    const refused = await t.app.inject({ method: 'POST', url: '/api/burn_tokens/prepare', payload: { owner: owner.address, mint, priorityFee: 0 } });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    const noSponsor = await t.app.inject({ method: 'POST', url: '/api/burn_tokens/prepare', payload: { owner: owner.address, mint, priorityFee: 0, feePayer: 'sponsor' } });
    assert.equal(noSponsor.statusCode, 503);
    assert.equal(noSponsor.json().code, 'SPONSOR_UNAVAILABLE');
  });

  it('rejects a private key sent to prepare (it takes an owner address, not a key)', async () => {
    const owner = await createTestKey();
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/reclaim_rent/prepare',
      payload: { owner: owner.address, priorityFee: 0, userPrivateKey: owner.base58SecretKey },
    });
    assert.equal(response.statusCode, 400);
    assert.ok(!response.body.includes(owner.base58SecretKey));
  });
});
