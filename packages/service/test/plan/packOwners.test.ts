/**
 * The packing of many owners' closes into shared version-0 (and v1) transactions, without a network: the
 * size it computes is the size of the transaction kit compiles, every transaction fits the packet,
 * the count reaches the lower bound that the packet size allows, an owner too large for one
 * transaction is split, and every close pays out to the destination.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockhash, compileTransaction, createNoopSigner, generateKeyPairSigner, getTransactionEncoder, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { planAccountActions, type AccountAction } from '../../src/plan/actions.ts';
import { MAX_COMPUTE_UNIT_LIMIT, TRANSACTION_SIZE_LIMIT } from '../../src/plan/pack.ts';
import { manyOwnerMessage, manyOwnerTransactionSize, manyOwnerV1Message, packOwners, type OwnerActions } from '../../src/plan/packOwners.ts';
import { V1_TRANSACTION_SIZE_LIMIT } from '../../src/plan/v1Format.ts';
import { DEFAULT_RENT } from '../../src/plan/rent.ts';
import { TOKEN_2022_PROGRAM_ADDRESS, type TokenProgram } from '../../src/plan/tokenState.ts';

const randomAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;
const lifetime = { blockhash: blockhash('EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N'), lastValidBlockHeight: 100n };

/** An owner with `count` empty accounts, one of each of `mints` in turn, planned as the service plans them. */
async function ownerWith(count: number, mints: readonly { mint: Address; tokenProgram: TokenProgram }[]): Promise<OwnerActions> {
  const owner = await randomAddress();
  const accounts = await Promise.all(
    Array.from({ length: count }, async (_, i) => ({
      address: await randomAddress(),
      lamports: 2_039_280n,
      space: 165,
      tokenProgram: mints[i % mints.length]!.tokenProgram,
      mint: mints[i % mints.length]!.mint,
      owner,
      amount: 0n,
      frozen: false,
      isNative: false,
      closeAuthority: null,
      withheldAmount: 0n,
      hasConfidentialBalance: false,
    })),
  );
  const mintStates = new Map(
    mints.map(({ mint, tokenProgram }) => [mint, { address: mint, tokenProgram, decimals: 0, supply: 0n, isNative: false, nonTransferable: false, permanentDelegate: null, paused: false, permissionedBurn: false }]),
  );
  const actions = await planAccountActions({ owner, ownerLamports: 0n, accounts, mints: mintStates, rent: DEFAULT_RENT }, { burnMints: new Set(), withdrawExcess: false });
  return { owner, actions };
}

const wireSize = (feePayer: Address, actions: Parameters<typeof manyOwnerMessage>[4], destination: Address) =>
  getTransactionEncoder().encode(compileTransaction(manyOwnerMessage(createNoopSigner(feePayer), lifetime, MAX_COMPUTE_UNIT_LIMIT, 2n ** 64n - 1n, actions, destination))).length;

describe('packOwners', () => {
  it('packs 12 owners of 2 accounts (SPL Token and Token-2022) into 3 transactions, the fewest the packet allows, each within 1,232 bytes as kit compiles it', async () => {
    const mints = [
      { mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS },
      { mint: await randomAddress(), tokenProgram: TOKEN_2022_PROGRAM_ADDRESS },
    ];
    const owners = await Promise.all(Array.from({ length: 12 }, () => ownerWith(2, mints)));
    const feePayer = await randomAddress();
    const destination = await randomAddress();
    const packed = await packOwners(owners, feePayer, destination);
    assert.equal(packed.length, 3);
    // Lower bound: 12 owners, each owner (signature + key + 2 accounts) a fixed share of what a transaction holds.
    const oneOwner = manyOwnerTransactionSize(feePayer, packed[0]!.actions.slice(0, 2), destination);
    const twoOwners = manyOwnerTransactionSize(feePayer, packed[0]!.actions.slice(0, 4), destination);
    const perOwner = twoOwners - oneOwner;
    const perTransaction = Math.floor((TRANSACTION_SIZE_LIMIT - (oneOwner - perOwner)) / perOwner);
    assert.equal(packed.length, Math.ceil(12 / perTransaction));
    for (const transaction of packed) {
      const size = wireSize(feePayer, transaction.actions, destination);
      assert.equal(manyOwnerTransactionSize(feePayer, transaction.actions, destination), size);
      assert.ok(size <= TRANSACTION_SIZE_LIMIT, `${size} bytes`);
      assert.equal(transaction.signatures, 1 + transaction.owners.length);
    }
    // Every account exactly once, in the owners' order.
    assert.deepEqual(
      packed.flatMap((t) => t.actions.map((a) => a.action.account.address)),
      owners.flatMap((o) => o.actions.map((a) => a.account.address)),
    );
    assert.equal(packed.reduce((sum, t) => sum + t.returnsLamports, 0n), 24n * 2_039_280n);
  });

  it('splits an owner whose accounts do not fit one transaction, signing in each; a fee payer that is an owner signs once', async () => {
    const mint = { mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS };
    const big = await ownerWith(40, [mint]);
    const small = await ownerWith(2, [mint]);
    const destination = await randomAddress();
    const packed = await packOwners([small, big], small.owner, destination);
    assert.ok(packed.length >= 2);
    assert.deepEqual(packed[0]!.owners, [small.owner, big.owner]);
    assert.equal(packed[0]!.signatures, 2, 'the fee payer is the small owner: one signature for both');
    assert.ok(packed.slice(1).every((t) => t.owners.length === 1 && t.owners[0] === big.owner));
    for (const transaction of packed) assert.ok(wireSize(small.owner, transaction.actions, destination) <= TRANSACTION_SIZE_LIMIT);
    // Full: the next account would not have fitted.
    const first = packed[0]!;
    const next = packed[1]!.actions[0]!;
    assert.ok(manyOwnerTransactionSize(small.owner, [...first.actions, next], destination) > TRANSACTION_SIZE_LIMIT);
  });

  it('pays every close out to the destination, signed by the account\'s owner', async () => {
    const mint = { mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS };
    const owners = [await ownerWith(1, [mint]), await ownerWith(1, [mint])];
    const destination = await randomAddress();
    const [transaction] = await packOwners(owners, await randomAddress(), destination);
    const message = manyOwnerMessage(createNoopSigner(await randomAddress()), lifetime, 1000, 0n, transaction!.actions, destination);
    const closes = message.instructions.filter((i) => i.programAddress === TOKEN_PROGRAM_ADDRESS);
    assert.equal(closes.length, 2);
    for (const [i, close] of closes.entries()) {
      assert.equal(close.accounts![1]!.address, destination);
      assert.equal(close.accounts![2]!.address, owners[i]!.owner);
    }
  });

  it('leaves out what is not sent (kept, skipped)', async () => {
    const mint = { mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS };
    const owner = await ownerWith(2, [mint]);
    const kept: AccountAction = { ...owner.actions[0]!, action: 'keep' };
    const packed = await packOwners([{ owner: owner.owner, actions: [kept, owner.actions[1]!] }], await randomAddress(), await randomAddress());
    assert.equal(packed.length, 1);
    assert.deepEqual(packed[0]!.actions.map((a) => a.action.account.address), [owner.actions[1]!.account.address]);
  });
});

describe('packOwners in v1', () => {
  it('packs 20 owners of 10 accounts (SPL Token and Token-2022) into 4 v1 transactions of 5 whole owners, each within every v1 limit as kit compiles it', async () => {
    const mints = [
      { mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS },
      { mint: await randomAddress(), tokenProgram: TOKEN_2022_PROGRAM_ADDRESS },
    ];
    const owners = await Promise.all(Array.from({ length: 20 }, () => ownerWith(10, mints)));
    const feePayer = await randomAddress();
    const destination = await randomAddress();
    const packed = await packOwners(owners, feePayer, destination, 1);
    // 220 owner keys and accounts, 60 to a transaction (64 less the fee payer, the destination and two programs): 4 at least.
    assert.equal(packed.length, 4);
    const limits = { computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT, loadedAccountsDataSizeLimit: 64 * 1024 * 1024, priorityFeeLamports: 2n ** 64n - 1n };
    for (const transaction of packed) {
      // No owner split: the even packing keeps each owner's signature in one transaction.
      assert.equal(transaction.owners.length, 5);
      assert.equal(transaction.signatures, 6);
      const compiled = compileTransaction(manyOwnerV1Message(createNoopSigner(feePayer), lifetime, limits, transaction.actions, destination));
      const size = getTransactionEncoder().encode(compiled).length;
      assert.ok(size <= V1_TRANSACTION_SIZE_LIMIT, `${size} bytes`);
      assert.equal(Object.keys(compiled.signatures).length, transaction.signatures);
    }
    assert.deepEqual(
      packed.flatMap((t) => t.actions.map((a) => a.action.account.address)),
      owners.flatMap((o) => o.actions.map((a) => a.account.address)),
    );
  });

  it('12 signatures are the limit: 23 owners of 1 account take 3 transactions, the owners spread evenly rather than 11, 11 and 1', async () => {
    const mints = [{ mint: await randomAddress(), tokenProgram: TOKEN_PROGRAM_ADDRESS }];
    const owners = await Promise.all(Array.from({ length: 23 }, () => ownerWith(1, mints)));
    const packed = await packOwners(owners, await randomAddress(), await randomAddress(), 1);
    // 11 owners and the fee payer sign a transaction at most: ⌈23 / 11⌉ = 3.
    assert.equal(packed.length, 3);
    for (const transaction of packed) assert.ok(transaction.signatures <= 12, `${transaction.signatures} signatures`);
    assert.deepEqual(packed.map((t) => t.owners.length), [8, 8, 7]);
  });
});
