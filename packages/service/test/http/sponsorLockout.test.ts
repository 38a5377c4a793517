/**
 * No lockout: what nobody signed blocks nobody (the contract's "No lockout"), end to end on the
 * embedded chain, balances to the lamport. A stranger prepares sponsored reclaims and burns naming
 * a victim's wallet (no key, no signature); the victim's keyed reclaim, its own sponsored prepare
 * and relay, its owner-paid relayed reclaim, and an operator's many-owner reclaim naming it all go
 * through. And without Redis, a sponsor's start warns that a restart forgets strikes, turns and
 * losses.
 *
 * Solana facts relied on: the fee of a transaction is 5,000 lamports per signature plus its
 * priority fee (`meta.fee` of getTransaction); closing an empty 165-byte SPL Token account returns
 * 2,039,280 lamports to the destination.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  airdropFactory,
  createKeyPairSignerFromBytes,
  lamports as sol,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import type { Sponsor } from '../../src/keys/sponsor.ts';
import { createAuxTokenAccount, createFundedSigner, createSponsoredTestApp, createTestApp, createTestKey, createTestMint, getLamports, startTestRedis, type SponsoredTestApp, type TestApp } from '@cinder/testkit';

const TOKEN_ACCOUNT_RENT = 2_039_280n;

let t: TestApp;
let sponsor: Sponsor;
let sponsored: SponsoredTestApp;
let funder: KeyPairSigner;

before(async () => {
  sponsored = await createSponsoredTestApp(5_000_000_000n);
  ({ t, sponsor } = sponsored);
  funder = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
});
after(() => sponsored.close());

interface Victim {
  owner: KeyPairSigner;
  base58Key: string;
  mint: Address;
  accounts: Address[];
}

/** A wallet with `lamports` SOL and `count` empty token accounts of a fresh mint, paid by the funder. */
async function victim(count = 2, lamports = 0n): Promise<Victim> {
  const key = await createTestKey();
  const owner = await createKeyPairSignerFromBytes(key.secretKey);
  const mint = await createTestMint(t.chain, funder, { decimals: 0 });
  const accounts: Address[] = [];
  for (let i = 0; i < count; i++) accounts.push(await createAuxTokenAccount(t.chain, funder, owner.address, mint));
  if (lamports > 0n) {
    await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({ recipientAddress: owner.address, lamports: sol(lamports), commitment: 'confirmed' });
  }
  return { owner, base58Key: key.base58SecretKey, mint, accounts };
}

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
const sponsorBalance = () => getLamports(t.chain, sponsor.signer.address);

/** The stranger's attack: sponsored prepares of the victim's reclaim and burn, signed by nobody. */
async function strangerPrepares(target: Victim): Promise<void> {
  const reclaim = await post('/api/reclaim_rent/prepare', { owner: target.owner.address, priorityFee: 0, feePayer: 'sponsor' });
  assert.equal(reclaim.statusCode, 200, reclaim.body);
  assert.equal(typeof reclaim.json().relayToken, 'string');
  const burn = await post('/api/burn_tokens/prepare', { mint: target.mint, owner: target.owner.address, priorityFee: 0, feePayer: 'sponsor' });
  assert.equal(burn.statusCode, 200, burn.body);
}

async function signAll(wires: string[], owner: KeyPairSigner): Promise<string[]> {
  return Promise.all(
    wires.map(async (wire) => getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], getTransactionDecoder().decode(getBase64Encoder().encode(wire))))),
  );
}

/** The fees the chain charged; version 1 read too: a keyed many-owner reclaim is v1 where the cluster's gate is active. */
async function chainFees(signatures: Signature[]): Promise<bigint> {
  let sum = 0n;
  for (const signature of signatures) {
    const transaction = await t.chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 1, encoding: 'json' }).send();
    assert.ok(transaction?.meta, `transaction ${signature} is on the chain`);
    sum += transaction.meta.fee;
  }
  return sum;
}

const closed = async (address: Address) => (await t.chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value === null;

describe('a prepare nobody signed blocks nobody', () => {
  it('after a stranger\'s sponsored prepares, the victim\'s keyed reclaim lands: the victim gets its rent − fees, the sponsor ends where it began', async () => {
    const target = await victim(3);
    const before = await sponsorBalance();
    await strangerPrepares(target);
    const keyed = await post('/api/reclaim_rent', { priorityFee: 0, userPrivateKey: target.base58Key });
    assert.equal(keyed.statusCode, 200, keyed.body);
    assert.equal(keyed.json().status, 'success', keyed.json().message);
    assert.equal(keyed.json().details.sponsored, true, 'a 0-SOL wallet is sponsored');
    const fees = await chainFees(keyed.json().details.signatures);
    assert.equal(await getLamports(t.chain, target.owner.address), 3n * TOKEN_ACCOUNT_RENT - fees);
    assert.equal(await sponsorBalance(), before);
    for (const account of target.accounts) assert.ok(await closed(account));
  });

  it('after a stranger\'s sponsored prepares, the victim\'s own sponsored prepare and its signed relay go through, to the lamport', async () => {
    const target = await victim(2);
    const before = await sponsorBalance();
    await strangerPrepares(target);
    const prepared = await post('/api/reclaim_rent/prepare', { owner: target.owner.address, priorityFee: 0, feePayer: 'sponsor' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const relayed = await post('/api/transactions', { transactions: await signAll(prepared.json().transactions, target.owner), relayToken: prepared.json().relayToken });
    assert.equal(relayed.statusCode, 200, relayed.body);
    assert.equal(relayed.json().status, 'success', relayed.json().message);
    const fees = await chainFees(relayed.json().details.signatures);
    assert.equal(await getLamports(t.chain, target.owner.address), 2n * TOKEN_ACCOUNT_RENT - fees);
    assert.equal(await sponsorBalance(), before);
  });

  it('after a stranger\'s sponsored prepares, the victim\'s owner-paid prepare and relay go through, to the lamport', async () => {
    const funding = 10_000_000n;
    const target = await victim(2, funding);
    assert.equal(await getLamports(t.chain, target.owner.address), funding);
    await strangerPrepares(target);
    const prepared = await post('/api/reclaim_rent/prepare', { owner: target.owner.address, priorityFee: 0 });
    assert.equal(prepared.statusCode, 200, prepared.body);
    assert.equal(prepared.json().feePayer, target.owner.address);
    const relayed = await post('/api/transactions', { transactions: await signAll(prepared.json().transactions, target.owner) });
    assert.equal(relayed.statusCode, 200, relayed.body);
    assert.equal(relayed.json().status, 'success', relayed.json().message);
    const fees = await chainFees(relayed.json().details.signatures);
    assert.equal(await getLamports(t.chain, target.owner.address), funding + 2n * TOKEN_ACCOUNT_RENT - fees);
  });

  it('after a stranger\'s sponsored prepares, an operator\'s many-owner keyed reclaim naming the victim lands, to the lamport', async () => {
    const target = await victim(2);
    const neighbour = await victim(1);
    const { signer: destinationSigner } = await createFundedSigner(t.chain, 1_000_000_000n);
    const { signer: payer, secretKey } = await createFundedSigner(t.chain, 1_000_000_000n);
    await strangerPrepares(target);
    const destinationBefore = await getLamports(t.chain, destinationSigner.address);
    const payerBefore = await getLamports(t.chain, payer.address);
    const response = await post('/api/reclaim_rent', {
      userPrivateKeys: [target.base58Key, neighbour.base58Key],
      feePayerPrivateKey: getBase58Decoder().decode(secretKey),
      destination: destinationSigner.address,
      priorityFee: 0,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'success', response.json().message);
    const fees = await chainFees(response.json().details.signatures);
    assert.equal(await getLamports(t.chain, destinationSigner.address), destinationBefore + 3n * TOKEN_ACCOUNT_RENT);
    assert.equal(await getLamports(t.chain, payer.address), payerBefore - fees);
    for (const account of [...target.accounts, ...neighbour.accounts]) assert.ok(await closed(account));
  });
});

describe('a restart without Redis', () => {
  it('a sponsor without REDIS_URL: the start warns that a restart forgets strikes, turns and losses; with Redis it does not', async () => {
    const warning = /fee sponsor without REDIS_URL: its strikes, turns and losses are kept in this process only, and a restart forgets them/;
    const warnings = (app: TestApp) =>
      app
        .logs()
        .split('\n')
        .filter((line) => warning.test(line))
        .map((line) => (JSON.parse(line) as { level: number }).level);
    assert.deepEqual(warnings(t), [40], 'one warning, at level warn');
    const redis = await startTestRedis();
    const withRedis = await createTestApp({ redisUrl: redis.url }, { chain: t.chain, sponsor });
    const withoutSponsor = await createTestApp({}, { chain: t.chain });
    try {
      assert.deepEqual(warnings(withRedis), []);
      assert.deepEqual(warnings(withoutSponsor), []);
    } finally {
      await withRedis.close();
      await withoutSponsor.close();
      await redis.stop();
    }
  });
});
