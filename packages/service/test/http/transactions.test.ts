import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getBurnCheckedInstruction } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, mintTokens } from '@cinder/testkit';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const get = (signature: string) => t.app.inject({ method: 'GET', url: `/api/transactions/${signature}` });

describe('GET /api/transactions/{signature}', () => {
  it('answers success for a confirmed burn', async () => {
    const { signer, secretKey } = await createFundedSigner(t.chain);
    const mint = await createTestMint(t.chain, signer, { decimals: 0 });
    const ata = await createAta(t.chain, signer, signer.address, mint);
    await mintTokens(t.chain, signer, mint, ata, 5n);
    const burn = await t.app.inject({
      method: 'POST',
      url: '/api/burn_tokens',
      payload: { mint, priorityFee: 0, userPrivateKey: getBase58Decoder().decode(secretKey) },
    });
    const { transactionId, details } = burn.json();
    const response = await get(transactionId);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      transactionId,
      tx_hash: transactionId,
      status: 'success',
      message: response.json().message,
      slot: details.slot,
    });
    assert.match(response.json().message, /^The transaction is (confirmed|finalized)\.$/);
  });

  it('answers failed, with the decoded reason, for a transaction that landed with an error', async () => {
    const { signer } = await createFundedSigner(t.chain);
    const mint = await createTestMint(t.chain, signer, { decimals: 0 });
    const ata = await createAta(t.chain, signer, signer.address, mint);
    await mintTokens(t.chain, signer, mint, ata, 5n);
    const { value: lifetime } = await t.chain.rpc.getLatestBlockhash().send();
    const signed = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) => appendTransactionMessageInstructions([getBurnCheckedInstruction({ account: ata, mint, authority: signer, amount: 6n, decimals: 0 })], m),
      ),
    );
    const signature = getSignatureFromTransaction(signed);
    await t.chain.rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: true }).send();
    const response = await get(signature);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'failed');
    assert.equal(
      response.json().message,
      'The transaction landed but failed: instruction 0 failed: InsufficientFunds (token program error 1, 0x1); nothing it contained took effect.',
    );
  });

  it('answers 404 TRANSACTION_NOT_FOUND for a signature the chain does not know', async () => {
    const unknown = getBase58Decoder().decode(new Uint8Array(64).fill(9));
    const response = await get(unknown);
    assert.equal(response.statusCode, 404);
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.deepEqual(response.json(), {
      type: 'urn:cinder:problem:transaction-not-found',
      title: 'Transaction not found',
      status: 404,
      detail: `The chain has no record of transaction ${unknown}.`,
      code: 'TRANSACTION_NOT_FOUND',
    });
  });

  it('answers 400 INVALID_SIGNATURE for a malformed signature', async () => {
    const response = await get('not-a-signature');
    assert.equal(response.statusCode, 400);
    assert.deepEqual(response.json(), {
      type: 'urn:cinder:problem:invalid-signature',
      title: 'Invalid transaction signature',
      status: 400,
      detail: 'signature is not a base58 transaction signature (64 bytes)',
      code: 'INVALID_SIGNATURE',
      errors: [{ field: 'signature', message: 'is not a base58 signature of 64 bytes' }],
    });
  });
});
