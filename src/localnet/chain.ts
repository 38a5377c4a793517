/**
 * Chain state around one LiteSVM instance: the slot clock, the window of recent blockhashes, the
 * record of landed transactions, and change notifications for the WebSocket server.
 *
 * Slots and block heights are the same number here (every slot produces a block), starting at 0.
 */
import { address, getBase58Decoder, getAddressDecoder, type Address, type Blockhash, type Lamports } from '@solana/kit';
import { LiteSVM } from 'litesvm';
import { epochPosition, type EpochScheduleParams } from './epochs.ts';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './jsonParsed.ts';
import type { TransactionErrorJson } from './txErrors.ts';
import type { DecodedMessage, WireTransaction } from './wire.ts';

/** A blockhash is usable for this many blocks after the one that produced it. */
export const MAX_PROCESSING_AGE = 150;
/** Landed transactions count as finalized once they are this many slots deep. */
export const FINALIZATION_DEPTH = 32;
/** Landed-transaction records kept for getSignatureStatuses / getTransaction. */
const MAX_RECORDS = 100_000;

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
const NATIVE_MINT = 'So11111111111111111111111111111111111111112';
const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP';
const LOOKUP_TABLE_META_SIZE = 56;
const NONCE_ACCOUNT_SIZE = 80;
const ADVANCE_NONCE_ACCOUNT = 4;

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface InnerInstructionsJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

export interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number; uiAmountString: string };
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
  /** Null for faucet airdrops: LiteSVM signs those itself and does not expose the bytes. */
  readonly wire: WireTransaction | null;
  /** Micro-lamports per CU, for getRecentPrioritizationFees. */
  readonly computeUnitPrice: bigint;
  readonly writableAccounts: readonly string[];
}

export interface SignatureConfirmation {
  confirmations: number | null;
  confirmationStatus: 'confirmed' | 'finalized';
}

type Listener<T> = (value: T) => void;

class Signal<T> {
  private readonly listeners = new Set<Listener<T>>();
  constructor(private readonly logger: Logger) {}
  on(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.logger.error({ err }, 'localnet listener failed');
      }
    }
  }
}

const base58 = getBase58Decoder();
const addressDecoder = getAddressDecoder();

export class Chain {
  readonly svm: LiteSVM;
  readonly genesisHash: string;
  readonly identity: Address;
  readonly logger: Logger;
  /** Fired after every new slot (timer, landed transaction, warp). */
  readonly slotAdvanced: Signal<number>;
  /** Fired when a transaction lands, before the slot advances past it. */
  readonly transactionLanded: Signal<TxRecord>;
  /** Fired with the addresses whose accounts may have changed. */
  readonly accountsChanged: Signal<readonly string[]>;

  private currentSlot = 0;
  private unixTimestamp: number;
  private readonly schedule: EpochScheduleParams;
  /** blockhash → block height that produced it; insertion order = age. */
  private readonly blockhashes = new Map<string, number>();
  private latest: string;
  private readonly records = new Map<string, TxRecord>();
  private readonly recentLanded: TxRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private transactionCount = 0n;

  constructor(logger: Logger) {
    this.logger = logger;
    this.slotAdvanced = new Signal(logger);
    this.transactionLanded = new Signal(logger);
    this.accountsChanged = new Signal(logger);
    // LiteSVM only accepts its newest blockhash; the window of recent ones is enforced here.
    this.svm = new LiteSVM().withNativeMints().withBlockhashCheck(false).withSigverify(true);
    for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ASSOCIATED_TOKEN_PROGRAM]) {
      const account = this.svm.getAccount(address(program));
      if (!account.exists || !account.executable) throw new Error(`LiteSVM is missing the program ${program}`);
    }
    for (const mint of [NATIVE_MINT, NATIVE_MINT_2022]) {
      if (!this.svm.getAccount(address(mint)).exists) throw new Error(`LiteSVM is missing the native mint ${mint}`);
    }
    const schedule = this.svm.getEpochSchedule();
    this.schedule = {
      slotsPerEpoch: schedule.slotsPerEpoch,
      warmup: schedule.warmup,
      firstNormalEpoch: schedule.firstNormalEpoch,
      firstNormalSlot: schedule.firstNormalSlot,
    };
    this.genesisHash = this.svm.latestBlockhash();
    this.latest = this.genesisHash;
    this.blockhashes.set(this.genesisHash, 0);
    this.unixTimestamp = Math.floor(Date.now() / 1000);
    const clock = this.svm.getClock();
    clock.epochStartTimestamp = BigInt(this.unixTimestamp);
    this.svm.setClock(clock);
    this.syncClock();
    this.identity = addressDecoder.decode(crypto.getRandomValues(new Uint8Array(32)));
  }

  /** Starts the slot timer; 0 = slots advance only with landed transactions and warps. */
  start(slotIntervalMs: number): void {
    if (slotIntervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.advanceSlots(1), slotIntervalMs);
    // The chain must never be what keeps a process (a test runner, `npm start`) alive.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get slot(): number {
    return this.currentSlot;
  }

  get blockHeight(): number {
    return this.currentSlot;
  }

  get blockTime(): number {
    return this.unixTimestamp;
  }

  get processedTransactionCount(): bigint {
    return this.transactionCount;
  }

  epochInfo(): { epoch: bigint; slotIndex: bigint; slotsInEpoch: bigint } {
    return epochPosition(this.schedule, BigInt(this.currentSlot));
  }

  latestBlockhash(): { blockhash: Blockhash; lastValidBlockHeight: number } {
    return { blockhash: this.latest as Blockhash, lastValidBlockHeight: this.blockHeight + MAX_PROCESSING_AGE };
  }

  /** Valid while the current block height is at most (height that produced it) + 150. */
  isBlockhashValid(blockhash: string): boolean {
    const height = this.blockhashes.get(blockhash);
    return height !== undefined && this.blockHeight <= height + MAX_PROCESSING_AGE;
  }

  /** The message's lifetime: a recent blockhash, or the current value of a durable nonce. */
  isLifetimeValid(message: DecodedMessage): boolean {
    return this.isBlockhashValid(message.lifetimeToken) || this.isDurableNonceValid(message);
  }

  private isDurableNonceValid(message: DecodedMessage): boolean {
    const first = message.instructions[0];
    if (!first || message.staticAccounts[first.programAddressIndex] !== SYSTEM_PROGRAM) return false;
    const data = first.data;
    if (!data || data.length < 4 || new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) !== ADVANCE_NONCE_ACCOUNT) return false;
    const nonceAddress = message.staticAccounts[first.accountIndices?.[0] ?? -1];
    if (!nonceAddress) return false;
    const account = this.svm.getAccount(nonceAddress);
    if (!account.exists || account.programAddress !== SYSTEM_PROGRAM || account.data.length !== NONCE_ACCOUNT_SIZE) return false;
    const nonceData = account.data;
    const initialized = new DataView(nonceData.buffer, nonceData.byteOffset, nonceData.byteLength).getUint32(4, true) === 1;
    const authority = addressDecoder.decode(nonceData.subarray(8, 40));
    const signers = message.staticAccounts.slice(0, message.header.numSignerAccounts);
    return initialized && base58.decode(nonceData.subarray(40, 72)) === message.lifetimeToken && signers.includes(authority);
  }

  /**
   * Moves the chain `count` slots forward: each new slot gets a fresh blockhash, the Clock sysvar
   * follows. Only the last 151 blockhashes can ever be valid, so a long warp skips the others.
   */
  advanceSlots(count: number): void {
    if (count <= 0) return;
    const target = this.currentSlot + count;
    for (let slot = Math.max(this.currentSlot + 1, target - MAX_PROCESSING_AGE); slot <= target; slot++) {
      this.svm.expireBlockhash();
      this.latest = this.svm.latestBlockhash();
      this.blockhashes.set(this.latest, slot);
    }
    this.currentSlot = target;
    for (const [hash, height] of this.blockhashes) {
      if (height + MAX_PROCESSING_AGE >= target) break;
      this.blockhashes.delete(hash);
    }
    this.syncClock();
    this.slotAdvanced.emit(target);
  }

  private syncClock(): void {
    const clock = this.svm.getClock();
    const { epoch } = this.epochInfo();
    this.unixTimestamp = Math.max(this.unixTimestamp, Math.floor(Date.now() / 1000));
    clock.slot = BigInt(this.currentSlot);
    clock.epoch = epoch;
    clock.leaderScheduleEpoch = epoch + 1n;
    clock.unixTimestamp = BigInt(this.unixTimestamp);
    this.svm.setClock(clock);
  }

  /** Stores a landed transaction, notifies, then closes its slot. */
  land(record: TxRecord, touched: readonly string[]): void {
    this.records.set(record.signature, record);
    if (this.records.size > MAX_RECORDS) {
      const oldest = this.records.keys().next();
      if (!oldest.done) this.records.delete(oldest.value);
    }
    this.transactionCount++;
    this.recentLanded.push(record);
    while (this.recentLanded.length > 0 && this.recentLanded[0]!.slot + MAX_PROCESSING_AGE < record.slot) this.recentLanded.shift();
    this.transactionLanded.emit(record);
    this.accountsChanged.emit(touched);
    this.advanceSlots(1);
  }

  getRecord(signature: string): TxRecord | undefined {
    return this.records.get(signature);
  }

  confirmationOf(record: TxRecord): SignatureConfirmation {
    const depth = this.currentSlot - record.slot;
    return depth >= FINALIZATION_DEPTH
      ? { confirmations: null, confirmationStatus: 'finalized' }
      : { confirmations: depth, confirmationStatus: 'confirmed' };
  }

  /**
   * Per recent slot, the lowest compute-unit price paid by a landed transaction that write-locks
   * one of `accounts` (any transaction when empty); 0 when none did.
   */
  recentPrioritizationFees(accounts: readonly string[]): { slot: number; prioritizationFee: bigint }[] {
    const first = Math.max(0, this.currentSlot - MAX_PROCESSING_AGE + 1);
    const fees = new Map<number, bigint>();
    for (const record of this.recentLanded) {
      if (record.slot < first || record.wire === null) continue;
      if (accounts.length > 0 && !accounts.some((a) => record.writableAccounts.includes(a))) continue;
      const known = fees.get(record.slot);
      fees.set(record.slot, known === undefined || record.computeUnitPrice < known ? record.computeUnitPrice : known);
    }
    const result: { slot: number; prioritizationFee: bigint }[] = [];
    for (let slot = first; slot <= this.currentSlot; slot++) result.push({ slot, prioritizationFee: fees.get(slot) ?? 0n });
    return result;
  }

  /**
   * Addresses loaded through the message's lookup tables, or null when a table is missing or an
   * index is out of range (the transaction will then fail to sanitize in LiteSVM).
   */
  resolveLoadedAddresses(message: DecodedMessage): LoadedAddresses | null {
    const loaded: LoadedAddresses = { writable: [], readonly: [] };
    if (message.version === 'legacy') return loaded;
    for (const lookup of message.addressTableLookups ?? []) {
      const table = this.svm.getAccount(lookup.lookupTableAddress);
      if (!table.exists || table.programAddress !== ADDRESS_LOOKUP_TABLE_PROGRAM) return null;
      const addresses = table.data.subarray(LOOKUP_TABLE_META_SIZE);
      const at = (index: number): Address | null =>
        (index + 1) * 32 <= addresses.length ? addressDecoder.decode(addresses.subarray(index * 32, index * 32 + 32)) : null;
      for (const [indexes, into] of [[lookup.writableIndexes, loaded.writable], [lookup.readonlyIndexes, loaded.readonly]] as const) {
        for (const index of indexes) {
          const resolved = at(index);
          if (resolved === null) return null;
          into.push(resolved);
        }
      }
    }
    return loaded;
  }

  balanceOf(account: Address): bigint {
    return this.svm.getBalance(account) ?? 0n;
  }

  /** Writes an account directly (test-only RPC and tests); subscribers are told. */
  setAccount(account: { address: Address; lamports: bigint; data: Uint8Array; owner: Address; executable: boolean }): void {
    this.svm.setAccount({
      address: account.address,
      lamports: account.lamports as Lamports,
      data: account.data,
      programAddress: account.owner,
      executable: account.executable,
      space: BigInt(account.data.length),
    });
    this.accountsChanged.emit([account.address]);
  }
}
