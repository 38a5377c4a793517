/**
 * What a browser wallet may add to a message Cinder prepared, and nothing else (the contract's
 * "Wallets change what they sign"; docs/wallet-additions.md gives the evidence). Pure: the
 * prepared and the signed compiled messages in, a verdict out.
 *
 * A signed message is accepted when it differs from the prepared one only by:
 * - Lighthouse assertion instructions, known by discriminator, at most MAX_WALLET_GUARDS of at
 *   most MAX_GUARD_DATA_BYTES each (Lighthouse's memory-write / memory-close, which pay for
 *   accounts, are refused);
 * - at most one Memo (either Memo program) of at most MAX_MEMO_BYTES of valid UTF-8 (the Memo
 *   program fails, at the fee payer's cost, on anything else);
 * - compute-budget instructions replaced or changed (returned as signed, for the money rules:
 *   see sponsorFeeRepaid);
 * and Cinder's own instructions are all there, unchanged and in order, under the same signers.
 *
 * In a sponsored message the sponsor is never an account of an added instruction, except as the
 * target of an AssertAccountInfo(-Multi) whose every comparison on it is a lamports lower bound or
 * a property only its key holder can change: an exact, upper-bound or not-equal lamports assertion
 * on the sponsor can be broken by anyone who sends it a lamport, failing the transaction at the
 * sponsor's expense (it pays the fee of a failed transaction and is repaid nothing).
 */
import type { Address } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { describeComputeBudgetError, readComputeBudget, type ComputeBudgetLimits } from './computeBudget.ts';
import { signatureFees, transactionFee } from './fees.ts';
import { describeComparison, guardReads, LIGHTHOUSE_INSTRUCTIONS, LIGHTHOUSE_PROGRAM_ADDRESS, type GuardComparison } from './lighthouse.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from './pack.ts';
import { instructionName, messageInstructions, type MessageInstruction, type RelayableMessage } from './relayRules.ts';
import { v1ConfigProblem, v1MessageBudget } from './v1Config.ts';

export const MEMO_PROGRAM_ADDRESSES: ReadonlySet<Address> = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address,
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo' as Address,
]);

/** x402's verifier bounds the Lighthouse instructions it accepts at four (x402-foundation/x402 pull request 3318): Phantom's current set. */
export const MAX_WALLET_GUARDS = 4;
/** Phantom's largest guard carries 52 bytes of data; Lighthouse's assertions on one account fit well under this. */
export const MAX_GUARD_DATA_BYTES = 64;
/** An assertion reads one account, a delta two; more is not a guard a wallet adds. */
export const MAX_GUARD_ACCOUNTS = 2;
/** A wallet's note, not a payload. */
export const MAX_MEMO_BYTES = 256;

/**
 * The room a transaction prepared for a browser wallet leaves for Phantom's four guards, the
 * largest set on record: [computeLimit, computePrice, LH(17), LH(52), LH(16), A, B, LH(27)]
 * (x402-foundation/x402 pull request 3318, observed on mainnet 2026-08-31), each referencing the
 * fee payer, already a key of the message.
 * - bytes: 17 + 52 + 16 + 27 = 112 bytes of data, plus per instruction a program index, an
 *   account count, one account index and a data length (4 bytes each), plus Lighthouse's
 *   program id as a new static key (32 bytes): 160;
 * - account keys: 1 (the program id);
 * - compute units: Lighthouse's own tests bound an assertion instruction at about 800 CU
 *   (tests/lighthouse/tests/suites/assert: 20 AccountData assertions under 16,150 CU, 8 token
 *   account assertions under 6,620, 5 mint assertions under 3,790); 2,000 a guard leaves room for
 *   a Multi assertion and logging. A guard that runs out of compute fails, and is charged.
 */
export const PHANTOM_GUARD_DATA_BYTES = [17, 52, 16, 27] as const;
export const WALLET_GUARD_ROOM = {
  bytes: PHANTOM_GUARD_DATA_BYTES.reduce((sum, n) => sum + n + 4, 0) + 32,
  accountKeys: 1,
  computeUnits: PHANTOM_GUARD_DATA_BYTES.length * 2_000,
} as const;

/** Without SetComputeUnitLimit the runtime grants up to this per instruction (capped): the fee is bounded with it. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;

export interface GuardAddition {
  index: number;
  name: string;
  dataBytes: number;
  /** Accounts it reads whose comparison another transaction or a stranger can break (for sending a wallet's transactions together). */
  breakable: { account: Address | null; comparison: GuardComparison }[];
  /** The least balance it requires of the fee sponsor (a lower bound on the sponsor's lamports), or null. */
  sponsorFloor: bigint | null;
}

export interface WalletAdditions {
  lighthouse: number;
  memo: boolean;
  guards: GuardAddition[];
  /**
   * The highest balance any guard requires of the fee sponsor, or null. Only the sponsor's own
   * spending can break such a floor (docs/wallet-additions.md): the policy co-signs only while
   * the sponsor's balance, less what its transactions in flight can cost it, stays above it.
   */
  sponsorFloor: bigint | null;
  computeBudget: ComputeBudgetLimits & {
    /**
     * A v1 message's priority fee, the total its config states (v1 has no price × limit); null for
     * legacy and v0, whose priority fee is the price over the charged limit.
     */
    priorityFeeLamports: bigint | null;
    /** The wallet changed, added or removed a compute-budget instruction, or a v1 config value (null: no prepared message to compare with). */
    changed: boolean | null;
    /** The limit the fee is charged for: the signed limit, or the runtime's default bound when the wallet removed it. */
    chargedUnitLimit: number;
  };
}

export type WalletAdditionsVerdict = { ok: true; additions: WalletAdditions } | { ok: false; index: number | null; reason: string };

const refuse = (index: number | null, reason: string): WalletAdditionsVerdict => ({ ok: false, index, reason });

const sameInstruction = (a: MessageInstruction, b: MessageInstruction): boolean =>
  a.program === b.program &&
  a.accounts.length === b.accounts.length &&
  a.accounts.every((account, i) => account === b.accounts[i]) &&
  a.data.length === b.data.length &&
  a.data.every((byte, i) => byte === b.data[i]);

const signersOf = (message: RelayableMessage): Address[] => message.staticAccounts.slice(0, message.header.numSignerAccounts);

const isUtf8 = (bytes: Uint8Array): boolean => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

function budgetOf(instructions: MessageInstruction[]) {
  return readComputeBudget(instructions.filter((i) => i.program !== null).map((i) => ({ programAddress: i.program as Address, data: i.data })));
}

/** Why an added Lighthouse instruction is refused, or its addition. */
function checkGuard(instruction: MessageInstruction, sponsor: Address | null): { refusal: string } | { guard: GuardAddition } {
  const discriminator = instruction.data[0];
  const known = discriminator === undefined ? undefined : LIGHTHOUSE_INSTRUCTIONS.get(discriminator);
  if (!known) return { refusal: `is a Lighthouse instruction Cinder does not know (discriminator ${discriminator ?? 'none'})` };
  const name = `Lighthouse ${known.name}`;
  if (known.kind === 'memory') return { refusal: `is ${name}, which pays for a memory account: wallets' safety checks only assert` };
  if (known.kind === 'cpi') return { refusal: `is ${name}, which calls another program` };
  if (instruction.data.length > MAX_GUARD_DATA_BYTES) return { refusal: `is ${name} with ${instruction.data.length} bytes of data, more than the ${MAX_GUARD_DATA_BYTES} a wallet's safety check needs` };
  if (instruction.accounts.length > MAX_GUARD_ACCOUNTS) return { refusal: `is ${name} naming ${instruction.accounts.length} accounts, more than the ${MAX_GUARD_ACCOUNTS} an assertion reads` };
  if (instruction.accounts.includes(null)) return { refusal: `is ${name} reading an account from an address lookup table` };
  const reads = guardReads(instruction);
  if (sponsor !== null && instruction.accounts.includes(sponsor)) {
    if (instruction.accounts.indexOf(sponsor) !== 0 || instruction.accounts.lastIndexOf(sponsor) !== 0 || !(known.name === 'AssertAccountInfo' || known.name === 'AssertAccountInfoMulti')) {
      return { refusal: `is ${name} naming the fee sponsor other than as the one account an AssertAccountInfo reads` };
    }
    const unsafe = reads.find((read) => read.account === sponsor && read.comparison !== 'lower-bound' && read.comparison !== 'fixed-property');
    if (unsafe) {
      return {
        refusal: `is ${name}: it ${describeComparison(unsafe.comparison)} on the fee sponsor's account, which anyone can break by sending the sponsor lamports, failing the transaction at the sponsor's cost`,
      };
    }
  }
  const breakable = reads.filter((read) => read.comparison !== 'lower-bound' && read.comparison !== 'fixed-property').map(({ account, comparison }) => ({ account, comparison }));
  let sponsorFloor: bigint | null = null;
  for (const read of reads) {
    if (sponsor === null || read.account !== sponsor || read.comparison !== 'lower-bound' || read.lamports === undefined) continue;
    // GreaterThan v needs v + 1; GreaterThanOrEqual v needs v. Taking v + 1 for both errs on the safe side.
    const floor = read.lamports + 1n;
    if (sponsorFloor === null || floor > sponsorFloor) sponsorFloor = floor;
  }
  return { guard: { index: instruction.index, name: known.name, dataBytes: instruction.data.length, breakable, sponsorFloor } };
}

/** Whether an instruction is of a kind a wallet adds (compute budget, Lighthouse, Memo): what a message's identity leaves out. */
export function isWalletAdditionKind(instruction: MessageInstruction): boolean {
  const { program } = instruction;
  return program === COMPUTE_BUDGET_PROGRAM_ADDRESS || program === LIGHTHOUSE_PROGRAM_ADDRESS || (program !== null && MEMO_PROGRAM_ADDRESSES.has(program));
}

/**
 * Whether `signed` differs from `prepared` only by what a wallet may add. `sponsor`: the fee
 * sponsor when it pays this transaction, else null. The refusal names the signed message's
 * instruction (its index, what it is) and why, in words a person can act on.
 *
 * `prepared` null: the caller holds no copy of the prepared message but has proven, by a relay
 * token over the message's identity (its instructions other than compute budget, Lighthouse and
 * Memo, in order), that everything else is what Cinder prepared. Then only the additions are
 * judged, the signers are taken as signed, and `computeBudget.changed` is null (unknown).
 */
export function checkWalletAdditions(prepared: RelayableMessage | null, signed: RelayableMessage, sponsor: Address | null): WalletAdditionsVerdict {
  const preparedSigners = signersOf(prepared ?? signed);
  const signedSigners = signersOf(signed);
  if (prepared && signed.staticAccounts[0] !== prepared.staticAccounts[0]) return refuse(null, 'the wallet changed who pays the fee');
  if (signedSigners.length !== preparedSigners.length || !preparedSigners.every((s) => signedSigners.includes(s))) {
    return refuse(null, 'the wallet changed who signs the transaction');
  }
  const ours = prepared
    ? messageInstructions(prepared).filter((i) => i.program !== COMPUTE_BUDGET_PROGRAM_ADDRESS)
    : messageInstructions(signed).filter((i) => !isWalletAdditionKind(i));
  const theirs = messageInstructions(signed);
  const guards: GuardAddition[] = [];
  let memo = false;
  let next = 0;
  for (const instruction of theirs) {
    const expected = ours[next];
    if (expected && sameInstruction(expected, instruction)) {
      next++;
      continue;
    }
    const { index, program } = instruction;
    const at = `instruction ${index}`;
    if (program === COMPUTE_BUDGET_PROGRAM_ADDRESS) {
      if (instruction.accounts.length > 0) return refuse(index, `${at} is a compute-budget instruction naming accounts`);
      continue;
    }
    if (program === LIGHTHOUSE_PROGRAM_ADDRESS) {
      const checked = checkGuard(instruction, sponsor);
      if ('refusal' in checked) return refuse(index, `${at} ${checked.refusal}`);
      guards.push(checked.guard);
      if (guards.length > MAX_WALLET_GUARDS) return refuse(index, `${at} is a safety check beyond the ${MAX_WALLET_GUARDS} a wallet adds`);
      continue;
    }
    if (program !== null && MEMO_PROGRAM_ADDRESSES.has(program)) {
      if (memo) return refuse(index, `${at} is a second Memo: a wallet adds at most one`);
      if (instruction.data.length > MAX_MEMO_BYTES) return refuse(index, `${at} is a Memo of ${instruction.data.length} bytes, more than ${MAX_MEMO_BYTES}`);
      if (!isUtf8(new Uint8Array(instruction.data))) return refuse(index, `${at} is a Memo that is not valid UTF-8, which the Memo program fails on chain`);
      const stranger = instruction.accounts.find((account) => account === null || account === sponsor || !preparedSigners.includes(account));
      if (stranger !== undefined) {
        return refuse(index, `${at} is a Memo naming ${stranger === sponsor && sponsor !== null ? 'the fee sponsor' : 'an account that does not sign for the wallet'}`);
      }
      memo = true;
      continue;
    }
    return refuse(
      index,
      expected
        ? `${at} (${instructionName(instruction)}) is not what Cinder prepared there (${instructionName(expected)}): a wallet may only add safety checks, one Memo and a compute budget`
        : `${at} (${instructionName(instruction)}) was added after Cinder's instructions: a wallet may only add safety checks, one Memo and a compute budget`,
    );
  }
  if (next < ours.length) {
    const missing = ours[next]!;
    return refuse(null, `Cinder's instruction ${missing.index} (${instructionName(missing)}) is missing or changed in what the wallet signed`);
  }
  if (signed.version === 1) {
    // v1: the compute budget is the config alone, read as the runtime reads it; a wallet may change
    // it (raise the priority fee, say) as it may change legacy's ComputeBudget instructions.
    const problem = v1ConfigProblem(signed);
    if (problem) return refuse(null, `the message's v1 config would fail on chain: ${problem}`);
    const budget = v1MessageBudget(signed);
    if (!budget.ok) return refuse(budget.index, `instruction ${budget.index} is a compute-budget instruction in a v1 message, whose compute budget is its config`);
    const before = prepared?.version === 1 ? v1MessageBudget(prepared) : null;
    const changed = prepared === null ? null : !before?.ok || JSON.stringify(before.limits, bigints) !== JSON.stringify(budget.limits, bigints);
    return finish(guards, memo, { ...budget.limits, changed, chargedUnitLimit: budget.limits.computeUnitLimit ?? 0 });
  }
  const signedBudget = budgetOf(theirs);
  if (!signedBudget.ok) return refuse(null, `the wallet's compute budget would fail on chain: ${describeComputeBudgetError(signedBudget.error)}`);
  const preparedBudget = prepared ? budgetOf(messageInstructions(prepared)) : null;
  const limits = signedBudget.limits;
  const sameBudget = (before: ComputeBudgetLimits) =>
    before.computeUnitLimit === limits.computeUnitLimit &&
    before.computeUnitPriceMicroLamports === limits.computeUnitPriceMicroLamports &&
    before.heapFrameBytes === limits.heapFrameBytes &&
    before.loadedAccountsDataSizeLimit === limits.loadedAccountsDataSizeLimit;
  const changed = preparedBudget === null ? null : !preparedBudget.ok || !sameBudget(preparedBudget.limits);
  const nonBudget = theirs.filter((i) => i.program !== COMPUTE_BUDGET_PROGRAM_ADDRESS).length;
  const chargedUnitLimit = limits.computeUnitLimit ?? Math.min(MAX_COMPUTE_UNIT_LIMIT, DEFAULT_UNITS_PER_INSTRUCTION * nonBudget);
  return finish(guards, memo, { ...limits, priorityFeeLamports: null, changed, chargedUnitLimit });
}

const bigints = (_: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

function finish(guards: GuardAddition[], memo: boolean, computeBudget: WalletAdditions['computeBudget']): WalletAdditionsVerdict {
  const floors = guards.map((g) => g.sponsorFloor).filter((f): f is bigint => f !== null);
  const sponsorFloor = floors.length === 0 ? null : floors.reduce((a, b) => (a > b ? a : b));
  return { ok: true, additions: { lighthouse: guards.length, memo, guards, sponsorFloor, computeBudget } };
}

/**
 * The fee the runtime charges a message as signed: its signatures at the base fee plus the priority
 * fee, which v1 states as a total and legacy and v0 as a price over the charged limit.
 */
export function feeOfMessage(signatures: number, computeBudget: WalletAdditions['computeBudget']): bigint {
  if (computeBudget.priorityFeeLamports !== null) return signatureFees(signatures) + computeBudget.priorityFeeLamports;
  return transactionFee(signatures, computeBudget.computeUnitPriceMicroLamports, computeBudget.chargedUnitLimit);
}

export type SponsorFeeCheck = { ok: true; feeLamports: bigint } | { ok: false; feeLamports: bigint; reason: string };

/**
 * Where the sponsor pays: the fee the signed message implies (its signatures at the base fee,
 * plus the priority fee of the signed price over the limit it is charged for) must still be
 * repaid in full by the transaction's repayment. At a unit price of 0 a raised limit costs
 * nothing; a raised price is refused, with what to do.
 */
export function sponsorFeeRepaid(signatures: number, computeBudget: WalletAdditions['computeBudget'], repaymentLamports: bigint): SponsorFeeCheck {
  const feeLamports = feeOfMessage(signatures, computeBudget);
  if (feeLamports <= repaymentLamports) return { ok: true, feeLamports };
  if (computeBudget.priorityFeeLamports !== null) {
    return {
      ok: false,
      feeLamports,
      reason:
        `the wallet set a priority fee of ${computeBudget.priorityFeeLamports} lamports in the v1 config: the fee becomes ${feeLamports} lamports, more than the ${repaymentLamports} this transaction repays the fee sponsor. ` +
        "Set the wallet's priority fee to none (or its lowest) and sign again, or pay the fee yourself without the sponsor",
    };
  }
  return {
    ok: false,
    feeLamports,
    reason:
      `the wallet set a priority fee of ${computeBudget.computeUnitPriceMicroLamports} micro-lamports per compute unit for ${computeBudget.chargedUnitLimit} units: ` +
      `the fee becomes ${feeLamports} lamports, more than the ${repaymentLamports} this transaction repays the fee sponsor. ` +
      "Set the wallet's priority fee to none (or its lowest) and sign again, or pay the fee yourself without the sponsor",
  };
}

/**
 * Whether the sponsor can co-sign a message whose guards require `floor` of it: its balance as
 * the policy reads it, less what can still leave it before the guard runs (this transaction's fee
 * and the fees of its other sponsored transactions in flight, lost if those fail), must stay at
 * or above the floor. No floor: nothing to hold.
 */
export function sponsorFloorHolds(floor: bigint | null, sponsorLamports: bigint, atRiskLamports: bigint): boolean {
  return floor === null || sponsorLamports - atRiskLamports >= floor;
}
