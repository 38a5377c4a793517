/**
 * Chain state around one LiteSVM instance: the slot clock, the window of recent blockhashes, the
 * record of landed transactions, and change notifications for the WebSocket server.
 *
 * Slots and block heights are the same number here (every slot produces a block), starting at 0.
 */
import {
  address,
  getAddressDecoder,
  type Address,
  type Blockhash,
  type Lamports,
} from '@solana/kit';
import { LiteSVM } from 'litesvm';
import { applyTestValidatorEpochSchedule, epochPosition, type EpochScheduleParams } from './epochs.ts';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './jsonParsed.ts';
import { TokenAccountIndex } from './tokenIndex.ts';
import { SlotSysvars } from './slotSysvars.ts';
import { BlockStore, type BlockInfo } from './blocks.ts';
import { TransactionRecords, type LoadedAddresses, type TxRecord } from './records.ts';
import { isDurableNonceValid, largestAccounts, resolveLoadedAddresses, stakeMinimumDelegation } from './svmReads.ts';
import { Signal, type Logger } from './signal.ts';
import { rebaseDurableNonces } from './nonces.ts';
import { IDENTITY_LAMPORTS, VOTE_FEE, VOTE_PROGRAM, Voter, voteRecord } from './votes.ts';

export type { Logger } from './signal.ts';
export type { BlockInfo } from './blocks.ts';

export type { InnerInstructionsJson, LoadedAddresses, ReturnDataJson, TokenBalanceJson, TxRecord } from './records.ts';

export type { TokenAccountSnapshot } from './tokenIndex.ts';
import { ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM } from './parsedInstructions.ts';
import type { DecodedMessage } from './wire.ts';
import { CONFIRMATION_DEPTH, DEFAULT_SLOT_MS, FINALIZATION_DEPTH, FORWARDING_MS, MAX_PROCESSING_AGE, type Timing } from './timing.ts';


const NATIVE_MINT = 'So11111111111111111111111111111111111111112';
const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP';
/** Owners of every account LiteSVM creates at genesis (the faucet, sysvars, programs, native mints). */
const GENESIS_OWNERS = [
  SYSTEM_PROGRAM,
  'NativeLoader1111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Sysvar1111111111111111111111111111111111111',
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  VOTE_PROGRAM,
];

export interface SignatureConfirmation {
  confirmations: number | null;
  confirmationStatus: 'processed' | 'confirmed' | 'finalized';
}


export interface ChainOptions {
  timing?: Timing;
  /** Whether Token-2022's native mint exists at start (a fresh test validator has none). */
  token2022NativeMint?: boolean;
  /** Slots in every epoch, without warm-up, as `--slots-per-epoch` (default 432,000). */
  slotsPerEpoch?: number;
}


const addressDecoder = getAddressDecoder();


export class Chain {
  readonly svm: LiteSVM;
  readonly genesisHash: string;
  /**
   * What getGenesisHash answers: unique to this chain, as a test validator's new ledger has a new
   * genesis (LiteSVM's first blockhash, `genesisHash`, is the same in every instance), so that what
   * a client keeps for one chain (Cinder scopes its idempotency records by it) never applies to the next.
   */
  readonly clusterGenesisHash: string;
  readonly identity: Address;
  /** The vote account of this chain's one validator (getVoteAccounts). */
  readonly votePubkey: Address;
  readonly logger: Logger;
  /** Fired after every new slot (timer, warp). */
  readonly slotAdvanced: Signal<number>;
  /**
   * Fired after slotAdvanced when the root moved: every newly rooted slot that has a block, oldest
   * first (agave's `notify_roots` gets all the slots a new root roots, not only the newest).
   */
  readonly rooted: Signal<readonly number[]>;
  /** Fired when a transaction lands (in the current slot). */
  readonly transactionLanded: Signal<TxRecord>;
  /** Fired with the addresses whose accounts may have changed. */
  readonly accountsChanged: Signal<readonly string[]>;

  private currentSlot = 0;
  readonly timing: Timing;
  private readonly slotSysvars: SlotSysvars;
  private readonly schedule: EpochScheduleParams;
  /** blockhash → block height that produced it; insertion order = age. */
  private readonly blockhashes = new Map<string, number>();
  private latest: string;
  private readonly blocks = new BlockStore();
  private timer: NodeJS.Timeout | undefined;
  private slotMs = DEFAULT_SLOT_MS;
  /** The slot clock: slot = originSlot + floor((now − originMs) / slotMs) while the timer runs. */
  private originMs = 0;
  private originSlot = 0;
  /** Time added by warps, so that block times move with the slots a warp skips. */
  private warpedMs = 0;
  private transactionCount = 0n;
  /** Lamports in existence (getSupply): the genesis accounts, minus fees, plus test-only writes. */
  private supply = 0n;
  private minimumDelegation: bigint | undefined;
  readonly records = new TransactionRecords();
  /**
   * Every address that may hold an account: the genesis accounts, then every account a landed
   * transaction could write (its writable keys, fee payer included) and every direct write. LiteSVM
   * cannot list all its accounts, and no account changes any other way. Closed ones are pruned.
   */
  private readonly knownAddresses = new Set<Address>();
  /** The slot each account was last written in (agave's `get_account_modified_slot`); absent: genesis, 0. */
  private readonly modifiedSlots = new Map<string, number>();
  readonly tokenIndex: TokenAccountIndex;
  /** Casts a vote into every block (validator timing, as a test validator's blocks hold its votes). */
  private readonly voter: Voter | undefined;

  constructor(logger: Logger, options: ChainOptions = {}) {
    this.logger = logger;
    this.timing = options.timing ?? 'validator';
    this.slotAdvanced = new Signal(logger);
    this.rooted = new Signal(logger);
    this.transactionLanded = new Signal(logger);
    this.accountsChanged = new Signal(logger);
    // LiteSVM only accepts its newest blockhash; the window of recent ones is enforced here.
    this.svm = new LiteSVM().withNativeMints().withBlockhashCheck(false).withSigverify(true);
    this.tokenIndex = new TokenAccountIndex(this.svm);
    for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ASSOCIATED_TOKEN_PROGRAM]) {
      const account = this.svm.getAccount(address(program));
      if (!account.exists || !account.executable) throw new Error(`LiteSVM is missing the program ${program}`);
    }
    for (const mint of [NATIVE_MINT, NATIVE_MINT_2022]) {
      if (!this.svm.getAccount(address(mint)).exists) throw new Error(`LiteSVM is missing the native mint ${mint}`);
    }
    // A test validator's genesis has SPL Token's native mint only; Token-2022's is made by its
    // CreateNativeMint instruction, which fails if the account exists.
    if (!options.token2022NativeMint) {
      const empty = { lamports: 0n as Lamports, data: new Uint8Array(), programAddress: address(SYSTEM_PROGRAM), executable: false, space: 0n };
      this.svm.setAccount({ address: address(NATIVE_MINT_2022), ...empty });
    }
    this.slotSysvars = new SlotSysvars(this.svm, this.timing === 'instant');
    this.schedule = applyTestValidatorEpochSchedule(this.svm, options.slotsPerEpoch);
    this.genesisHash = this.svm.latestBlockhash();
    this.latest = this.genesisHash;
    this.blockhashes.set(this.genesisHash, 0);
    const genesisTime = this.nowSeconds();
    this.blocks.add({ slot: 0, parentSlot: 0, blockhash: this.genesisHash, previousBlockhash: '11111111111111111111111111111111', blockTime: genesisTime, signatures: [] });
    const clock = this.svm.getClock();
    clock.epochStartTimestamp = BigInt(genesisTime);
    this.svm.setClock(clock);
    this.syncClock(genesisTime);
    this.slotSysvars.produced([{ slot: 0, blockhash: this.genesisHash }], { slot: 0, blockhash: this.genesisHash });
    this.votePubkey = addressDecoder.decode(crypto.getRandomValues(new Uint8Array(32)));
    const voter = new Voter(this.votePubkey);
    this.identity = voter.identity;
    if (this.timing === 'validator') {
      this.voter = voter;
      this.svm.setAccount({ address: this.identity, lamports: IDENTITY_LAMPORTS as Lamports, data: new Uint8Array(), programAddress: address(SYSTEM_PROGRAM), executable: false, space: 0n });
      voter.initializeVoteAccount(this.svm, this.latest);
    }
    this.clusterGenesisHash = addressDecoder.decode(crypto.getRandomValues(new Uint8Array(32)));
    for (const owner of GENESIS_OWNERS) {
      for (const account of this.svm.getProgramAccounts(address(owner))) {
        this.supply += account.lamports;
        this.knownAddresses.add(account.address);
      }
    }
    // Slot 0 is the genesis block, which holds no transactions on a cluster: the first
    // transaction lands in slot 1 at the earliest, however soon after the start it arrives.
    this.produceSlots(1);
  }

  get capitalization(): bigint {
    return this.supply;
  }

  /** The `count` accounts holding the most lamports (getLargestAccounts), as accounts-db orders them. */
  largestAccounts(count: number): { address: Address; lamports: bigint }[] {
    return largestAccounts(this.svm, this.knownAddresses, count);
  }

  /** The stake program's minimum delegation (its own answer, asked once). */
  stakeMinimumDelegation(): bigint {
    this.minimumDelegation ??= stakeMinimumDelegation(this.svm, this.latest as Blockhash);
    return this.minimumDelegation;
  }

  /**
   * Starts the slot clock: one slot every `slotIntervalMs` of wall time, however many transactions
   * land (a real cluster's leader packs many into one slot). The slot is computed from the time
   * elapsed, so a busy event loop that delays the timer does not slow the chain down. 0 = no clock
   * (slots move only with warps).
   */
  start(slotIntervalMs: number): void {
    if (slotIntervalMs <= 0 || this.timer) return;
    this.slotMs = slotIntervalMs;
    this.originMs = Date.now();
    this.originSlot = this.currentSlot;
    this.wakeAtNextSlot();
  }

  /**
   * Wakes the clock at the next slot's start. Aimed at the boundary, not repeated at an interval:
   * an interval drifts by however late each run is, and on a busy machine the slots (with the
   * confirmations and notifications they push) would start up to a slot late; a validator's don't.
   */
  private wakeAtNextSlot(): void {
    const nextSlotMs = this.originMs + (this.currentSlot + 1 - this.originSlot) * this.slotMs;
    const timer = setTimeout(() => {
      this.tick();
      // stop() during the tick (a listener halting the chain) cleared the clock: stay stopped.
      if (this.timer === timer) this.wakeAtNextSlot();
    }, Math.max(0, nextSlotMs - Date.now()));
    // The chain must never be what keeps a process (a test runner, `npm start`) alive.
    timer.unref();
    this.timer = timer;
  }

  /** Stops the clock where it is (a halted cluster); start() resumes from the same slot. */
  stop(): void {
    this.tick();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Brings the slot up to the wall clock; called by the timer and before every RPC request. */
  tick(): void {
    if (!this.timer) return;
    const due = this.originSlot + Math.floor((Date.now() - this.originMs) / this.slotMs);
    if (due > this.currentSlot) this.produceSlots(due - this.currentSlot);
  }

  get slot(): number {
    return this.currentSlot;
  }

  get blockHeight(): number {
    return this.currentSlot;
  }

  /**
   * The newest slot that counts as finalized, and the root: 32 slots behind the tip, as on a
   * single validator whose tower roots a slot once 32 votes sit on top of it. A fresh chain's root
   * is its genesis slot 0 until it reaches slot 33 (about 13 s), as on a fresh validator.
   */
  get finalizedSlot(): number {
    return Math.max(0, this.currentSlot - FINALIZATION_DEPTH);
  }

  /** Slots a landed transaction needs on top of it to count as confirmed (none with instant timing). */
  get confirmationDepth(): number {
    return this.timing === 'validator' ? CONFIRMATION_DEPTH : 0;
  }

  /** The newest optimistically confirmed slot. */
  get confirmedSlot(): number {
    return Math.max(0, this.currentSlot - this.confirmationDepth);
  }

  /** The slot `address` was last written in (0 for an account of genesis or one never written). */
  modifiedSlot(address: string): number {
    return this.modifiedSlots.get(address) ?? 0;
  }

  /** The slot a read at `commitment` sees: the tip, the confirmed slot, or the finalized slot. */
  slotAt(commitment: 'processed' | 'confirmed' | 'finalized'): number {
    return commitment === 'finalized' ? this.finalizedSlot : commitment === 'confirmed' ? this.confirmedSlot : this.currentSlot;
  }

  /**
   * Runs a sent transaction's execution. With validator timing, FORWARDING_MS after the send, in
   * the slot current then: a single validator is the leader of every slot, and its banking stage
   * executes what the RPC forwarded into the block it is producing; the slot is confirmed when the
   * next one starts (its own vote). Sends run in arrival order. With instant timing, now.
   */
  enqueue(execute: () => void): void {
    if (this.timing !== 'validator') return execute();
    setTimeout(() => {
      this.tick();
      execute();
    }, FORWARDING_MS);
  }

  get blockTime(): number {
    return this.blocks.get(this.currentSlot)?.blockTime ?? this.nowSeconds();
  }

  get processedTransactionCount(): bigint {
    return this.transactionCount;
  }

  epochInfo(slot: number = this.currentSlot): { epoch: bigint; slotIndex: bigint; slotsInEpoch: bigint } {
    return epochPosition(this.schedule, BigInt(slot));
  }

  get epochSchedule(): EpochScheduleParams {
    return this.schedule;
  }

  /**
   * The blockhash a client gets at `commitment`: the tip's, or for `finalized` the one of the newest
   * finalized block, which is ~32 slots older and so has ~32 slots less of its 150 left (as on a
   * real cluster, where web3.js v1 asks for `finalized` and caches the answer for 30 s).
   */
  latestBlockhash(commitment: 'processed' | 'confirmed' | 'finalized' = 'confirmed'): { blockhash: Blockhash; lastValidBlockHeight: number } {
    if (commitment === 'finalized') {
      const block = this.blockAtOrBefore(this.finalizedSlot);
      if (block) return { blockhash: block.blockhash as Blockhash, lastValidBlockHeight: block.slot + MAX_PROCESSING_AGE };
    }
    return { blockhash: this.latest as Blockhash, lastValidBlockHeight: this.blockHeight + MAX_PROCESSING_AGE };
  }

  /** The block of `slot`, or of the newest slot before it that has one. */
  blockAtOrBefore(slot: number): BlockInfo | undefined {
    return this.blocks.atOrBefore(slot);
  }

  getBlock(slot: number): BlockInfo | undefined {
    return this.blocks.get(slot);
  }

  /** The oldest slot whose block is still kept. */
  get firstAvailableBlock(): number {
    return this.blocks.first(this.currentSlot);
  }

  /** Slots from `start` to `end` (inclusive) that have a block, ascending. */
  blockSlots(start: number, end: number, limit: number): number[] {
    return this.blocks.slots(start, end, limit);
  }

  /** Valid while the current block height is at most (height that produced it) + 150. */
  isBlockhashValid(blockhash: string): boolean {
    const height = this.blockhashes.get(blockhash);
    return height !== undefined && this.blockHeight <= height + MAX_PROCESSING_AGE;
  }

  /** The message's lifetime: a recent blockhash, or the current value of a durable nonce. */
  isLifetimeValid(message: DecodedMessage): boolean {
    return this.isBlockhashValid(message.lifetimeToken) || isDurableNonceValid(this.svm, message);
  }

  /**
   * Warps `count` slots forward now (test-only method, airdrop retry): time moves with them
   * (400 ms a slot), and the slot clock keeps running from the new slot.
   */
  advanceSlots(count: number): void {
    if (count <= 0) return;
    this.tick();
    this.originSlot += count;
    this.warpedMs += count * DEFAULT_SLOT_MS;
    this.produceSlots(count);
  }

  /**
   * Produces `count` new slots: each gets a fresh blockhash and a block, the Clock sysvar follows.
   * Only the last 151 blockhashes can ever be valid, so a long warp skips the others (those slots
   * have no block, like skipped slots on a real cluster).
   */
  private produceSlots(count: number): void {
    const target = this.currentSlot + count;
    const previousRoot = this.finalizedSlot;
    const now = this.nowSeconds();
    let parent = this.blockAtOrBefore(this.currentSlot);
    const produced: BlockInfo[] = [];
    for (let slot = Math.max(this.currentSlot + 1, target - MAX_PROCESSING_AGE); slot <= target; slot++) {
      this.svm.expireBlockhash();
      this.latest = this.svm.latestBlockhash();
      this.blockhashes.set(this.latest, slot);
      // Slots produced together (a warp, a late timer) get the times they would have had.
      const blockTime = Math.max(parent?.blockTime ?? 0, now - Math.floor(((target - slot) * this.slotMs) / 1000));
      const block: BlockInfo = {
        slot,
        parentSlot: parent?.slot ?? 0,
        blockhash: this.latest,
        previousBlockhash: parent?.blockhash ?? this.genesisHash,
        blockTime,
        signatures: [],
      };
      this.blocks.add(block);
      if (parent && this.voter) this.castVote(this.voter, parent, block);
      produced.push(block);
      parent = block;
    }
    this.currentSlot = target;
    for (const [hash, height] of this.blockhashes) {
      if (height + MAX_PROCESSING_AGE >= target) break;
      this.blockhashes.delete(hash);
    }
    this.syncClock(parent?.blockTime ?? now);
    this.slotSysvars.produced(produced, { slot: target, blockhash: this.latest });
    this.slotAdvanced.emit(target);
    const roots = this.blockSlots(previousRoot + 1, this.finalizedSlot, Number.MAX_SAFE_INTEGER);
    if (roots.length > 0) this.rooted.emit(roots);
  }

  /** Lands the vote on `voted` in `block`, the next one (a frozen bank's vote lands in its child). */
  private castVote(voter: Voter, voted: BlockInfo, block: BlockInfo): void {
    const wire = voter.vote(voted);
    const payer = this.svm.getAccount(voter.identity);
    if (!payer.exists || payer.lamports < VOTE_FEE) return;
    this.svm.setAccount({ ...payer, lamports: (payer.lamports - VOTE_FEE) as Lamports });
    this.supply -= VOTE_FEE;
    const balances = { identity: payer.lamports - VOTE_FEE, voteAccount: this.balanceOf(voter.votePubkey), voteProgram: this.balanceOf(VOTE_PROGRAM) };
    this.records.add(voteRecord(wire, block.slot, block.blockTime, balances), [voter.identity, voter.votePubkey]);
    this.transactionCount++;
    block.signatures.push(wire.signature);
  }

  /**
   * A fresh blockhash within the current slot (LiteSVM's faucet signs with its latest blockhash,
   * so a second identical airdrop needs a new one); the slot does not move.
   */
  refreshBlockhash(): void {
    this.svm.expireBlockhash();
    this.latest = this.svm.latestBlockhash();
    this.blockhashes.delete(this.latest);
    this.blockhashes.set(this.latest, this.currentSlot);
  }

  private nowSeconds(): number {
    return Math.floor((Date.now() + this.warpedMs) / 1000);
  }

  private syncClock(unixTimestamp: number): void {
    const clock = this.svm.getClock();
    const { epoch } = this.epochInfo();
    clock.slot = BigInt(this.currentSlot);
    clock.epoch = epoch;
    clock.leaderScheduleEpoch = epoch + 1n;
    clock.unixTimestamp = BigInt(unixTimestamp);
    this.svm.setClock(clock);
  }

  /** Stores a transaction that landed in the current slot and notifies; the slot does not move. */
  land(record: TxRecord, touched: readonly string[], referenced: readonly string[] = touched): void {
    this.records.add(record, referenced);
    this.transactionCount++;
    for (const touchedAddress of touched) {
      this.knownAddresses.add(touchedAddress as Address);
      this.modifiedSlots.set(touchedAddress, record.slot);
    }
    // LiteSVM takes the whole fee out of existence (no leader is paid).
    this.supply -= record.fee;
    this.blocks.get(record.slot)?.signatures.push(record.signature);
    if (record.wire) rebaseDurableNonces(this.svm, touched, record.wire.message.lifetimeToken, this.latest);
    this.tokenIndex.update(touched);
    this.transactionLanded.emit(record);
    this.accountsChanged.emit(touched);
  }

  /** Addresses loaded through the message's lookup tables, or null when one cannot be resolved. */
  resolveLoadedAddresses(message: DecodedMessage): LoadedAddresses | null {
    return resolveLoadedAddresses(this.svm, message);
  }

  confirmationOf(record: TxRecord): SignatureConfirmation {
    const depth = this.currentSlot - record.slot;
    if (depth >= FINALIZATION_DEPTH) return { confirmations: null, confirmationStatus: 'finalized' };
    return { confirmations: depth, confirmationStatus: depth >= this.confirmationDepth ? 'confirmed' : 'processed' };
  }

  balanceOf(account: Address): bigint {
    return this.svm.getBalance(account) ?? 0n;
  }

  /** Counts an account that was written into LiteSVM directly (a program it deployed) at start. */
  registerCreated(account: Address, lamports: bigint): void {
    this.supply += lamports;
    this.knownAddresses.add(account);
  }

  /** Writes an account directly (test-only RPC and tests); subscribers are told. */
  setAccount(account: { address: Address; lamports: bigint; data: Uint8Array; owner: Address; executable: boolean }): void {
    this.supply += account.lamports - this.balanceOf(account.address);
    this.svm.setAccount({
      address: account.address,
      lamports: account.lamports as Lamports,
      data: account.data,
      programAddress: account.owner,
      executable: account.executable,
      space: BigInt(account.data.length),
    });
    this.knownAddresses.add(account.address);
    this.modifiedSlots.set(account.address, this.currentSlot);
    this.tokenIndex.update([account.address]);
    this.accountsChanged.emit([account.address]);
  }
}
