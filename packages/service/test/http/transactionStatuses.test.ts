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
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getBurnCheckedInstruction } from '@solana-program/token';
import { createAta, createFundedSigner, createTestApp, createTestKey, createTestMint, mintTokens, type TestApp } from '@cinder/testkit';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const statuses = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/transactions/statuses', payload: payload as object });

/** A burn of `amount` of 5 tokens sent straight to the chain (not through the service): more than 5 fails on chain. */
async function sendBurn(amount: bigint): Promise<string> {
  const { signer } = await createFundedSigner(t.chain);
  const { mint, ata } = await holder(signer);
  const { value: lifetime } = await t.chain.rpc.getLatestBlockhash().send();
  const signed = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([getBurnCheckedInstruction({ account: ata, mint, authority: signer, amount, decimals: 0 })], m),
    ),
  );
  await t.chain.rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: true }).send();
  return getSignatureFromTransaction(signed);
}

async function holder(signer: KeyPairSigner): Promise<{ mint: Address; ata: Address }> {
  const mint = await createTestMint(t.chain, signer, { decimals: 0 });
  const ata = await createAta(t.chain, signer, signer.address, mint);
  await mintTokens(t.chain, signer, mint, ata, 5n);
  return { mint, ata };
}

describe('POST /api/transactions/statuses', () => {
  it('answers every signature in order: a landed burn, one that failed on chain (why, in words), one nobody knows', async () => {
    const { signer, secretKey } = await createFundedSigner(t.chain);
    const { mint } = await holder(signer);
    const burn = await t.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: { mint, priorityFee: 0, userPrivateKey: getBase58Decoder().decode(secretKey) } });
    assert.equal(burn.statusCode, 200, burn.body);
    const landed = burn.json().transactionId as string;
    const failing = await sendBurn(6n);
    const nobody = getBase58Decoder().decode(new Uint8Array(64).fill(9));

    // Held open until the failing one (sent a moment ago) settles too: each is asked for until it is no longer pending.
    let pending = [landed, failing, nobody];
    const seen = new Map<string, { status: string; slot: number | null; error: string | null }>();
    while (pending.length > 0) {
      const response = await statuses({ signatures: pending, waitMs: 10_000 });
      assert.equal(response.statusCode, 200, response.body);
      const { transactions } = response.json() as { transactions: { signature: string; status: string; slot: number | null; error: string | null }[] };
      assert.deepEqual(transactions.map((e) => e.signature), pending, 'one entry per signature, in order');
      for (const e of transactions) seen.set(e.signature, e);
      pending = transactions.filter((e) => e.status === 'pending').map((e) => e.signature);
    }
    assert.deepEqual(seen.get(landed), { signature: landed, status: 'success', slot: burn.json().details.slot, error: null });
    assert.equal(seen.get(failing)!.status, 'failed');
    assert.equal(typeof seen.get(failing)!.slot, 'number');
    assert.match(seen.get(failing)!.error!, /InsufficientFunds/);
    assert.deepEqual(seen.get(nobody), { signature: nobody, status: 'unknown', slot: null, error: null });
  });

  it('with waitMs, a transaction sent a moment ago is answered settled, not pending', async () => {
    const signature = await sendBurn(1n);
    const response = await statuses({ signatures: [signature], waitMs: 10_000 });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().transactions[0].status, 'success');
  });

  it('refuses malformed items by index, a private key without echoing it, and more than 128 signatures', async () => {
    const good = getBase58Decoder().decode(new Uint8Array(64).fill(7));
    const bad = await statuses({ signatures: [good, 'not-a-signature'] });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'INVALID_SIGNATURE');
    assert.deepEqual(bad.json().errors, [{ field: 'signatures[1]', message: 'is not a base58 signature of 64 bytes' }]);

    const key = (await createTestKey()).base58SecretKey;
    const withKey = await statuses({ signatures: [good, key] });
    assert.equal(withKey.statusCode, 400);
    assert.equal(withKey.json().code, 'INVALID_SIGNATURE');
    assert.deepEqual(withKey.json().errors, [{ field: 'signatures[1]', message: 'is a private key, not a signature' }]);
    assert.ok(!withKey.body.includes(key), 'the key is not echoed');

    const tooMany = await statuses({ signatures: Array.from({ length: 129 }, () => good) });
    assert.equal(tooMany.statusCode, 400);
    const tooLong = await statuses({ signatures: [good], waitMs: 10_001 });
    assert.equal(tooLong.statusCode, 400);
  });
});
