/**
 * The sBPF stand-ins for Lighthouse run on the embedded chain: closes with Phantom-like guards
 * land with the no-op; with the asserting stand-in a bound that holds passes and one that does not
 * fails on chain, charged its fee; and a stranger's deposit fails an exact-balance guard on a fee
 * payer while a lower bound still holds (docs/wallet-additions.md, question (b)). Every case is
 * checked to the lamport through JSON-RPC.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction } from '@solana-program/token';
import {
  createFundedSigner,
  getLamports,
  lamportsAssertionProgram,
  lamportsGuard,
  LIGHTHOUSE_ERRORS,
  LIGHTHOUSE_PROGRAM_ADDRESS,
  LighthouseOperator,
  noopProgram,
  phantomLikeGuards,
  sendInstructions,
  startTestChain,
  writeEmptyTokenAccounts,
  type TestChain,
} from '@cinder/testkit';

const RENT = 2_039_280n; // an SPL Token account's rent-exempt balance, paid back by each close
const BASE_FEE = 5_000n;

interface Landed {
  signature: Signature;
  fee: bigint;
  err: unknown;
}

/**
 * Signs and sends without preflight (a transaction that fails must still land, as on mainnet,
 * where the fee payer is charged for it), then reads its fee and error back from getTransaction.
 */
async function land(chain: TestChain, payer: KeyPairSigner, instructions: Instruction[]): Promise<Landed> {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  const signature = getSignatureFromTransaction(transaction);
  await chain.rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', skipPreflight: true }).send();
  for (let attempt = 0; attempt < 200; attempt++) {
    const found = await chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    if (found?.meta) return { signature, fee: BigInt(found.meta.fee), err: found.meta.err };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`transaction ${signature} did not land`);
}

/** An owner with `count` empty token accounts it can close. */
async function ownerWithEmptyAccounts(chain: TestChain, count: number): Promise<{ owner: KeyPairSigner; accounts: Address[] }> {
  const { signer: owner } = await createFundedSigner(chain, 1_000_000_000n);
  const mint = await writeEmptyTokenAccounts(chain, owner.address, count);
  const { value } = await chain.rpc.getTokenAccountsByOwner(owner.address, { mint }, { encoding: 'base64' }).send();
  assert.equal(value.length, count);
  return { owner, accounts: value.map((entry) => entry.pubkey) };
}

/** getTransaction's error for a custom program error (kit reads the JSON numbers as bigint). */
const failedAt = (index: number, code: number) => ({ InstructionError: [BigInt(index), { Custom: BigInt(code) }] });

const closes = (owner: KeyPairSigner, accounts: Address[]) => accounts.map((account) => getCloseAccountInstruction({ account, destination: owner.address, owner }));

async function exists(chain: TestChain, account: Address): Promise<boolean> {
  return (await chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send()).value !== null;
}

describe('the no-op stand-in at Lighthouse’s address', () => {
  let chain: TestChain;
  before(async () => {
    chain = await startTestChain({ slotIntervalMs: 0, programs: [{ address: LIGHTHOUSE_PROGRAM_ADDRESS, bytes: noopProgram() }] });
  });
  after(() => chain.close());

  test("closes wrapped in Phantom's four guards land, the owner paid each rent less the fee as signed", async () => {
    const { owner, accounts } = await ownerWithEmptyAccounts(chain, 2);
    const guards = phantomLikeGuards(owner.address, 0n);
    const units = 28_000;
    const price = 1_000n; // micro-lamports a unit: 28 lamports of priority fee
    const start = await getLamports(chain, owner.address);
    const landed = await land(chain, owner, [
      getSetComputeUnitLimitInstruction({ units }),
      getSetComputeUnitPriceInstruction({ microLamports: price }),
      ...guards.before,
      ...closes(owner, accounts),
      ...guards.after,
    ]);
    assert.equal(landed.err, null);
    assert.equal(landed.fee, BASE_FEE + 28n);
    assert.equal(await getLamports(chain, owner.address), start + 2n * RENT - landed.fee);
    for (const account of accounts) assert.equal(await exists(chain, account), false);
  });
});

describe('the asserting stand-in at Lighthouse’s address', () => {
  let chain: TestChain;
  before(async () => {
    chain = await startTestChain({ slotIntervalMs: 0, programs: [{ address: LIGHTHOUSE_PROGRAM_ADDRESS, bytes: lamportsAssertionProgram() }] });
  });
  after(() => chain.close());

  test('guards whose bounds hold pass: a lower bound before the closes, the exact balance after them', async () => {
    const { owner, accounts } = await ownerWithEmptyAccounts(chain, 2);
    const start = await getLamports(chain, owner.address);
    // The fee is taken before the first instruction runs; each close then pays its rent back.
    const landed = await land(chain, owner, [
      lamportsGuard(owner.address, LighthouseOperator.GreaterThanOrEqual, start - BASE_FEE),
      ...closes(owner, accounts),
      lamportsGuard(owner.address, LighthouseOperator.Equal, start - BASE_FEE + 2n * RENT),
    ]);
    assert.equal(landed.err, null);
    assert.equal(landed.fee, BASE_FEE);
    assert.equal(await getLamports(chain, owner.address), start + 2n * RENT - BASE_FEE);
    for (const account of accounts) assert.equal(await exists(chain, account), false);
  });

  test('a guard whose bound does not hold fails on chain: nothing closed, the fee charged', async () => {
    const { owner, accounts } = await ownerWithEmptyAccounts(chain, 2);
    const start = await getLamports(chain, owner.address);
    const landed = await land(chain, owner, [
      ...closes(owner, accounts),
      lamportsGuard(owner.address, LighthouseOperator.GreaterThan, start - BASE_FEE + 2n * RENT),
    ]);
    assert.deepEqual(landed.err, failedAt(2, LIGHTHOUSE_ERRORS.AssertionFailed));
    assert.equal(landed.fee, BASE_FEE);
    assert.equal(await getLamports(chain, owner.address), start - BASE_FEE);
    for (const account of accounts) assert.equal(await exists(chain, account), true);
  });

  test("a stranger's lamport fails an exact-balance guard on the fee payer, at the fee payer's cost; a lower bound still holds", async () => {
    const { signer: payer } = await createFundedSigner(chain, 1_000_000_000n);
    const { signer: stranger } = await createFundedSigner(chain, 1_000_000_000n);
    const balance = await getLamports(chain, payer.address);
    // Both guards were right when the wallet built them: the balance it saw, less the fee.
    const exact = lamportsGuard(payer.address, LighthouseOperator.Equal, balance - BASE_FEE);
    const floor = lamportsGuard(payer.address, LighthouseOperator.GreaterThanOrEqual, balance - 2n * BASE_FEE);
    await sendInstructions(chain, stranger, [getTransferSolInstruction({ source: stranger, destination: payer.address, amount: 1n })]);
    assert.equal(await getLamports(chain, payer.address), balance + 1n);

    const broken = await land(chain, payer, [exact]);
    assert.deepEqual(broken.err, failedAt(0, LIGHTHOUSE_ERRORS.AssertionFailed));
    assert.equal(await getLamports(chain, payer.address), balance + 1n - BASE_FEE);

    const held = await land(chain, payer, [floor]);
    assert.equal(held.err, null);
    assert.equal(await getLamports(chain, payer.address), balance + 1n - 2n * BASE_FEE);
  });

  test("one wallet's transactions sent together: exact-balance guards fail all but one, lower bounds fail none", async () => {
    // Each transaction closes one account; its wallet simulated it alone: balance - fee + rent.
    const exactly = await ownerWithEmptyAccounts(chain, 2);
    const start = await getLamports(chain, exactly.owner.address);
    const alone = start - BASE_FEE + RENT;
    const results = await Promise.all(
      exactly.accounts.map((account) => land(chain, exactly.owner, [...closes(exactly.owner, [account]), lamportsGuard(exactly.owner.address, LighthouseOperator.Equal, alone)])),
    );
    assert.equal(results.filter((r) => r.err === null).length, 1);
    assert.deepEqual(results.find((r) => r.err !== null)?.err, failedAt(1, LIGHTHOUSE_ERRORS.AssertionFailed));
    assert.equal(await getLamports(chain, exactly.owner.address), start - 2n * BASE_FEE + RENT);
    assert.equal((await Promise.all(exactly.accounts.map((a) => exists(chain, a)))).filter(Boolean).length, 1);

    const bounded = await ownerWithEmptyAccounts(chain, 2);
    const startBounded = await getLamports(chain, bounded.owner.address);
    const both = await Promise.all(
      bounded.accounts.map((account) =>
        land(chain, bounded.owner, [...closes(bounded.owner, [account]), lamportsGuard(bounded.owner.address, LighthouseOperator.GreaterThanOrEqual, startBounded - BASE_FEE + RENT)]),
      ),
    );
    assert.deepEqual(both.map((r) => r.err), [null, null]);
    assert.equal(await getLamports(chain, bounded.owner.address), startBounded - 2n * BASE_FEE + 2n * RENT);
  });

  test('every operator compares as Lighthouse does; malformed data and a missing account are refused', async () => {
    const { signer: payer } = await createFundedSigner(chain, 1_000_000_000n);
    const expectations: [number, bigint, boolean][] = [];
    let paid = 0n;
    for (const [operator, holdsBelow, holdsAt, holdsAbove] of [
      [LighthouseOperator.Equal, false, true, false],
      [LighthouseOperator.NotEqual, true, false, true],
      [LighthouseOperator.GreaterThan, true, false, false],
      [LighthouseOperator.LessThan, false, false, true],
      [LighthouseOperator.GreaterThanOrEqual, true, true, false],
      [LighthouseOperator.LessThanOrEqual, false, true, true],
    ] as const) {
      for (const [delta, holds] of [[-1n, holdsBelow], [0n, holdsAt], [1n, holdsAbove]] as const) {
        // The guard sees the balance after this transaction's fee: compare against it ± 1.
        const seen = (await getLamports(chain, payer.address)) - BASE_FEE;
        const landed = await land(chain, payer, [lamportsGuard(payer.address, operator, seen + delta)]);
        paid += landed.fee;
        expectations.push([operator, delta, holds]);
        assert.deepEqual(landed.err, holds ? null : failedAt(0, LIGHTHOUSE_ERRORS.AssertionFailed), `operator ${operator}, value balance${delta >= 0n ? '+' : ''}${delta}`);
      }
    }
    assert.equal(expectations.length, 18);
    assert.equal(paid, 18n * BASE_FEE);
    assert.equal(await getLamports(chain, payer.address), 1_000_000_000n - paid);

    const malformed: Instruction = { ...lamportsGuard(payer.address, 0, 0n), data: new Uint8Array([5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]) };
    assert.deepEqual((await land(chain, payer, [malformed])).err, failedAt(0, LIGHTHOUSE_ERRORS.InvalidInstructionData));
    const noAccount: Instruction = { ...lamportsGuard(payer.address, 0, 0n), accounts: [] };
    assert.deepEqual((await land(chain, payer, [noAccount])).err, failedAt(0, LIGHTHOUSE_ERRORS.NotEnoughAccounts));
  });
});
