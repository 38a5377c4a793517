/**
 * The lists of the many-owner doors name every bad item at once and echo none of them: a private
 * key pasted among addresses (owners, feePayer, destination) is named as a key to treat as exposed;
 * every bad key of `userPrivateKeys` is named by its index, a wallet address pasted as a key among
 * them too (read from the chain: the seed it would be opens an empty wallet); a list longer than
 * MAX_OWNERS_PER_REQUEST names that variable. Nothing is sent in any of these cases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKeyPairSignerFromBytes, generateKeyPairSigner, getBase58Decoder, type Address } from '@solana/kit';
import {
  createAta,
  createFundedSigner,
  createTestApp,
  createTestKey,
  createTestMint,
  startTestChain,
  type TestApp,
  type TestChain,
  type TestKey,
} from '@cinder/testkit';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';

let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let keys: TestKey[];
let addresses: Address[];

before(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
  t = await createTestApp({ logLevel: 'trace' }, { chain, chainAdapter: { rpcUrl: proxy.url } });
  keys = await Promise.all(Array.from({ length: 4 }, () => createTestKey()));
  addresses = await Promise.all(Array.from({ length: 4 }, async () => (await generateKeyPairSigner()).address));
});
after(async () => {
  await t?.close();
  await proxy?.close();
  await chain?.close();
});

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as object });

/** Neither the key nor any 12 characters of it are in the text (the answer, the log). */
function assertNoKey(text: string, key: string): void {
  for (let i = 0; i + 12 <= key.length; i += 6) assert.ok(!text.includes(key.slice(i, i + 12)), 'a piece of a key was echoed');
}

interface Problem {
  code: string;
  detail: string;
  errors: { field: string; message: string }[];
}

describe('the many-owner doors name every bad item at once, echoing nothing', () => {
  it('preview: two keys pasted among the owners and a bad address, each named by its index', async () => {
    const pasted = [keys[0]!.base58SecretKey, JSON.stringify([...keys[1]!.secretKey])];
    const owners = [addresses[0], pasted[0], addresses[1], pasted[1], 'not-an-address'];
    proxy.reset();
    const response = await post('/api/reclaim_rent/preview', { owners });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<Problem>();
    assert.deepEqual(
      body.errors.map((e) => [e.field, e.message]),
      [
        ['owners[1]', 'looks like a private key: treat it as exposed'],
        ['owners[3]', 'looks like a private key: treat it as exposed'],
        ['owners[4]', 'is not a base58 address of 32 bytes'],
      ],
    );
    assert.match(body.detail, /owners\[1\] looks like a private key: treat it as exposed/);
    assert.match(body.detail, /move what its wallet holds to a new wallet/);
    for (const key of pasted) assertNoKey(response.body, key);
    for (const key of pasted) assertNoKey(t.logs(), key);
    assert.equal(proxy.requests.length, 0, 'refused before any read of the chain');
  });

  it('keyless prepare: a key as an owner, as the fee payer and as the destination, all three named', async () => {
    const response = await post('/api/reclaim_rent/prepare', {
      owners: [addresses[0], keys[0]!.base58SecretKey, addresses[0]],
      feePayer: keys[1]!.base58SecretKey,
      destination: keys[2]!.base58SecretKey,
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<Problem>();
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['owners[1]', 'owners[2]', 'feePayer', 'destination'],
    );
    assert.match(body.errors[1]!.message, /same owner as owners\[0\]/);
    assert.equal(body.errors[2]!.message, 'looks like a private key: treat it as exposed');
    for (const key of keys.slice(0, 3)) assertNoKey(response.body, key.base58SecretKey);
  });

  it('keyed reclaim: every bad key of userPrivateKeys named by its index, and a key pasted as the destination', async () => {
    const mismatched = new Uint8Array(keys[1]!.secretKey);
    mismatched[40] = mismatched[40]! ^ 1;
    const mismatchedText = getBase58Decoder().decode(mismatched);
    const response = await post('/api/reclaim_rent', {
      userPrivateKeys: [keys[0]!.base58SecretKey, 'not base58 0OIl', mismatchedText, keys[0]!.base58SecretKey, keys[3]!.base58SecretKey],
      feePayerPrivateKey: keys[2]!.base58SecretKey,
      destination: keys[2]!.base58SecretKey,
      priorityFee: 0,
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<Problem>();
    assert.equal(body.code, 'INVALID_PRIVATE_KEY');
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['userPrivateKeys[1]', 'userPrivateKeys[2]', 'userPrivateKeys[3]', 'destination'],
    );
    assert.match(body.errors[2]!.message, /same owner as userPrivateKeys\[0\]/);
    assert.equal(body.errors[3]!.message, 'looks like a private key: treat it as exposed');
    for (const key of [...keys.map((k) => k.base58SecretKey), mismatchedText]) {
      assertNoKey(response.body, key);
      assertNoKey(t.logs(), key);
    }
  });

  it('keyed reclaim: keys of the wrong shape are named by index by the schema too', async () => {
    const response = await post('/api/reclaim_rent', {
      userPrivateKeys: [keys[0]!.base58SecretKey, [1, 2, 3], 'x'.repeat(301), [...keys[1]!.secretKey]],
      feePayerPrivateKey: keys[2]!.base58SecretKey,
      destination: addresses[0],
      priorityFee: 0,
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<Problem>();
    assert.equal(body.code, 'INVALID_PRIVATE_KEY');
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['userPrivateKeys[1]', 'userPrivateKeys[2]'],
    );
    assertNoKey(response.body, keys[0]!.base58SecretKey);
  });

  it('keyed reclaim: wallet addresses pasted as keys are named, every one, and nothing is sent', async () => {
    const payer = (await createFundedSigner(chain, 10_000_000_000n)).signer;
    const mint = await createTestMint(chain, payer, { decimals: 0 });
    // Two wallets that hold an account each: their addresses, pasted as keys, read as 32-byte seeds.
    const holders = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    for (const holder of holders) await createAta(chain, payer, holder.address, mint);
    // A real owner with an empty account: it must still hold it afterwards.
    const owner = await createTestKey();
    const ownerAccount = await createAta(chain, payer, (await createKeyPairSignerFromBytes(owner.secretKey)).address, mint);
    const feePayer = (await createFundedSigner(chain, 1_000_000_000n)).secretKey;
    proxy.reset();
    const response = await post('/api/reclaim_rent', {
      userPrivateKeys: [holders[0]!.address, owner.base58SecretKey, holders[1]!.address],
      feePayerPrivateKey: getBase58Decoder().decode(feePayer),
      destination: addresses[3],
      priorityFee: 0,
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json<Problem>();
    assert.equal(body.code, 'INVALID_PRIVATE_KEY');
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['userPrivateKeys[0]', 'userPrivateKeys[2]'],
    );
    assert.match(body.errors[0]!.message, /looks like a wallet address, not a private key/);
    assert.equal(proxy.count('sendTransaction'), 0);
    assert.equal(proxy.count('simulateTransaction'), 0);
    const still = await chain.rpc.getAccountInfo(ownerAccount, { encoding: 'base64' }).send();
    assert.ok(still.value !== null, 'the real owner\'s account was not closed');
  });

  it('over MAX_OWNERS_PER_REQUEST: the variable is named, on every door that takes a list', async () => {
    const max = t.config.maxOwnersPerRequest;
    const many = Array.from({ length: max + 1 }, () => addresses[0]!);
    const cases = [
      ['/api/reclaim_rent/preview', { owners: many }, 'owners'],
      ['/api/reclaim_rent/prepare', { owners: many, feePayer: addresses[1], destination: addresses[2] }, 'owners'],
      ['/api/reclaim_rent', { userPrivateKeys: many, feePayerPrivateKey: keys[0]!.base58SecretKey, destination: addresses[2], priorityFee: 0 }, 'userPrivateKeys'],
    ] as const;
    for (const [url, payload, field] of cases) {
      const response = await post(url, payload);
      assert.equal(response.statusCode, 400, `${url}: ${response.body.slice(0, 300)}`);
      const body = response.json<Problem>();
      assert.deepEqual(body.errors, [{ field, message: `holds ${max + 1} items; at most ${max} per request (MAX_OWNERS_PER_REQUEST)` }], url);
      assert.match(body.detail, /MAX_OWNERS_PER_REQUEST/);
    }
  });
});
