/**
 * Planning v1 transactions, pure and without a network: the v1 size formula against kit's encoder,
 * packing within 4,096 bytes and 64 addresses, the choice of version, the limits every v1 message
 * sets, and one reader of the compute budget for legacy, v0 and v1.
 *
 * What this relies on (checked against the sources): solana-message `versions/v1/mod.rs`
 * (MAX_TRANSACTION_SIZE 4096, MAX_ADDRESSES 64, MAX_INSTRUCTIONS 64, MAX_SIGNATURES 12) and
 * `v1/config.rs` (an unset limit "means use 0"; the priority fee is in lamports); kit 8.4's
 * `createTransactionMessage({ version: 1 })` + `setTransactionMessageConfig`, whose encoder is the
 * reference for the size formula below, and `getTransactionSizeLimit` (4096 for v1).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  blockhash,
  compileTransaction,
  compileTransactionMessage,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  getTransactionSizeLimit,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type V1TransactionConfig,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { planAccountActions, type AccountAction } from '../../src/plan/actions.ts';
import { MAX_COMPUTE_UNIT_LIMIT, packTransactions, transactionInstructions, transactionSize } from '../../src/plan/pack.ts';
import { DEFAULT_RENT } from '../../src/plan/rent.ts';
import { TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState } from '../../src/plan/tokenState.ts';
import { V1_FORMAT, V1_MAX_ADDRESSES, V1_TRANSACTION_SIZE_LIMIT, v1TransactionSize } from '../../src/plan/v1Format.ts';
import {
  chooseTransactionVersion,
  loadedAccountsDataLimitFor,
  V1_SIMULATION_CONFIG,
  v1TransactionMessage,
} from '../../src/plan/transactionVersion.ts';
import { readMessageBudget, v1ConfigOf, v1LimitsProblem } from '../../src/plan/messageBudget.ts';

const randomAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;
const lifetime = { blockhash: blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 0n };
const LIMITS = { computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT, loadedAccountsDataSizeLimit: 64 * 1024 * 1024, priorityFeeLamports: 2n ** 64n - 1n };

/** Empty accounts of `count` mints each, of `program`: the planner closes them all. */
async function emptyAccounts(owner: Address, count: number, program: Address): Promise<AccountAction[]> {
  const mints: MintState[] = [];
  const accounts: TokenAccountState[] = [];
  for (let i = 0; i < count; i++) {
    const mint = await randomAddress();
    mints.push({ address: mint, tokenProgram: program as MintState['tokenProgram'], decimals: 6, supply: 1n, isNative: false, nonTransferable: false, permanentDelegate: null, paused: false, permissionedBurn: false });
    accounts.push({
      address: await randomAddress(), lamports: 2_039_280n, space: program === TOKEN_PROGRAM_ADDRESS ? 165 : 170, tokenProgram: program as TokenAccountState['tokenProgram'],
      mint, owner, amount: 0n, frozen: false, isNative: false, closeAuthority: null, withheldAmount: 0n, hasConfidentialBalance: false,
    });
  }
  return planAccountActions(
    { owner, ownerLamports: 1_000_000_000n, accounts, mints: new Map(mints.map((m) => [m.address, m])), rent: DEFAULT_RENT },
    { burnMints: new Set(), withdrawExcess: false },
  );
}

describe('the v1 size formula', () => {
  it('gives the exact bytes kit encodes for a v1 transaction, own and sponsored, with every config value set', async () => {
    const owner = createNoopSigner(await randomAddress());
    const actions = await emptyAccounts(owner.address, 5, TOKEN_2022_PROGRAM_ADDRESS);
    for (const feePayer of [owner, createNoopSigner(await randomAddress())]) {
      for (const run of [actions.slice(0, 1), actions]) {
        const parties = { owner, feePayer };
        const instructions = transactionInstructions(run, parties, 2n ** 64n - 1n);
        const transaction = compileTransaction(v1TransactionMessage(feePayer, lifetime, instructions, LIMITS));
        const encoded = getTransactionEncoder().encode(transaction);
        assert.equal(encoded[0], 0x81);
        assert.equal(getTransactionSizeLimit(transaction), V1_TRANSACTION_SIZE_LIMIT);
        assert.equal(v1TransactionSize(feePayer.address, instructions), encoded.length);
        assert.equal(transactionSize(run, parties, V1_FORMAT), encoded.length);
      }
    }
  });
});

describe('packing v1', () => {
  it('packs about 60 closes per transaction, within 4,096 bytes and 64 addresses, where legacy packs about 25', async () => {
    const owner = createNoopSigner(await randomAddress());
    const parties = { owner, feePayer: owner };
    const actions = await emptyAccounts(owner.address, 200, TOKEN_PROGRAM_ADDRESS);
    const v1 = await packTransactions(actions, parties, null, V1_FORMAT);
    const legacy = await packTransactions(actions, parties);
    assert.equal(v1.reduce((n, t) => n + t.actions.length, 0), 200);
    assert.equal(v1.length, 4);
    assert.deepEqual(v1.map((t) => t.actions.length), [62, 62, 62, 14]); // payer + Token program + 62 accounts = 64 addresses
    assert.equal(legacy.length, 8);
    for (const t of v1) {
      const instructions = transactionInstructions(t.actions, parties, 0n);
      const message = compileTransactionMessage(v1TransactionMessage(owner, lifetime, instructions, LIMITS));
      assert.ok(message.staticAccounts.length <= V1_MAX_ADDRESSES);
      assert.ok(transactionSize(t.actions, parties, V1_FORMAT) <= V1_TRANSACTION_SIZE_LIMIT);
    }
  });

  it('200 accounts of both token programs take at most 4 v1 transactions, none over the compute-unit bound', async () => {
    const owner = createNoopSigner(await randomAddress());
    const parties = { owner, feePayer: owner };
    const actions = [...(await emptyAccounts(owner.address, 100, TOKEN_PROGRAM_ADDRESS)), ...(await emptyAccounts(owner.address, 100, TOKEN_2022_PROGRAM_ADDRESS))];
    const v1 = await packTransactions(actions, parties, null, V1_FORMAT);
    assert.equal(v1.reduce((n, t) => n + t.actions.length, 0), 200);
    assert.ok(v1.length <= 4, `v1 transactions: ${v1.map((t) => t.actions.length).join(', ')}`);
    for (const t of v1) assert.ok(t.computeUnitEstimate <= MAX_COMPUTE_UNIT_LIMIT);
  });

  it('a sponsored v1 transaction keeps room for the repayment and the sponsor (one more address, one more signature)', async () => {
    const owner = createNoopSigner(await randomAddress());
    const actions = await emptyAccounts(owner.address, 100, TOKEN_PROGRAM_ADDRESS);
    const sponsored = await packTransactions(actions, { owner, feePayer: createNoopSigner(await randomAddress()) }, null, V1_FORMAT);
    // Sponsor, owner, Token, System: 60 accounts are left of 64.
    assert.equal(sponsored[0]!.actions.length, 60);
  });
});

describe('choosing the version', () => {
  it('takes v1 only where the gate is active and the signer declares 1', () => {
    assert.equal(chooseTransactionVersion({ v1GateActive: true, signerVersions: ['legacy', 0, 1], fallback: 'legacy' }), 1);
    assert.equal(chooseTransactionVersion({ v1GateActive: true, signerVersions: ['legacy', 0], fallback: 0 }), 0);
    assert.equal(chooseTransactionVersion({ v1GateActive: false, signerVersions: ['legacy', 0, 1], fallback: 'legacy' }), 'legacy');
    assert.equal(chooseTransactionVersion({ v1GateActive: false, signerVersions: [1], fallback: 0 }), 0);
  });
});

describe('v1 limits', () => {
  it('simulates with both limits at their maximum, then sets the loaded-data limit to the next 32 KiB up', () => {
    assert.deepEqual(V1_SIMULATION_CONFIG, { computeUnitLimit: 1_400_000, loadedAccountsDataSizeLimit: 64 * 1024 * 1024, priorityFeeLamports: 0n });
    assert.equal(loadedAccountsDataLimitFor(0), 32 * 1024);
    assert.equal(loadedAccountsDataLimitFor(1), 32 * 1024);
    assert.equal(loadedAccountsDataLimitFor(32 * 1024), 32 * 1024);
    assert.equal(loadedAccountsDataLimitFor(32 * 1024 + 1), 64 * 1024);
    assert.equal(loadedAccountsDataLimitFor(700_000), 22 * 32 * 1024);
    assert.equal(loadedAccountsDataLimitFor(100 * 1024 * 1024), 64 * 1024 * 1024);
  });

  it('every v1 message Cinder writes sets all three values, the priority fee as a total', async () => {
    const payer = createNoopSigner(await randomAddress());
    const message = compileTransactionMessage(v1TransactionMessage(payer, lifetime, [], { computeUnitLimit: 7_000, loadedAccountsDataSizeLimit: 65_536, priorityFeeLamports: 12_345n }));
    assert.deepEqual(v1ConfigOf(message), { priorityFeeLamports: 12_345n, computeUnitLimit: 7_000, loadedAccountsDataSizeLimit: 65_536 });
  });
});

describe('one reader of the compute budget', () => {
  /** A compiled v1 message with exactly this config (unset fields left out). */
  const v1Message = async (config: V1TransactionConfig, extra: Instruction[] = []) => {
    const payer = createNoopSigner(await randomAddress());
    return compileTransactionMessage(setTransactionMessageConfig(config, pipe(
      createTransactionMessage({ version: 1 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(extra, m),
    )));
  };

  it('reads v1 from its config: the fee is the stated total, an unset limit is 0', async () => {
    const full = readMessageBudget(await v1Message({ computeUnitLimit: 50_000, loadedAccountsDataSizeLimit: 98_304, priorityFeeLamports: 10_000n }));
    assert.deepEqual(full, {
      ok: true,
      budget: { version: 1, computeUnitLimit: 50_000, loadedAccountsDataSizeLimit: 98_304, heapFrameBytes: null, computeUnitPriceMicroLamports: 200_000n, priorityFeeLamports: 10_000n },
    });
    const unset = readMessageBudget(await v1Message({ priorityFeeLamports: 1n }));
    assert.ok(unset.ok);
    assert.equal(unset.budget.computeUnitLimit, 0);
    assert.equal(unset.budget.loadedAccountsDataSizeLimit, 0);
  });

  it('reads legacy from its instructions, with the charged priority fee', async () => {
    const payer = createNoopSigner(await randomAddress());
    const message = compileTransactionMessage(pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([getSetComputeUnitLimitInstruction({ units: 1_001 }), getSetComputeUnitPriceInstruction({ microLamports: 1_000n })], m),
    ));
    const reading = readMessageBudget(message);
    assert.ok(reading.ok);
    assert.equal(reading.budget.computeUnitLimit, 1_001);
    assert.equal(reading.budget.priorityFeeLamports, 2n); // ceil(1,001 × 1,000 / 1e6)
    assert.equal(reading.budget.loadedAccountsDataSizeLimit, null);
  });

  it('refuses a v1 message that also carries ComputeBudget instructions', async () => {
    const reading = readMessageBudget(await v1Message(LIMITS, [getSetComputeUnitPriceInstruction({ microLamports: 1n })]));
    assert.deepEqual(reading, { ok: false, error: { kind: 'ComputeBudgetInstructionInV1', index: 0 } });
  });

  it('names the v1 limits that would make a message fail on chain, for the sponsor\'s policy', async () => {
    const bounds = { loadedBytesAtLeast: 40_000, maxPriorityFeeLamports: 100_000n };
    const problem = async (config: Parameters<typeof v1Message>[0]) => {
      const reading = readMessageBudget(await v1Message(config));
      assert.ok(reading.ok);
      return v1LimitsProblem(reading.budget, bounds);
    };
    assert.match((await problem({ loadedAccountsDataSizeLimit: 65_536, priorityFeeLamports: 0n }))!, /compute-unit limit unset/);
    assert.match((await problem({ computeUnitLimit: 10_000, priorityFeeLamports: 0n }))!, /loaded-accounts-data limit unset/);
    assert.match((await problem({ computeUnitLimit: 10_000, loadedAccountsDataSizeLimit: 32_768, priorityFeeLamports: 0n }))!, /allows 32768 bytes .* where it loads 40000/);
    assert.match((await problem({ computeUnitLimit: 10_000, loadedAccountsDataSizeLimit: 65_536, priorityFeeLamports: 100_001n }))!, /over the bound of 100000/);
    assert.equal(await problem({ computeUnitLimit: 10_000, loadedAccountsDataSizeLimit: 65_536, priorityFeeLamports: 100_000n }), null);
  });
});
