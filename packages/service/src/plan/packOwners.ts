/**
 * A reclaim of many wallets (docs/many-wallets.md): the closable accounts of many owners packed
 * into as few version-0 transactions as the 1,232-byte packet allows, or, where the cluster and the
 * signer take v1, as few v1 transactions as its limits allow (src/plan/v1Format.ts). One fee payer pays every
 * fee; each transaction carries the closes of several owners, and their signatures; every close
 * pays out to one `destination`. Pure: no I/O, no keys (owners are no-op signers that only mark
 * the accounts that must sign).
 *
 * What a transaction's size is made of: 64 bytes of signature and 32 of key for the fee payer and
 * for each owner in it; 32 bytes per closed account plus its 7-byte CloseAccount; the blockhash,
 * the header, the compute budget, the token program(s) and the destination once. An owner whose
 * accounts do not all fit is split at the transaction's end (its signature is then in both): the
 * packing is next-fit at the account level, so a transaction is closed only when the next account
 * does not fit it, and no transaction but the last wastes more than one account and one signature.
 */
import {
  appendTransactionMessageInstructions,
  createNoopSigner,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { getHarvestWithheldTokensToMintInstruction } from '@solana-program/token-2022';
import type { BlockhashLifetime } from '../chain/types.ts';
import { ACTIONS_THAT_SEND, type AccountAction } from './actions.ts';
import {
  COMPUTE_UNITS_FOR_HARVEST,
  computeUnitsPerAccount,
  instructionsOf,
  legacyTransactionSize,
  MAX_COMPUTE_UNIT_LIMIT,
  TRANSACTION_SIZE_LIMIT,
  withComputeBudget,
} from './pack.ts';
import { endOfSlice, nextTurn } from './slices.ts';
import { v1TransactionMessage, type V1Limits } from './transactionVersion.ts';
import { V1_FORMAT, V1_MAX_SIGNATURES } from './v1Format.ts';

/** The versions a many-owner job packs for: v0 (no lookup table), or v1 where the cluster and the signer take it (src/plan/transactionVersion.ts). */
export type ManyOwnerVersion = 0 | 1;

/** One owner's accounts to close (those the planner said to close, burn and close, or unwrap). */
export interface OwnerActions {
  owner: Address;
  actions: readonly AccountAction[];
}

/** One account of a multi-owner transaction, with its owner. */
export interface OwnedAction {
  owner: Address;
  action: AccountAction;
}

export interface ManyOwnerTransaction {
  /** The owners whose closes it carries (each signs it), in order. */
  owners: Address[];
  actions: OwnedAction[];
  /** Lamports its closes pay to the destination. */
  returnsLamports: bigint;
  /** Signatures it needs: the fee payer and each owner (one when the fee payer is also an owner). */
  signatures: number;
  computeUnitEstimate: number;
}

/** The largest u64: the compute-unit price whose size every real price's size is within. */
const U64_MAX = 2n ** 64n - 1n;

/** A version-0 message is its legacy layout plus a version byte and an empty address-table-lookup list. */
const V0_EXTRA_BYTES = 2;

/**
 * The instructions of a multi-owner transaction, compute budget excluded: one harvest of withheld
 * Token-2022 fees per mint (permissionless; the closes need it first), then each account's, paying
 * out to `destination`.
 */
export function manyOwnerInstructions(actions: readonly OwnedAction[], destination: Address): Instruction[] {
  const harvestSources = new Map<Address, Address[]>();
  for (const { action } of actions) {
    if (action.harvest) harvestSources.set(action.account.mint, [...(harvestSources.get(action.account.mint) ?? []), action.account.address]);
  }
  const harvests = [...harvestSources].map(([mint, sources]) => getHarvestWithheldTokensToMintInstruction({ mint, sources }));
  return [...harvests, ...actions.flatMap(({ owner, action }) => instructionsOf(action, createNoopSigner(owner), destination))];
}

/** The version-0 message (no address lookup table) of a multi-owner transaction, ready to compile. */
export function manyOwnerMessage(
  feePayer: TransactionSigner,
  lifetime: BlockhashLifetime,
  computeUnitLimit: number,
  computeUnitPriceMicroLamports: bigint,
  actions: readonly OwnedAction[],
  destination: Address,
) {
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(withComputeBudget(computeUnitLimit, computeUnitPriceMicroLamports, manyOwnerInstructions(actions, destination)), m),
  );
}

/** The v1 message of a multi-owner transaction: the same instructions, every limit in its config. */
export function manyOwnerV1Message(feePayer: TransactionSigner, lifetime: BlockhashLifetime, limits: V1Limits, actions: readonly OwnedAction[], destination: Address) {
  return v1TransactionMessage(feePayer, lifetime, manyOwnerInstructions(actions, destination), limits);
}

/**
 * Whether a v1 transaction of these accounts keeps every limit of the format: 4,096 bytes, 64
 * addresses, 64 instructions, 12 signatures (the fee payer's and each owner's), and the compute limit.
 */
function fitsV1(feePayer: Address, actions: readonly OwnedAction[], destination: Address): boolean {
  const tally = V1_FORMAT.tally(feePayer);
  for (const instruction of manyOwnerInstructions(actions, destination)) tally.add(instruction);
  const signatures = new Set([feePayer, ...actions.map((a) => a.owner)]).size;
  return (
    tally.size <= V1_FORMAT.sizeLimit &&
    tally.addresses <= V1_FORMAT.maxAddresses &&
    tally.instructions <= V1_FORMAT.maxInstructions &&
    signatures <= V1_MAX_SIGNATURES &&
    computeUnitsOf(actions) <= MAX_COMPUTE_UNIT_LIMIT
  );
}

/** The wire size of a version-0 transaction of these accounts, at the largest compute budget values. */
export function manyOwnerTransactionSize(feePayer: Address, actions: readonly OwnedAction[], destination: Address): number {
  const instructions = withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, U64_MAX, manyOwnerInstructions(actions, destination));
  return legacyTransactionSize(feePayer, instructions) + V0_EXTRA_BYTES;
}

function computeUnitsOf(actions: readonly OwnedAction[]): number {
  const harvestMints = new Set(actions.filter((a) => a.action.harvest).map((a) => a.action.account.mint));
  return actions.reduce((sum, a) => sum + computeUnitsPerAccount(a.action), 0) + harvestMints.size * COMPUTE_UNITS_FOR_HARVEST;
}

function transactionOf(feePayer: Address, actions: OwnedAction[]): ManyOwnerTransaction {
  const owners = [...new Set(actions.map((a) => a.owner))];
  return {
    owners,
    actions,
    returnsLamports: actions.reduce((sum, a) => sum + a.action.returnsLamports, 0n),
    signatures: new Set([feePayer, ...owners]).size,
    computeUnitEstimate: computeUnitsOf(actions),
  };
}

/**
 * Every owner's sending actions packed, owners in the order given and each owner's accounts in the
 * planner's order: an account joins the current transaction while the transaction stays within the
 * format's limits and the compute limit, else it starts the next one. A transaction holds at most a
 * few dozen accounts, so its size is computed anew for each account (microseconds), a slice of
 * accounts at a time (src/plan/slices.ts): a job of 1,000 owners is thousands of accounts.
 *
 * v1's binding limit is often its 12 signatures, where next-fit would leave the last transaction
 * with one owner and split another owner over two (a signature more): the owners are packed a
 * second time, at most ⌈owners / transactions⌉ to a transaction, and that packing is kept when it
 * needs no more transactions and no more signatures.
 */
export async function packOwners(
  owners: readonly OwnerActions[],
  feePayer: Address,
  destination: Address,
  version: ManyOwnerVersion = 0,
): Promise<ManyOwnerTransaction[]> {
  const nextFit = await packNextFit(owners, feePayer, destination, version, Infinity);
  if (version === 0 || nextFit.length < 2) return nextFit;
  const sending = owners.filter((o) => o.actions.some((a) => ACTIONS_THAT_SEND.has(a.action))).length;
  const even = await packNextFit(owners, feePayer, destination, version, Math.ceil(sending / nextFit.length));
  const signatures = (transactions: readonly ManyOwnerTransaction[]) => transactions.reduce((sum, t) => sum + t.signatures, 0);
  return even.length <= nextFit.length && signatures(even) <= signatures(nextFit) ? even : nextFit;
}

/** Next-fit at the account level, at most `maxOwners` owners to a transaction. */
async function packNextFit(
  owners: readonly OwnerActions[],
  feePayer: Address,
  destination: Address,
  version: ManyOwnerVersion,
  maxOwners: number,
): Promise<ManyOwnerTransaction[]> {
  const transactions: ManyOwnerTransaction[] = [];
  let current: OwnedAction[] = [];
  let currentOwners = new Set<Address>();
  let index = 0;
  for (const { owner, actions } of owners) {
    for (const action of actions) {
      if (endOfSlice(index++)) await nextTurn();
      if (!ACTIONS_THAT_SEND.has(action.action)) continue;
      const candidate = [...current, { owner, action }];
      const fits =
        (currentOwners.has(owner) || currentOwners.size < maxOwners) &&
        (version === 1
          ? fitsV1(feePayer, candidate, destination)
          : manyOwnerTransactionSize(feePayer, candidate, destination) <= TRANSACTION_SIZE_LIMIT && computeUnitsOf(candidate) <= MAX_COMPUTE_UNIT_LIMIT);
      if (fits || current.length === 0) {
        current = candidate;
        currentOwners.add(owner);
        continue;
      }
      transactions.push(transactionOf(feePayer, current));
      current = [{ owner, action }];
      currentOwners = new Set([owner]);
    }
  }
  if (current.length > 0) transactions.push(transactionOf(feePayer, current));
  return transactions;
}
