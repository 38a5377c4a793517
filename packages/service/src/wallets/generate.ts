/**
 * The synchronous core of wallet generation, run on the worker threads (worker.ts) and, for small
 * requests, inline on the main thread. Keys: ed25519 seeds from libsodium's `randombytes_buf` (the
 * OS CSPRNG), drawn 128 at a time into sodium_malloc'd memory (one getrandom call instead of one
 * per key: ≈ 15% of keygen's time), then `crypto_sign_seed_keypair`; or, for `hd` tasks, seeds
 * derived by SLIP-0010 from a parent node (mnemonic.ts). Key buffers are wiped at the end of each
 * task. Output is JSON text written straight into one byte array, a *batch*:
 *
 *   [header: count, addressesLength, keypairsStart, keypairsLength, tried (u32 each)]
 *   [addresses fragment:  ,"<address>","<address>"...                         ]
 *   [keypairs fragment:   ,{"address":"…","privateKey":"…"[,"mnemonic":"…"][,"path":"…"][,"secretKeyBytes":[…]]}… ]
 *
 * Every item starts with a comma; whoever joins batches drops the first comma of each list. In
 * `lines` format (the streamed answer, application/x-ndjson) there is no addresses fragment and
 * each keypair is a line of its own: `{…}\n`. No per-wallet object, no string, no JSON.stringify.
 *
 * Vanity searches test each key on its bytes (vanityMatch.ts), never encoding a key that does not match.
 */
import { createRequire } from 'node:module';
import type Sodium from 'sodium-native';
import { BASE58_MAX_32, BASE58_MAX_64, writeBase58Of32, writeBase58Of64 } from '../keys/base58.ts';
import { accountSeedInto, generateMnemonic, solanaSeedFromMnemonic, type MnemonicWords, type Slip10Node } from './mnemonic.ts';
import { createVanityMatcher, type VanityMatcher } from './vanityMatch.ts';

export interface WalletFormat {
  /** Also write `secretKeyBytes`, the 64-number array of a solana-keygen id.json. */
  keygen: boolean;
  /** Also write a BIP39 `mnemonic` of that many words, the key derived at m/44'/501'/0'/0'. */
  mnemonic: MnemonicWords | null;
  /** One line per keypair, no addresses list (the streamed answer). */
  lines: boolean;
}

/** Generate `count` wallets. */
export interface KeysTask extends WalletFormat {
  kind: 'keys';
  count: number;
}

/** Search for vanity addresses until `want` are found (by all slices together) or `sliceEnd`. */
export interface VanityTask extends WalletFormat {
  kind: 'vanity';
  want: number;
  /** base58 characters; empty when not used. */
  prefix: string;
  suffix: string;
  ignoreCase: boolean;
  /** Epoch milliseconds after which no search runs. */
  deadline: number;
  /** The slice returns after this long (or at the deadline), found or not, so other tasks get a turn. */
  sliceMs: number;
  /** Int32Array view: [0] wallets claimed so far, [1] non-zero = stop (all found, or abandoned). */
  control: SharedArrayBuffer;
}

/** Derive accounts `from` … `from + count − 1` below `parent` (m/44'/501'), at m/44'/501'/i'/0'. */
export interface HdTask extends WalletFormat {
  kind: 'hd';
  /** SLIP-0010 node of m/44'/501' (private key ‖ chain code); wiped by the task once used. */
  parent: Slip10Node;
  from: number;
  count: number;
}

export type WalletTask = KeysTask | VanityTask | HdTask;

export const CONTROL_FOUND = 0;
export const CONTROL_STOP = 1;

const HEADER_BYTES = 24;
const H_COUNT = 0;
const H_ADDRESSES_LENGTH = 1;
const H_KEYPAIRS_START = 2;
const H_KEYPAIRS_LENGTH = 3;
const H_TRIED = 4;

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const ADDRESS_OPEN = ascii(',"');
const KEYPAIR_OPEN = ascii(',{"address":"');
const KEYPAIR_PRIVATE_KEY = ascii('","privateKey":"');
const KEYPAIR_MNEMONIC = ascii(',"mnemonic":"');
const KEYPAIR_PATH = ascii(`,"path":"m/44'/501'/`);
const PATH_END = ascii(`'/0'"`);
const KEYPAIR_SECRET_KEY_BYTES = ascii(',"secretKeyBytes":[');
const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;
const DECIMALS = Array.from({ length: 256 }, (_, v) => ascii(String(v)));
/** The longest English BIP39 word has 8 letters. */
const MAX_MNEMONIC_CHARS = 24 * 8 + 23;

const ADDRESS_ITEM_MAX = ADDRESS_OPEN.length + BASE58_MAX_32 + 1;

function keypairItemMax(format: WalletFormat): number {
  return (
    KEYPAIR_OPEN.length +
    BASE58_MAX_32 +
    KEYPAIR_PRIVATE_KEY.length +
    BASE58_MAX_64 +
    1 +
    (format.mnemonic ? KEYPAIR_MNEMONIC.length + MAX_MNEMONIC_CHARS + 1 : 0) +
    KEYPAIR_PATH.length + 10 + PATH_END.length +
    (format.keygen ? KEYPAIR_SECRET_KEY_BYTES.length + 64 * 4 : 0) +
    2
  );
}

/** Writes the decimal digits of a non-negative integer; returns the offset after them. */
function writeDecimal(value: number, buf: Uint8Array, at: number): number {
  const digits = value < 10 ? 1 : Math.floor(Math.log10(value)) + 1;
  for (let i = digits - 1; i >= 0; i--, value = Math.floor(value / 10)) buf[at + i] = 0x30 + (value % 10);
  return at + digits;
}

/** Writes wallets into a batch, growing it when a vanity search finds more than expected. */
class BatchWriter {
  private buf!: Uint8Array;
  private capacity = 0;
  private keypairsStart = 0;
  private a = 0;
  private b = 0;
  private readonly format: WalletFormat;
  private readonly keypairItem: number;
  private readonly addressItem: number;
  count = 0;

  constructor(format: WalletFormat, capacity: number) {
    this.format = format;
    this.keypairItem = keypairItemMax(format);
    this.addressItem = format.lines ? 0 : ADDRESS_ITEM_MAX;
    this.allocate(capacity);
  }

  private allocate(capacity: number): void {
    const old = this.buf;
    const oldA = this.a;
    const oldKeypairsStart = this.keypairsStart;
    const oldB = this.b;
    this.capacity = capacity;
    this.keypairsStart = HEADER_BYTES + capacity * this.addressItem;
    // A fresh ArrayBuffer of its own (never Node's shared pool), so it can be transferred.
    this.buf = new Uint8Array(this.keypairsStart + capacity * this.keypairItem);
    this.a = HEADER_BYTES;
    this.b = this.keypairsStart;
    if (old) {
      this.buf.set(old.subarray(HEADER_BYTES, oldA), HEADER_BYTES);
      this.a += oldA - HEADER_BYTES;
      this.buf.set(old.subarray(oldKeypairsStart, oldB), this.keypairsStart);
      this.b += oldB - oldKeypairsStart;
      old.fill(0);
    }
  }

  /**
   * Appends the wallet whose 64-byte secret key (seed ‖ public key) is `sk`; `account` ≥ 0 writes
   * its path m/44'/501'/account'/0'.
   */
  add(sk: Uint8Array, mnemonic: string | null, account = -1): void {
    if (this.count === this.capacity) this.allocate(this.capacity * 2);
    const buf = this.buf;
    const lines = this.format.lines;
    let b = this.b;
    if (lines) {
      buf.set(KEYPAIR_OPEN.subarray(1), b);
      b += KEYPAIR_OPEN.length - 1;
      b = writeBase58Of32(sk, 32, buf, b);
    } else {
      let a = this.a;
      buf.set(ADDRESS_OPEN, a);
      a += ADDRESS_OPEN.length;
      const addressStart = a;
      a = writeBase58Of32(sk, 32, buf, a);
      const addressEnd = a;
      buf[a++] = QUOTE;
      this.a = a;
      buf.set(KEYPAIR_OPEN, b);
      b += KEYPAIR_OPEN.length;
      buf.copyWithin(b, addressStart, addressEnd);
      b += addressEnd - addressStart;
    }
    buf.set(KEYPAIR_PRIVATE_KEY, b);
    b += KEYPAIR_PRIVATE_KEY.length;
    b = writeBase58Of64(sk, 0, buf, b);
    buf[b++] = QUOTE;
    if (mnemonic !== null) {
      buf.set(KEYPAIR_MNEMONIC, b);
      b += KEYPAIR_MNEMONIC.length;
      // English BIP39 words are lowercase ASCII: nothing to escape.
      for (let i = 0; i < mnemonic.length; i++) buf[b++] = mnemonic.charCodeAt(i);
      buf[b++] = QUOTE;
    }
    if (account >= 0) {
      buf.set(KEYPAIR_PATH, b);
      b += KEYPAIR_PATH.length;
      b = writeDecimal(account, buf, b);
      buf.set(PATH_END, b);
      b += PATH_END.length;
    }
    if (this.format.keygen) {
      buf.set(KEYPAIR_SECRET_KEY_BYTES, b);
      b += KEYPAIR_SECRET_KEY_BYTES.length;
      for (let i = 0; i < 64; i++) {
        if (i > 0) buf[b++] = COMMA;
        const digits = DECIMALS[sk[i]!]!;
        buf.set(digits, b);
        b += digits.length;
      }
      buf[b++] = CLOSE_BRACKET;
    }
    buf[b++] = CLOSE_BRACE;
    if (lines) buf[b++] = NEWLINE;
    this.b = b;
    this.count++;
  }

  finish(tried: number): Uint8Array {
    const header = new Uint32Array(this.buf.buffer, 0, HEADER_BYTES / 4);
    header[H_COUNT] = this.count;
    header[H_ADDRESSES_LENGTH] = this.a - HEADER_BYTES;
    header[H_KEYPAIRS_START] = this.keypairsStart;
    header[H_KEYPAIRS_LENGTH] = this.b - this.keypairsStart;
    header[H_TRIED] = tried;
    return this.buf;
  }
}

export interface BatchView {
  count: number;
  tried: number;
  /** `,"<address>"` × count */
  addresses: Uint8Array;
  /** `,{...}` × count */
  keypairs: Uint8Array;
  /** The whole batch, to wipe once the response has been sent. */
  buffer: Uint8Array;
}

export function readBatch(batch: Uint8Array): BatchView {
  const header = new Uint32Array(batch.buffer, batch.byteOffset, HEADER_BYTES / 4);
  const keypairsStart = header[H_KEYPAIRS_START]!;
  return {
    count: header[H_COUNT]!,
    tried: header[H_TRIED]!,
    addresses: batch.subarray(HEADER_BYTES, HEADER_BYTES + header[H_ADDRESSES_LENGTH]!),
    keypairs: batch.subarray(keypairsStart, keypairsStart + header[H_KEYPAIRS_LENGTH]!),
    buffer: batch,
  };
}

let sodiumLoaded: typeof Sodium | undefined;
/** libsodium (a native addon, tens of milliseconds to load) on the first key made, not at start. */
const sodium = (): typeof Sodium => (sodiumLoaded ??= createRequire(import.meta.url)('sodium-native') as typeof Sodium);

// Per-thread key material, in libsodium's guarded memory, wiped at the end of each task.
/** Seeds drawn from the CSPRNG at once. */
const SEEDS_PER_DRAW = 128;
let secretKey: Buffer | undefined;
let publicKey: Buffer | undefined;
let seed: Buffer | undefined;
let bip39Seed: Buffer | undefined;
let seeds: Buffer | undefined;
let seedViews: Buffer[] = [];

function keyBuffers(): { sk: Buffer; pk: Buffer; seed32: Buffer; seed64: Buffer; seeds: Buffer; seedViews: Buffer[] } {
  secretKey ??= sodium().sodium_malloc(sodium().crypto_sign_SECRETKEYBYTES);
  publicKey ??= Buffer.alloc(sodium().crypto_sign_PUBLICKEYBYTES);
  seed ??= sodium().sodium_malloc(sodium().crypto_sign_SEEDBYTES);
  bip39Seed ??= sodium().sodium_malloc(64);
  if (!seeds) {
    seeds = sodium().sodium_malloc(SEEDS_PER_DRAW * sodium().crypto_sign_SEEDBYTES);
    const all = seeds;
    seedViews = Array.from({ length: SEEDS_PER_DRAW }, (_, i) => all.subarray(32 * i, 32 * i + 32));
  }
  return { sk: secretKey, pk: publicKey, seed32: seed, seed64: bip39Seed, seeds, seedViews };
}

function wipeKeys(): void {
  const { sk, seed32, seed64, seeds: all } = keyBuffers();
  sodium().sodium_memzero(sk);
  sodium().sodium_memzero(seed32);
  sodium().sodium_memzero(seed64);
  sodium().sodium_memzero(all);
}

/** `count` fresh wallets in one batch. */
export function generateKeys(task: KeysTask): Uint8Array {
  const { sk, pk, seed32, seed64, seeds: all, seedViews: views } = keyBuffers();
  const writer = new BatchWriter(task, task.count);
  try {
    if (task.mnemonic === null) {
      for (let done = 0; done < task.count; done += SEEDS_PER_DRAW) {
        sodium().randombytes_buf(all);
        const round = Math.min(SEEDS_PER_DRAW, task.count - done);
        for (let r = 0; r < round; r++) {
          sodium().crypto_sign_seed_keypair(pk, sk, views[r]!);
          writer.add(sk, null);
        }
      }
    } else {
      for (let i = 0; i < task.count; i++) {
        const phrase = generateMnemonic(task.mnemonic);
        solanaSeedFromMnemonic(phrase, seed32, seed64);
        sodium().crypto_sign_seed_keypair(pk, sk, seed32);
        writer.add(sk, phrase);
      }
    }
  } finally {
    wipeKeys();
  }
  return writer.finish(task.count);
}

/** Accounts of one phrase at m/44'/501'/i'/0', i = from … from + count − 1. */
export function deriveAccounts(task: HdTask): Uint8Array {
  const { sk, pk, seed32 } = keyBuffers();
  const writer = new BatchWriter(task, task.count);
  try {
    for (let i = task.from; i < task.from + task.count; i++) {
      accountSeedInto(task.parent, 'phantom', i, seed32);
      sodium().crypto_sign_seed_keypair(pk, sk, seed32);
      writer.add(sk, null, i);
    }
  } finally {
    task.parent.fill(0);
    wipeKeys();
  }
  return writer.finish(task.count);
}

// The matcher of the last pattern searched on this thread: a search runs many slices of one pattern.
let lastMatcher: { key: string; matches: VanityMatcher } | undefined;

function matcherOf(task: VanityTask): VanityMatcher {
  const key = `${task.prefix}|${task.suffix}|${task.ignoreCase}`;
  if (lastMatcher?.key !== key) lastMatcher = { key, matches: createVanityMatcher(task) };
  return lastMatcher.matches;
}

/** One time slice of a vanity search; returns the wallets it claimed and how many keys it tried. */
export function searchVanity(task: VanityTask): Uint8Array {
  const { sk, pk, seeds: all, seedViews: views } = keyBuffers();
  const control = new Int32Array(task.control);
  const matches = matcherOf(task);
  const writer = new BatchWriter(task, Math.min(task.want, 16));
  const sliceEnd = Math.min(task.deadline, Date.now() + task.sliceMs);
  let tried = 0;
  try {
    while (Atomics.load(control, CONTROL_STOP) === 0 && Date.now() < sliceEnd) {
      sodium().randombytes_buf(all);
      for (let r = 0; r < SEEDS_PER_DRAW; r++) {
        sodium().crypto_sign_seed_keypair(pk, sk, views[r]!);
        if (!matches(pk, 0)) continue;
        const slot = Atomics.add(control, CONTROL_FOUND, 1);
        if (slot < task.want) writer.add(sk, null);
        if (slot + 1 >= task.want) {
          Atomics.store(control, CONTROL_STOP, 1);
          return writer.finish(tried + r + 1);
        }
      }
      tried += SEEDS_PER_DRAW;
    }
  } finally {
    wipeKeys();
  }
  return writer.finish(tried);
}

export function runTask(task: WalletTask): Uint8Array {
  return task.kind === 'keys' ? generateKeys(task) : task.kind === 'hd' ? deriveAccounts(task) : searchVanity(task);
}
