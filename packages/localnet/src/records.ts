/**
 * The record of landed transactions (getSignatureStatuses, getTransaction), the index of their
 * signatures by address (getSignaturesForAddress) and the recent ones' compute-unit prices
 * (getRecentPrioritizationFees).
 */
import type { Address } from '@solana/kit';
import type { UiTokenAmount } from './jsonParsed.ts';
import type { TransactionErrorJson } from './txErrors.ts';
import type { WireTransaction } from './wire.ts';

/** Landed-transaction records kept for getSignatureStatuses / getTransaction. */
const MAX_RECORDS = 100_000;
/** Signatures kept per address for getSignaturesForAddress (newest first). */
const MAX_SIGNATURES_PER_ADDRESS = 1_000;
/** Slots of prioritization fees kept: a blockhash's lifetime. */
const FEE_SLOTS = 150;

export interface InnerInstructionsJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

export interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

export interface ReturnDataJson {
  programId: string;
  data: [string, 'base64'];
}

export interface LoadedAddresses {
  writable: Address[];
  readonly: Address[];
}

export interface TxRecord {
  readonly signature: string;
  readonly slot: number;
  readonly blockTime: number;
  readonly err: TransactionErrorJson | null;
  readonly fee: bigint;
  readonly preBalances: readonly bigint[];
  readonly postBalances: readonly bigint[];
  readonly preTokenBalances: readonly TokenBalanceJson[];
  readonly postTokenBalances: readonly TokenBalanceJson[];
  readonly logs: readonly string[];
  readonly computeUnitsConsumed: bigint;
  readonly innerInstructions: readonly InnerInstructionsJson[];
  readonly returnData: ReturnDataJson | null;
  readonly loadedAddresses: LoadedAddresses;
  /** The transaction as sent; null for records made without its bytes. */
  readonly wire: WireTransaction | null;
  /** Micro-lamports per CU, for getRecentPrioritizationFees. */
  readonly computeUnitPrice: bigint;
  readonly writableAccounts: readonly string[];
  /**
   * A validator vote: counted in blocks and the transaction count like any transaction, left out
   * where agave leaves votes out (prioritization fees, non-vote counts, logs `all`).
   */
  readonly vote?: boolean;
}

export class TransactionRecords {
  private readonly records = new Map<string, TxRecord>();
  private readonly recentLanded: TxRecord[] = [];
  /** address → signatures of landed transactions that referenced it, oldest first. */
  private readonly signaturesByAddress = new Map<string, string[]>();
  /** signature → the addresses it is indexed under, to clean the index when the record goes. */
  private readonly referencedBy = new Map<string, readonly string[]>();

  add(record: TxRecord, referenced: readonly string[]): void {
    this.records.set(record.signature, record);
    const keys = [...new Set(referenced)];
    this.referencedBy.set(record.signature, keys);
    if (this.records.size > MAX_RECORDS) this.forgetOldest();
    for (const key of keys) {
      let list = this.signaturesByAddress.get(key);
      if (!list) {
        list = [];
        this.signaturesByAddress.set(key, list);
      }
      list.push(record.signature);
      if (list.length > MAX_SIGNATURES_PER_ADDRESS) list.splice(0, list.length - MAX_SIGNATURES_PER_ADDRESS);
    }
    this.recentLanded.push(record);
    while (this.recentLanded.length > 0 && this.recentLanded[0]!.slot + FEE_SLOTS < record.slot) this.recentLanded.shift();
  }

  get(signature: string): TxRecord | undefined {
    return this.records.get(signature);
  }

  /** Signatures of landed transactions that referenced `address`, newest first. */
  signaturesFor(address: string): readonly string[] {
    return [...(this.signaturesByAddress.get(address) ?? [])].reverse();
  }

  /**
   * Per recent slot up to `currentSlot`, the lowest compute-unit price paid by a landed transaction
   * that write-locks one of `accounts` (any transaction when empty); 0 when none did.
   */
  prioritizationFees(accounts: readonly string[], currentSlot: number): { slot: number; prioritizationFee: bigint }[] {
    const first = Math.max(0, currentSlot - FEE_SLOTS + 1);
    const fees = new Map<number, bigint>();
    for (const record of this.recentLanded) {
      if (record.slot < first || record.wire === null || record.vote) continue;
      if (accounts.length > 0 && !accounts.some((a) => record.writableAccounts.includes(a))) continue;
      const known = fees.get(record.slot);
      fees.set(record.slot, known === undefined || record.computeUnitPrice < known ? record.computeUnitPrice : known);
    }
    const result: { slot: number; prioritizationFee: bigint }[] = [];
    for (let slot = first; slot <= currentSlot; slot++) result.push({ slot, prioritizationFee: fees.get(slot) ?? 0n });
    return result;
  }

  /** Drops the oldest record and its entries in the address index (it is the oldest there too). */
  private forgetOldest(): void {
    const oldest = this.records.keys().next();
    if (oldest.done) return;
    const signature = oldest.value;
    this.records.delete(signature);
    for (const key of this.referencedBy.get(signature) ?? []) {
      const list = this.signaturesByAddress.get(key);
      if (list?.[0] === signature) list.shift();
      if (list?.length === 0) this.signaturesByAddress.delete(key);
    }
    this.referencedBy.delete(signature);
  }
}
