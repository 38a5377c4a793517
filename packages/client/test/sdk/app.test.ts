/**
 * The SDK against the real app (listening in this process) and the embedded local chain: every
 * method, the combined burn form, the typed errors of real problem answers, API keys, and a real
 * 429 whose Retry-After is longer than the client waits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { CinderApiError, createCinderClient, type CinderClient } from '../../src/index.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, getLamports, mintTokens } from '@cinder/testkit';

let t: TestApp;
let client: CinderClient;
const keysUsed: string[] = [];

before(async () => {
  t = await createTestApp();
  const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  client = createCinderClient({ baseUrl: url });
});
after(async () => {
  await t.close();
});

async function holder(): Promise<{ signer: KeyPairSigner; secretKey: Uint8Array; key: string; mint: Address; ata: Address }> {
  const { signer, secretKey } = await createFundedSigner(t.chain);
  const mint = await createTestMint(t.chain, signer, { decimals: 6 });
  const ata = await createAta(t.chain, signer, signer.address, mint);
  await mintTokens(t.chain, signer, mint, ata, 1_234_500_000n);
  const key = getBase58Decoder().decode(secretKey);
  keysUsed.push(key);
  return { signer, secretKey, key, mint, ata };
}

async function rejection(promise: Promise<unknown>): Promise<CinderApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CinderApiError, String(error));
    for (const key of keysUsed) assert.ok(!`${error.message} ${error.stack} ${JSON.stringify(error)}`.includes(key), 'no key in the error');
    return error;
  }
  assert.fail('expected a rejection');
}

describe('the SDK against the real app', () => {
  it('generateWallets(n) returns n addresses and their keypairs', async () => {
    const { wallets, keypairs } = await client.generateWallets(3);
    assert.equal(wallets.length, 3);
    assert.deepEqual(
      keypairs.map((k) => k.address),
      wallets,
    );
    for (const k of keypairs) assert.match(k.privateKey, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    const keygen = await client.generateWallets(1, { format: 'keygen' });
    assert.equal(keygen.keypairs[0]!.secretKeyBytes?.length, 64);
  });

  it('burnTokens burns, closes and normalises the combined form; getTransaction reads its status', async () => {
    const h = await holder();
    const before = await getLamports(t.chain, h.signer.address);
    const result = await client.burnTokens({ mint: h.mint, priorityFee: 0.000001, userPrivateKey: h.key });
    assert.equal(result.form, 'A+B');
    assert.equal(result.status, 'success', result.message ?? '');
    assert.match(result.message!, /^Burned 1,234\.5 of /);
    assert.deepEqual(result.signatures, [result.transactionId]);
    assert.equal(result.details?.burnedAmount, '1234500000');
    assert.deepEqual(result.details?.closedAccounts, [h.ata]);
    assert.equal((await fetchMint(t.chain.rpc, h.mint)).data.supply, 0n);
    assert.ok((await getLamports(t.chain, h.signer.address)) > before, 'the rent came back');

    const status = await client.getTransaction(result.transactionId);
    assert.equal(status.transactionId, result.transactionId);
    assert.equal(status.status, 'success');
    assert.equal(typeof status.slot, 'number');
  });

  it('a repeated Idempotency-Key returns the first answer', async () => {
    const h = await holder();
    const first = await client.burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.secretKey }, { idempotencyKey: `test-${h.mint}` });
    assert.equal(first.status, 'success');
    const again = await client.burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.secretKey }, { idempotencyKey: `test-${h.mint}` });
    assert.deepEqual(again, first);
    // Without the key, the same burn is a new request: nothing is left to burn.
    const error = await rejection(client.burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.secretKey }));
    assert.equal(error.code, 'NO_TOKEN_ACCOUNT');
  });

  it('throws the problem answers as CinderApiError', async () => {
    const h = await holder();
    const invalidMint = await rejection(client.burnTokens({ mint: 'not-a-mint', priorityFee: 0, userPrivateKey: h.key }));
    assert.equal(invalidMint.status, 400);
    assert.equal(invalidMint.code, 'INVALID_MINT');
    assert.equal(invalidMint.detail, 'mint is not a valid base58 Solana address (32 bytes)');
    assert.deepEqual(invalidMint.errors, [{ field: 'mint', message: 'is not a base58 address of 32 bytes' }]);
    assert.equal(invalidMint.type, 'urn:cinder:problem:invalid-mint');
    assert.match(invalidMint.requestId ?? '', /^[0-9a-f-]{36}$/);

    const badKey = await rejection(client.burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key.slice(0, -4) }));
    assert.equal(badKey.code, 'INVALID_PRIVATE_KEY');
    const fee = await rejection(client.burnTokens({ mint: h.mint, priorityFee: 1, userPrivateKey: h.key }));
    assert.equal(fee.code, 'INVALID_PRIORITY_FEE');

    const signature = await rejection(client.getTransaction('not-a-signature'));
    assert.deepEqual([signature.status, signature.code], [400, 'INVALID_SIGNATURE']);
    const unknown = await rejection(client.getTransaction('5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW'));
    assert.deepEqual([unknown.status, unknown.code], [404, 'TRANSACTION_NOT_FOUND']);
    const n = await rejection(client.generateWallets(t.config.maxWalletsPerRequest + 1));
    assert.deepEqual([n.status, n.code], [400, 'INVALID_N']);
  });
});

describe('the SDK against an app with API keys and low rate limits', () => {
  let strict: TestApp;
  let url: string;
  before(async () => {
    strict = await createTestApp({ apiKeys: ['sdk-test-key'], rateLimit: { burnPerMin: 10, generatePerMin: 2, walletsPerMin: 100 } }, { chain: t.chain });
    url = await strict.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await strict.close();
  });

  it('sends the API key; without it the error is 401 UNAUTHORIZED', async () => {
    const anonymous = await rejection(createCinderClient({ baseUrl: url }).generateWallets(1));
    assert.deepEqual([anonymous.status, anonymous.code], [401, 'UNAUTHORIZED']);
    const keyed = createCinderClient({ baseUrl: url, apiKey: 'sdk-test-key' });
    assert.equal((await keyed.generateWallets(1)).wallets.length, 1);
  });

  it('does not wait for a Retry-After longer than maxDelayMs: 429 RATE_LIMITED with retryAfterMs', async () => {
    const keyed = createCinderClient({ baseUrl: url, apiKey: 'sdk-test-key', retry: { maxDelayMs: 5_000 } });
    await keyed.generateWallets(1).catch(() => undefined); // the second request of this minute
    const started = Date.now();
    const limited = await rejection(keyed.generateWallets(1));
    assert.deepEqual([limited.status, limited.code], [429, 'RATE_LIMITED']);
    assert.ok(limited.retryAfterMs! > 5_000, `Retry-After ${limited.retryAfterMs} ms`);
    // Waiting would have taken the Retry-After, over 5 s: anything shorter means it did not wait.
    assert.ok(Date.now() - started < 5_000, 'answered without waiting for Retry-After');
  });
});
