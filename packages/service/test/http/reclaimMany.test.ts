/**
 * A reclaim of many wallets on the embedded chain, to the lamport (docs/many-wallets.md): the
 * preview of many owners against the chain (and the RPC calls it makes, counted at a proxy in front
 * of the chain), 12 wallets with no SOL and an SPL Token and a Token-2022 account each reclaimed
 * to one destination in at most 4 transactions, the fee payer paying exactly the fees and the
 * destination receiving exactly the rents, a frozen account skipped without blocking the others,
 * a wallet that changes between the read and the simulation left out without blocking the others,
 * the same through prepare, local signing and the relay, and the hostile cases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getCloseAccountInstruction } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, freezeTokenAccount, getLamports, mintTokens, startTestChain, type TestChain } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS } from '@cinder/testkit';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';
import { balancesOf, createEmptyWallets, signPrepared, sum, type ManyWallet } from './manyFixture.ts';

let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let payer: KeyPairSigner;
let mints: { mint: Address; tokenProgram?: Address }[];
let freezable: Address;

before(async () => {
  // The app reaches the chain through a counting proxy; at trace level, so that every log line is checked for keys.
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
  t = await createTestApp({ logLevel: 'trace' }, { chain, chainAdapter: { rpcUrl: proxy.url } });
  payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
  mints = [
    { mint: await createTestMint(t.chain, payer, { decimals: 0 }) },
    { mint: await createMint2022(t.chain, payer, { decimals: 0 }), tokenProgram: TOKEN_2022_PROGRAM_ADDRESS },
  ];
  freezable = await createTestMint(t.chain, payer, { decimals: 0, freezeAuthority: payer.address });
});
after(async () => {
  await t?.close();
  await proxy?.close();
  await chain?.close();
});

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload: payload as object, headers });

/** 12 wallets with no SOL, an SPL Token and a Token-2022 account each; wallet 3 also holds an empty frozen account. */
async function twelveWallets(): Promise<{ wallets: ManyWallet[]; frozen: Address }> {
  const wallets = await createEmptyWallets(t.chain, payer, 12, mints);
  const frozen = await createAta(t.chain, payer, wallets[3]!.signer.address, freezable);
  await freezeTokenAccount(t.chain, payer, frozen, freezable);
  return { wallets, frozen };
}

/**
 * The race of a changing wallet: on the service's first simulation (at the proxy), a token of the
 * first mint arrives in `account`, which the service read as empty a moment before.
 */
function tokenArrivesOnFirstSimulation(account: Address): { happened: boolean } {
  const race = { happened: false };
  proxy.beforeForward(async (methods) => {
    if (!race.happened && methods.includes('simulateTransaction')) {
      race.happened = true;
      await mintTokens(t.chain, payer, mints[0]!.mint, account, 1n);
    }
  });
  return race;
}

const exists = async (address: Address) => (await t.chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value !== null;

function assertNoKeyLogged(wallets: readonly ManyWallet[], ...more: string[]) {
  const logs = t.logs();
  for (const w of wallets) {
    assert.ok(!logs.includes(w.key.base58SecretKey), 'an owner key was logged');
    assert.ok(!logs.includes(w.key.base58SecretKey.slice(0, 40)), 'part of an owner key was logged');
  }
  for (const secret of more) assert.ok(!logs.includes(secret), 'the fee payer key was logged');
}

describe('POST /api/reclaim_rent/preview (many owners)', () => {
  it('answers one entry per owner in order, with totals that are the chain\'s lamports, in 2 getTokenAccountsByOwner per owner and one getMultipleAccounts', async () => {
    const { wallets, frozen } = await twelveWallets();
    const owners = wallets.map((w) => w.signer.address);
    const closable = wallets.flatMap((w) => w.accounts);
    const rents = await balancesOf(t.chain, closable);
    proxy.reset();
    const response = await post('/api/reclaim_rent/preview', { owners });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.deepEqual(body.owners.map((o: { owner: string }) => o.owner), owners);
    for (const [i, w] of wallets.entries()) {
      const entry = body.owners[i];
      assert.equal(entry.ownerLamports, '0');
      assert.equal(entry.reclaimableLamports, sum(await balancesOf(t.chain, w.accounts)).toString());
      assert.equal(entry.summary.close, 2);
    }
    assert.equal(body.owners[3].summary.skip, 1);
    assert.equal(body.owners[3].accounts.find((a: { address: string }) => a.address === frozen).action, 'skip');
    assert.deepEqual(body.skippedAccounts.map((s: { address: string; code: string; owner: string }) => [s.owner, s.address, s.code]), [[owners[3], frozen, 'ACCOUNT_FROZEN']]);
    assert.equal(body.totalReclaimableLamports, sum(rents).toString());
    // A reclaim of all of them by one fee payer: the signatures' fees, and the net.
    assert.equal(body.feeLamports, (5000n * BigInt(body.signatures)).toString());
    assert.equal(body.netLamports, (sum(rents) - 5000n * BigInt(body.signatures)).toString());
    assert.ok(body.transactions <= 4, `${body.transactions} transactions`);
    // The RPC calls, counted where they reach the chain.
    assert.equal(proxy.count('getTokenAccountsByOwner'), 2 * owners.length);
    assert.equal(proxy.count('getMultipleAccounts'), 1);
    assert.equal(proxy.count('simulateTransaction'), 0);
  });

  it('names the index of a bad address, refuses an owner given twice, and more than MAX_OWNERS_PER_REQUEST owners', async () => {
    const a = (await generateKeyPairSigner()).address;
    const b = (await generateKeyPairSigner()).address;
    const bad = await post('/api/reclaim_rent/preview', { owners: [a, b, a.slice(0, 10), b] });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'INVALID_OWNER');
    assert.equal(bad.json().errors[0].field, 'owners[2]');
    const twice = await post('/api/reclaim_rent/preview', { owners: [a, b, a] });
    assert.equal(twice.statusCode, 400);
    assert.equal(twice.json().errors[0].field, 'owners[2]');
    assert.match(twice.json().detail, /same owner as owners\[0\]/);
    const tooMany = await post('/api/reclaim_rent/preview', { owners: Array.from({ length: 1001 }, () => a) });
    assert.equal(tooMany.statusCode, 400, tooMany.body);
    assert.equal(tooMany.json().errors[0].field, 'owners');
  });
});

describe('POST /api/reclaim_rent with userPrivateKeys', () => {
  it('reclaims 12 wallets with no SOL to one destination in at most 4 transactions: the fee payer pays exactly the fees, the destination gets exactly the rents, a frozen account is skipped', async () => {
    const { wallets, frozen } = await twelveWallets();
    const feePayer = await createFundedSigner(t.chain, 1_000_000_000n);
    const feePayerKey = getBase58Decoder().decode(feePayer.secretKey);
    const destination = (await generateKeyPairSigner()).address;
    const closable = wallets.flatMap((w) => w.accounts);
    const rents = sum(await balancesOf(t.chain, closable));
    const feePayerBefore = await getLamports(t.chain, feePayer.signer.address);

    const response = await post(
      '/api/reclaim_rent',
      { userPrivateKeys: wallets.map((w) => w.key.base58SecretKey), feePayerPrivateKey: feePayerKey, destination, priorityFee: 0 },
      { 'idempotency-key': 'many-1' },
    );
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'success', body.message);
    const { transactions } = body.details;
    assert.ok(transactions.length <= 4, `${transactions.length} transactions`);
    assert.ok(transactions.every((tx: { owners: string[] }) => tx.owners.length >= 2), 'owners share transactions');
    assert.deepEqual(transactions.flatMap((tx: { closedAccounts: string[] }) => tx.closedAccounts).sort(), [...closable].sort());
    for (const account of closable) assert.equal(await exists(account), false);
    assert.equal(await exists(frozen), true);
    assert.deepEqual(body.details.skippedAccounts.map((s: { address: string; code: string }) => [s.address, s.code]), [[frozen, 'ACCOUNT_FROZEN']]);

    // Money, to the lamport: each transaction's fee is 5,000 per signature (fee payer + its owners).
    const fees = sum(transactions.map((tx: { feeLamports: string }) => BigInt(tx.feeLamports)));
    assert.equal(fees, sum(transactions.map((tx: { owners: string[] }) => 5000n * BigInt(1 + tx.owners.length))));
    assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - fees);
    assert.equal(await getLamports(t.chain, destination), rents);
    assert.equal(body.details.reclaimedLamports, rents.toString());
    assert.equal(body.details.feeLamports, fees.toString());
    assert.equal(body.details.netLamports, (rents - fees).toString());
    for (const balance of await balancesOf(t.chain, wallets.map((w) => w.signer.address))) assert.equal(balance, 0n);

    // The same Idempotency-Key and body: the stored answer, the chain untouched.
    const again = await post(
      '/api/reclaim_rent',
      { userPrivateKeys: wallets.map((w) => w.key.base58SecretKey), feePayerPrivateKey: feePayerKey, destination, priorityFee: 0 },
      { 'idempotency-key': 'many-1' },
    );
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, response.body);
    assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - fees);
    assertNoKeyLogged(wallets, feePayerKey, feePayerKey.slice(0, 40));
  });

  it('leaves out a wallet whose account changes between the read and the simulation, and reclaims the others to the lamport; with no other wallet, nothing is sent', async () => {
    // The race: a token arrives in an account of wallet 2 after the service read it as empty,
    // before the service simulates (at the proxy, on the first simulateTransaction).
    const wallets = await createEmptyWallets(t.chain, payer, 6, mints);
    const raced = wallets[2]!;
    const racedAccounts = raced.accounts;
    const feePayer = await createFundedSigner(t.chain, 1_000_000_000n);
    const feePayerKey = getBase58Decoder().decode(feePayer.secretKey);
    const destination = (await generateKeyPairSigner()).address;
    const others = wallets.filter((w) => w !== raced).flatMap((w) => w.accounts);
    const rents = sum(await balancesOf(t.chain, others));
    const feePayerBefore = await getLamports(t.chain, feePayer.signer.address);

    const race = tokenArrivesOnFirstSimulation(raced.accounts[0]!);
    const response = await post('/api/reclaim_rent', {
      userPrivateKeys: wallets.map((w) => w.key.base58SecretKey),
      feePayerPrivateKey: feePayerKey,
      destination,
      priorityFee: 0,
    }).finally(() => proxy.beforeForward(null));
    assert.ok(race.happened);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'success', body.message);
    const { transactions, skippedAccounts } = body.details;
    assert.ok(transactions.every((tx: { owners: string[] }) => !tx.owners.includes(raced.signer.address)), 'the raced wallet is in no transaction');
    assert.deepEqual(transactions.flatMap((tx: { closedAccounts: string[] }) => tx.closedAccounts).sort(), [...others].sort());
    assert.deepEqual(
      skippedAccounts.map((s: { address: string; code: string; owner: string }) => [s.address, s.code, s.owner]).sort(),
      racedAccounts.map((a) => [a, 'TRANSACTION_REJECTED', raced.signer.address]).sort(),
    );
    assert.match(skippedAccounts[0].reason, /would fail on chain/);
    for (const account of others) assert.equal(await exists(account), false);
    for (const account of racedAccounts) assert.equal(await exists(account), true);
    const fees = sum(transactions.map((tx: { feeLamports: string }) => BigInt(tx.feeLamports)));
    assert.equal(await getLamports(t.chain, destination), rents);
    assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - fees);
    assert.equal(body.details.netLamports, (rents - fees).toString());

    // The same race on the only wallet of a job: a 400 that names why, nothing sent.
    const [alone] = await createEmptyWallets(t.chain, payer, 1, mints);
    const aloneRace = tokenArrivesOnFirstSimulation(alone!.accounts[0]!);
    const refused = await post('/api/reclaim_rent/prepare', { owners: [alone!.signer.address], feePayer: feePayer.signer.address, destination }).finally(() =>
      proxy.beforeForward(null),
    );
    assert.ok(aloneRace.happened);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'TRANSACTION_REJECTED');
    assert.match(refused.json().detail, /would fail on chain.*Nothing was sent/);
    assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - fees);
  });

  it('refuses, sending nothing: the same owner twice, a destination that is an owner, a fee payer with too little SOL, both key fields, 1,001 keys', async () => {
    const { wallets } = await twelveWallets();
    const keys = wallets.map((w) => w.key.base58SecretKey);
    // 900,000 lamports: above the rent-exempt minimum (890,880), below the fees plus that minimum.
    const poor = await createFundedSigner(t.chain, 900_000n);
    const poorKey = getBase58Decoder().decode(poor.secretKey);
    const rich = await createFundedSigner(t.chain, 1_000_000_000n);
    const richKey = getBase58Decoder().decode(rich.secretKey);
    const destination = (await generateKeyPairSigner()).address;
    const base = { feePayerPrivateKey: richKey, destination, priorityFee: 0 };

    const twice = await post('/api/reclaim_rent', { ...base, userPrivateKeys: [keys[0], keys[1], wallets[0]!.key.keygenJson] });
    assert.equal(twice.statusCode, 400, twice.body);
    assert.equal(twice.json().errors[0].field, 'userPrivateKeys[2]');

    const toOwner = await post('/api/reclaim_rent', { ...base, userPrivateKeys: keys, destination: wallets[5]!.signer.address });
    assert.equal(toOwner.statusCode, 400, toOwner.body);
    assert.equal(toOwner.json().errors[0].field, 'destination');

    const tooPoor = await post('/api/reclaim_rent', { ...base, userPrivateKeys: keys, feePayerPrivateKey: poorKey });
    assert.equal(tooPoor.statusCode, 400, tooPoor.body);
    assert.equal(tooPoor.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.match(tooPoor.json().detail, new RegExp(`fee payer ${poor.signer.address} holds 0.0009 SOL`));
    assert.equal(tooPoor.json().errors[0].field, 'feePayer');

    const both = await post('/api/reclaim_rent', { ...base, userPrivateKeys: keys, userPrivateKey: keys[0] });
    assert.equal(both.statusCode, 400);
    assert.deepEqual(both.json().errors.map((e: { field: string }) => e.field), ['userPrivateKey', 'userPrivateKeys']);

    // 1,000 keys fit the body (the answer is about the fields, checked after the body is read: every
    // key given again is named, and the destination); 1,001 are refused.
    const thousand = Array.from({ length: 1000 }, (_, i) => keys[i % keys.length]);
    const fits = await post('/api/reclaim_rent', { ...base, userPrivateKeys: thousand, destination: 'not-an-address' });
    assert.equal(fits.statusCode, 400, fits.body.slice(0, 500));
    const fields = fits.json().errors.map((e: { field: string }) => e.field);
    assert.deepEqual(fields, [...thousand.slice(keys.length).map((_, i) => `userPrivateKeys[${i + keys.length}]`), 'destination']);
    const over = await post('/api/reclaim_rent', { ...base, userPrivateKeys: [...thousand, keys[0]] });
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().errors[0].field, 'userPrivateKeys');
    assert.match(over.json().detail, /MAX_OWNERS_PER_REQUEST/);
    const huge = await post('/api/reclaim_rent', { ...base, userPrivateKeys: ['x'.repeat(400 * 1024)] });
    assert.equal(huge.statusCode, 413);
    assert.match(huge.json().detail, /larger than 328 KiB/);

    // Nothing was sent: every account is still there, the fee payers' balances unchanged.
    for (const account of wallets.flatMap((w) => w.accounts)) assert.equal(await exists(account), true);
    assert.equal(await getLamports(t.chain, poor.signer.address), 900_000n);
    assert.equal(await getLamports(t.chain, rich.signer.address), 1_000_000_000n);
    assertNoKeyLogged(wallets, richKey, poorKey);
  });
});

describe('POST /api/reclaim_rent/prepare with owners → local signing → POST /api/transactions', () => {
  it('prepares transactions that list their signers, which the relay lands once signed by all of them: same balances as the keyed reclaim', async () => {
    const { wallets, frozen } = await twelveWallets();
    const feePayer = await createFundedSigner(t.chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const closable = wallets.flatMap((w) => w.accounts);
    const rents = sum(await balancesOf(t.chain, closable));
    const feePayerBefore = await getLamports(t.chain, feePayer.signer.address);
    const owners = wallets.map((w) => w.signer.address);

    const prepared = await post('/api/reclaim_rent/prepare', { owners, feePayer: feePayer.signer.address, destination });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const body = prepared.json();
    assert.ok(body.transactions.length <= 4);
    for (const tx of body.transactions) assert.deepEqual(tx.signers, [feePayer.signer.address, ...tx.owners]);
    assert.equal(body.reclaimLamports, rents.toString());
    assert.deepEqual(body.skippedAccounts.map((s: { address: string }) => s.address), [frozen]);

    // Without the relay token, a close that pays elsewhere is not relayed.
    const signers = [feePayer.signer, ...wallets.map((w) => w.signer)];
    const signed = await Promise.all(body.transactions.map((tx: { transaction: string }) => signPrepared(tx.transaction, signers)));
    const noToken = await post('/api/transactions', { transactions: [signed[0]] });
    assert.equal(noToken.statusCode, 400);
    assert.equal(noToken.json().code, 'INSTRUCTION_NOT_ALLOWED');

    const groups = new Map<string, string[]>();
    body.transactions.forEach((tx: { relayToken: string }, i: number) => groups.set(tx.relayToken, [...(groups.get(tx.relayToken) ?? []), signed[i]!]));
    for (const [relayToken, transactions] of groups) {
      const relayed = await post('/api/transactions', { transactions, relayToken });
      assert.equal(relayed.statusCode, 200, relayed.body);
      assert.equal(relayed.json().status, 'success');
    }
    for (const account of closable) assert.equal(await exists(account), false);
    assert.equal(await getLamports(t.chain, destination), rents);
    assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - BigInt(body.feeLamports));
    assert.equal(BigInt(body.feeLamports), sum(body.transactions.map((tx: { owners: string[] }) => 5000n * BigInt(1 + tx.owners.length))));
  });

  it('keeps the relay closed: a close to the destination by an owner not in the prepare, carrying its relay token, is refused', async () => {
    const { wallets } = await twelveWallets();
    const outsider = (await createEmptyWallets(t.chain, payer, 1, mints))[0]!;
    const feePayer = await createFundedSigner(t.chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const prepared = await post('/api/reclaim_rent/prepare', { owners: wallets.slice(0, 2).map((w) => w.signer.address), feePayer: feePayer.signer.address, destination });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const { relayToken } = prepared.json().transactions[0];
    // The outsider's own close to the same destination, signed by its key: not a message the service prepared.
    const { value: lifetime } = await t.chain.rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer.signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([getCloseAccountInstruction({ account: outsider.accounts[0]!, destination, owner: outsider.signer })], m),
    );
    const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
    const refused = await post('/api/transactions', { transactions: [wire], relayToken });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'INSTRUCTION_NOT_ALLOWED');
    assert.equal(await exists(outsider.accounts[0]!), true);
  });

  it('refuses feePayer "sponsor" for many owners, and a destination that is an owner', async () => {
    const a = (await generateKeyPairSigner()).address;
    const b = (await generateKeyPairSigner()).address;
    const sponsored = await post('/api/reclaim_rent/prepare', { owners: [a, b], feePayer: 'sponsor', destination: a });
    assert.equal(sponsored.statusCode, 400);
    assert.equal(sponsored.json().errors[0].field, 'feePayer');
    const toOwner = await post('/api/reclaim_rent/prepare', { owners: [a, b], feePayer: a, destination: b });
    assert.equal(toOwner.statusCode, 400);
    assert.equal(toOwner.json().errors[0].field, 'destination');
    const both = await post('/api/reclaim_rent/prepare', { owners: [a], owner: a, feePayer: a, destination: b, priorityFee: 0 });
    assert.equal(both.statusCode, 400);
  });
});

describe('a wallet that holds tokens among the owners', () => {
  it('keeps the balance and closes the rest', async () => {
    const { wallets } = await twelveWallets();
    const holdingMint = await createTestMint(t.chain, payer, { decimals: 0 });
    const holding = await createAta(t.chain, payer, wallets[0]!.signer.address, holdingMint);
    await mintTokens(t.chain, payer, holdingMint, holding, 5n);
    const response = await post('/api/reclaim_rent/preview', { owners: wallets.slice(0, 2).map((w) => w.signer.address) });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().owners[0].summary.keep, 1);
    assert.equal(response.json().owners[0].summary.close, 2);
  });
});
