/**
 * The synchronous core of wallet generation, run on the worker threads (worker.ts) and, for small
 * requests, inline on the main thread. Keys come from libsodium's `crypto_sign_keypair`, which
 * reads the OS CSPRNG (getrandom); secret keys live in one sodium_malloc'd buffer per thread that
 * is wiped after every wallet. Output is JSON text written straight into one byte array, a
 * *batch*:
 *
 *   [header: count, addressesLength, keypairsStart, keypairsLength, tried (u32 each)]
 *   [addresses fragment:  ,"<address>","<address>"...                         ]
 *   [keypairs fragment:   ,{"address":"…","privateKey":"…"[,"mnemonic":"…"][,"secretKeyBytes":[…]]}… ]
 *
 * Every item starts with a comma; whoever joins batches drops the first comma of each list.
 * No per-wallet object, no string, no JSON.stringify.
 */
import sodium from 'sodium-native';
import { BASE58_MAX_32, BASE58_MAX_64, writeBase58Of32, writeBase58Of64 } from './base58.ts';
import { generateMnemonic, solanaSeedFromMnemonic, type MnemonicWords } from './mnemonic.ts';

export interface WalletFormat {
  /** Also write `secretKeyBytes`, the 64-number array of a solana-keygen id.json. */
  keygen: boolean;
  /** Also write a BIP39 `mnemonic` of that many words, the key derived at m/44'/501'/0'/0'. */
  mnemonic: MnemonicWords | null;
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

export type WalletTask = KeysTask | VanityTask;

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
const KEYPAIR_SECRET_KEY_BYTES = ascii(',"secretKeyBytes":[');
const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
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
    (format.keygen ? KEYPAIR_SECRET_KEY_BYTES.length + 64 * 4 : 0) +
    1
  );
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
  count = 0;

  constructor(format: WalletFormat, capacity: number) {
    this.format = format;
    this.keypairItem = keypairItemMax(format);
    this.allocate(capacity);
  }

  private allocate(capacity: number): void {
    const old = this.buf;
    const oldA = this.a;
    const oldKeypairsStart = this.keypairsStart;
    const oldB = this.b;
    this.capacity = capacity;
    this.keypairsStart = HEADER_BYTES + capacity * ADDRESS_ITEM_MAX;
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

  /** Appends the wallet whose 64-byte secret key (seed ‖ public key) is `sk`. */
  add(sk: Uint8Array, mnemonic: string | null): void {
    if (this.count === this.capacity) this.allocate(this.capacity * 2);
    const buf = this.buf;
    let a = this.a;
    buf.set(ADDRESS_OPEN, a);
    a += ADDRESS_OPEN.length;
    const addressStart = a;
    a = writeBase58Of32(sk, 32, buf, a);
    const addressEnd = a;
    buf[a++] = QUOTE;
    this.a = a;

    let b = this.b;
    buf.set(KEYPAIR_OPEN, b);
    b += KEYPAIR_OPEN.length;
    buf.copyWithin(b, addressStart, addressEnd);
    b += addressEnd - addressStart;
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

// Per-thread key material, in libsodium's guarded memory, wiped after each use.
let secretKey: Buffer | undefined;
let publicKey: Buffer | undefined;
let seed: Buffer | undefined;
let bip39Seed: Buffer | undefined;
const addressScratch = new Uint8Array(BASE58_MAX_32);

function keyBuffers(): { sk: Buffer; pk: Buffer; seed32: Buffer; seed64: Buffer } {
  secretKey ??= sodium.sodium_malloc(sodium.crypto_sign_SECRETKEYBYTES);
  publicKey ??= Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES);
  seed ??= sodium.sodium_malloc(sodium.crypto_sign_SEEDBYTES);
  bip39Seed ??= sodium.sodium_malloc(64);
  return { sk: secretKey, pk: publicKey, seed32: seed, seed64: bip39Seed };
}

/** `count` fresh wallets in one batch. */
export function generateKeys(task: KeysTask): Uint8Array {
  const { sk, pk, seed32, seed64 } = keyBuffers();
  const writer = new BatchWriter(task, task.count);
  try {
    if (task.mnemonic === null) {
      for (let i = 0; i < task.count; i++) {
        sodium.crypto_sign_keypair(pk, sk);
        writer.add(sk, null);
        sodium.sodium_memzero(sk);
      }
    } else {
      for (let i = 0; i < task.count; i++) {
        const phrase = generateMnemonic(task.mnemonic);
        solanaSeedFromMnemonic(phrase, seed32, seed64);
        sodium.crypto_sign_seed_keypair(pk, sk, seed32);
        sodium.sodium_memzero(seed32);
        writer.add(sk, phrase);
        sodium.sodium_memzero(sk);
      }
    }
  } finally {
    sodium.sodium_memzero(sk);
    sodium.sodium_memzero(seed32);
  }
  return writer.finish(task.count);
}

function patternBytes(pattern: string, ignoreCase: boolean): Uint8Array {
  // Base58 text is ASCII letters and digits: setting bit 0x20 lowercases a letter, leaves a digit.
  return Uint8Array.from(pattern, (c) => c.charCodeAt(0) | (ignoreCase ? 0x20 : 0));
}

/** One time slice of a vanity search; returns the wallets it claimed and how many keys it tried. */
export function searchVanity(task: VanityTask): Uint8Array {
  const { sk, pk } = keyBuffers();
  const control = new Int32Array(task.control);
  const prefix = patternBytes(task.prefix, task.ignoreCase);
  const suffix = patternBytes(task.suffix, task.ignoreCase);
  const fold = task.ignoreCase ? 0x20 : 0;
  const address = addressScratch;
  const writer = new BatchWriter(task, Math.min(task.want, 16));
  const sliceEnd = Math.min(task.deadline, Date.now() + task.sliceMs);
  let tried = 0;
  try {
    while (Atomics.load(control, CONTROL_STOP) === 0 && Date.now() < sliceEnd) {
      for (let round = 0; round < 128; round++) {
        sodium.crypto_sign_keypair(pk, sk);
        tried++;
        const end = writeBase58Of32(sk, 32, address, 0);
        let match = true;
        for (let i = 0; match && i < prefix.length; i++) match = (address[i]! | fold) === prefix[i];
        for (let i = 0, at = end - suffix.length; match && i < suffix.length; i++) match = (address[at + i]! | fold) === suffix[i];
        if (match) {
          const slot = Atomics.add(control, CONTROL_FOUND, 1);
          if (slot < task.want) writer.add(sk, null);
          if (slot + 1 >= task.want) {
            Atomics.store(control, CONTROL_STOP, 1);
            sodium.sodium_memzero(sk);
            return writer.finish(tried);
          }
        }
        sodium.sodium_memzero(sk);
      }
    }
  } finally {
    sodium.sodium_memzero(sk);
    address.fill(0);
  }
  return writer.finish(tried);
}

export function runTask(task: WalletTask): Uint8Array {
  return task.kind === 'keys' ? generateKeys(task) : searchVanity(task);
}
