/**
 * The second step of the pipeline: the accounts' actions packed into as few legacy transactions
 * as the 1,232-byte packet allows, and each transaction's message. Pure: no I/O, no keys (signers
 * here may be no-op signers that only mark an account as one that must sign).
 */
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  isSignerRole,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getBurnCheckedInstruction, getCloseAccountInstruction, getWithdrawExcessLamportsInstruction } from '@solana-program/token';
import { getHarvestWithheldTokensToMintInstruction } from '@solana-program/token-2022';
import { TOKEN_2022_PROGRAM_ADDRESS } from './tokenState.ts';
import type { BlockhashLifetime } from '../chain/types.ts';
import { ACTIONS_THAT_SEND, type AccountAction } from './actions.ts';
import { endOfSlice, nextTurn } from './slices.ts';

/** Solana's packet limit for a legacy transaction. */
export const TRANSACTION_SIZE_LIMIT = 1232;
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** The largest u64: the placeholder amount of a sponsor's repayment, so its size is the size of the real one. */
const U64_MAX = 2n ** 64n - 1n;

/**
 * Upper bounds used only to decide how many accounts fit one transaction; the limit actually
 * requested comes from simulation. Token-2022 instructions cost more (extension parsing).
 */
export const computeUnitsPerAccount = (action: AccountAction) =>
  (action.account.tokenProgram === TOKEN_2022_PROGRAM_ADDRESS ? 30_000 : 12_000) * (action.action === 'burn_and_close' ? 2 : 1);
export const COMPUTE_UNITS_FOR_HARVEST = 30_000;
const COMPUTE_UNITS_FOR_REPAY = 1_000;

export interface TransactionParties {
  /** The token accounts' owner: signs every token instruction. */
  owner: TransactionSigner;
  /** Who pays the fees: the owner, or a sponsor that the owner repays in the same transaction. */
  feePayer: TransactionSigner;
}

export interface PlannedTransaction {
  actions: AccountAction[];
  /** Lamports the actions move to the owner. */
  returnsLamports: bigint;
  burned: { mint: Address; amount: bigint; decimals: number }[];
  computeUnitEstimate: number;
}

function sponsored(parties: TransactionParties): boolean {
  return parties.feePayer.address !== parties.owner.address;
}

/**
 * One account's instructions. `destination` receives what the close (or withdrawal) pays out: the
 * owner itself, or, in a reclaim of many wallets, the one address the caller chose (src/plan/packOwners.ts).
 */
export function instructionsOf(action: AccountAction, owner: TransactionSigner, destination: Address = owner.address): Instruction[] {
  const { account } = action;
  const config = { programAddress: account.tokenProgram };
  const close = () => getCloseAccountInstruction({ account: account.address, destination, owner }, config);
  switch (action.action) {
    case 'close':
    case 'unwrap': // closing a wrapped-SOL account returns its SOL: that is the unwrap
      return [close()];
    case 'burn_and_close':
      return [
        getBurnCheckedInstruction(
          { account: account.address, mint: account.mint, authority: owner, amount: action.burnAmount, decimals: action.mint!.decimals },
          config,
        ),
        close(),
      ];
    case 'withdraw_excess':
      return [getWithdrawExcessLamportsInstruction({ source: account.address, destination, authority: owner }, config)];
    default:
      return [];
  }
}

/**
 * The instructions of one transaction, compute budget excluded: harvests of withheld fees first
 * (one per mint), then each action's, then the sponsor's repayment (`repayLamports`) last, after
 * the closes have paid the owner.
 */
export function transactionInstructions(actions: readonly AccountAction[], parties: TransactionParties, repayLamports: bigint): Instruction[] {
  const harvestSources = new Map<Address, Address[]>();
  for (const action of actions) {
    if (action.harvest) harvestSources.set(action.account.mint, [...(harvestSources.get(action.account.mint) ?? []), action.account.address]);
  }
  const harvests = [...harvestSources].map(([mint, sources]) => getHarvestWithheldTokensToMintInstruction({ mint, sources }));
  const repay = sponsored(parties)
    ? [getTransferSolInstruction({ source: parties.owner, destination: parties.feePayer.address, amount: repayLamports })]
    : [];
  return [...harvests, ...actions.flatMap((action) => instructionsOf(action, parties.owner)), ...repay];
}

export function withComputeBudget(computeUnitLimit: number, computeUnitPriceMicroLamports: bigint, instructions: Instruction[]): Instruction[] {
  return [
    getSetComputeUnitLimitInstruction({ units: computeUnitLimit }),
    getSetComputeUnitPriceInstruction({ microLamports: computeUnitPriceMicroLamports }),
    ...instructions,
  ];
}

/** The legacy message of a transaction: fee payer, lifetime, compute budget and instructions. */
export function transactionMessage(feePayer: TransactionSigner, lifetime: BlockhashLifetime, instructions: Instruction[]) {
  return pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
}

const shortVecLength = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : 3);

/** A transaction's wire size, addresses and instructions, kept up to date as instructions join it. */
export interface TransactionTally {
  add(instruction: Instruction): void;
  /** One more (non-signer) account in an instruction already counted that had `accountsBefore` accounts. */
  addAccount(address: Address, accountsBefore: number): void;
  readonly size: number;
  readonly addresses: number;
  readonly instructions: number;
}

/**
 * What a transaction format allows and how its size grows: legacy here, v1 in
 * src/plan/v1Format.ts. `budgetInstructions`: whether the compute budget travels as
 * instructions (legacy, v0) or in the message's config (v1, counted by its tally).
 */
export interface PackFormat {
  readonly sizeLimit: number;
  readonly maxAddresses: number;
  readonly maxInstructions: number;
  readonly budgetInstructions: boolean;
  tally(feePayer: Address): TransactionTally;
}

/**
 * The addresses, signers and instruction bytes a transaction holds, kept up to date as
 * instructions join it, so that packing thousands of accounts costs one step per account and not
 * one whole transaction per account. Each format says what an instruction costs on its wire and
 * what the whole transaction weighs.
 */
export abstract class KeyTally implements TransactionTally {
  protected readonly keys: Set<string>;
  protected readonly signers: Set<string>;
  protected instructionCount = 0;
  protected instructionBytes = 0;

  constructor(feePayer: Address) {
    this.keys = new Set([feePayer]);
    this.signers = new Set([feePayer]);
  }

  /** The bytes of one compiled instruction with this many accounts and data bytes. */
  protected abstract instructionCost(accounts: number, dataLength: number): number;
  abstract get size(): number;

  add(instruction: Instruction): void {
    this.keys.add(instruction.programAddress);
    const accounts = instruction.accounts ?? [];
    for (const meta of accounts) {
      this.keys.add(meta.address);
      if (isSignerRole(meta.role)) this.signers.add(meta.address);
    }
    this.instructionCount++;
    this.instructionBytes += this.instructionCost(accounts.length, instruction.data?.length ?? 0);
  }

  /** One more (non-signer) account in an instruction already counted that had `accountsBefore` accounts. */
  addAccount(address: Address, accountsBefore: number): void {
    this.keys.add(address);
    this.instructionBytes += this.instructionCost(accountsBefore + 1, 0) - this.instructionCost(accountsBefore, 0);
  }

  get addresses(): number {
    return this.keys.size;
  }

  get instructions(): number {
    return this.instructionCount;
  }
}

/** A legacy transaction's wire size: signatures, header, account keys, blockhash, compiled instructions. */
class SizeTally extends KeyTally {
  protected instructionCost(accounts: number, dataLength: number): number {
    return 1 + shortVecLength(accounts) + accounts + shortVecLength(dataLength) + dataLength;
  }

  get size(): number {
    const messageBytes =
      3 + shortVecLength(this.keys.size) + 32 * this.keys.size + 32 + shortVecLength(this.instructionCount) + this.instructionBytes;
    return shortVecLength(this.signers.size) + 64 * this.signers.size + messageBytes;
  }
}

/**
 * The wire size of a legacy transaction with these instructions, computed from the layout.
 * kit's getTransactionMessageSize gives the same number (test/plan/plan.test.ts checks it) but
 * compiles and encodes the whole message, ~1 ms per instruction.
 */
/** Legacy (and v0, whose packer adds its own bytes): one packet, the compute budget as instructions. */
export const LEGACY_FORMAT: PackFormat = {
  sizeLimit: TRANSACTION_SIZE_LIMIT,
  maxAddresses: Infinity,
  maxInstructions: Infinity,
  budgetInstructions: true,
  tally: (feePayer) => new SizeTally(feePayer),
};

export function legacyTransactionSize(feePayer: Address, instructions: readonly Instruction[]): number {
  const tally = new SizeTally(feePayer);
  for (const instruction of instructions) tally.add(instruction);
  return tally.size;
}

/**
 * Room a transaction leaves for what the signing wallet adds (a browser wallet's guards:
 * WALLET_GUARD_ROOM of src/plan/walletAdditions.ts): bytes off the packet limit, compute units
 * on top of its estimate. Keyed doors, where Cinder signs, leave none.
 */
export interface SignerRoom {
  bytes: number;
  computeUnits: number;
}

/**
 * A transaction being packed: its actions, and its wire size at the largest compute budget and
 * repayment values (the size of the final one is never larger) and compute-unit estimate, both
 * updated as each action joins. Its instructions are those of `transactionInstructions`: one
 * harvest per mint whose sources grow with each account that needs it.
 */
class Batch {
  readonly actions: AccountAction[] = [];
  computeUnits: number;
  private readonly tally: TransactionTally;
  /** Accounts of each mint's harvest instruction so far. */
  private readonly harvestAccounts = new Map<Address, number>();

  constructor(
    private readonly parties: TransactionParties,
    readonly format: PackFormat = LEGACY_FORMAT,
  ) {
    this.tally = format.tally(parties.feePayer.address);
    const repay = transactionInstructions([], parties, U64_MAX);
    for (const instruction of format.budgetInstructions ? withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, U64_MAX, repay) : repay) this.tally.add(instruction);
    this.computeUnits = sponsored(parties) ? COMPUTE_UNITS_FOR_REPAY : 0;
  }

  add(action: AccountAction): void {
    this.actions.push(action);
    for (const instruction of instructionsOf(action, this.parties.owner)) this.tally.add(instruction);
    this.computeUnits += computeUnitsPerAccount(action);
    if (!action.harvest) return;
    const { mint, address } = action.account;
    const accounts = this.harvestAccounts.get(mint);
    if (accounts === undefined) {
      const harvest = getHarvestWithheldTokensToMintInstruction({ mint, sources: [address] });
      this.tally.add(harvest);
      this.harvestAccounts.set(mint, harvest.accounts.length);
      this.computeUnits += COMPUTE_UNITS_FOR_HARVEST;
    } else {
      this.tally.addAccount(address, accounts);
      this.harvestAccounts.set(mint, accounts + 1);
    }
  }

  get size(): number {
    return this.tally.size;
  }

  /** Whether the batch is over the format's size, address or instruction limit (size less `room`). */
  overLimits(room: number): boolean {
    return this.tally.size > this.format.sizeLimit - room || this.tally.addresses > this.format.maxAddresses || this.tally.instructions > this.format.maxInstructions;
  }
}

function batchOf(actions: readonly AccountAction[], parties: TransactionParties, format: PackFormat = LEGACY_FORMAT): Batch {
  const batch = new Batch(parties, format);
  for (const action of actions) batch.add(action);
  return batch;
}

/** The wire size of a transaction with these actions, at the largest compute budget and repayment values. */
export function transactionSize(actions: readonly AccountAction[], parties: TransactionParties, format: PackFormat = LEGACY_FORMAT): number {
  return batchOf(actions, parties, format).size;
}

function plannedTransaction(actions: AccountAction[], computeUnitEstimate: number): PlannedTransaction {
  const burned = new Map<Address, { mint: Address; amount: bigint; decimals: number }>();
  for (const action of actions) {
    if (action.burnAmount === 0n) continue;
    const entry = burned.get(action.account.mint) ?? { mint: action.account.mint, amount: 0n, decimals: action.mint!.decimals };
    burned.set(action.account.mint, { ...entry, amount: entry.amount + action.burnAmount });
  }
  return {
    actions,
    returnsLamports: actions.reduce((sum, a) => sum + a.returnsLamports, 0n),
    burned: [...burned.values()],
    computeUnitEstimate,
  };
}

/**
 * Greedy packing in the planner's order (program, mint: accounts of one mint share a harvest):
 * an account joins the current transaction while it stays within the packet size and the compute
 * limit, else it starts the next one. One step per account: a batch that an account overfills is
 * closed without it, and the account starts a new one. A slice at a time (src/plan/slices.ts).
 * `room`: what the signer's wallet may add, kept free in every transaction.
 */
export async function packTransactions(
  actions: readonly AccountAction[],
  parties: TransactionParties,
  room: SignerRoom | null = null,
  format: PackFormat = LEGACY_FORMAT,
): Promise<PlannedTransaction[]> {
  const roomBytes = room?.bytes ?? 0;
  const unitLimit = MAX_COMPUTE_UNIT_LIMIT - (room?.computeUnits ?? 0);
  const transactions: PlannedTransaction[] = [];
  let batch = new Batch(parties, format);
  for (const [i, action] of actions.entries()) {
    if (endOfSlice(i)) await nextTurn();
    if (!ACTIONS_THAT_SEND.has(action.action)) continue;
    // The estimate without this action: what the batch closed without it would count again.
    const computeUnitsBefore = batch.computeUnits;
    batch.add(action);
    if (batch.actions.length > 1 && (batch.overLimits(roomBytes) || batch.computeUnits > unitLimit)) {
      transactions.push(plannedTransaction(batch.actions.slice(0, -1), computeUnitsBefore));
      batch = batchOf([action], parties, format);
    }
  }
  if (batch.actions.length > 0) transactions.push(plannedTransaction(batch.actions, batch.computeUnits));
  return transactions;
}
