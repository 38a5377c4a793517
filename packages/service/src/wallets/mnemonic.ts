/**
 * BIP39 mnemonics and the Solana keys wallet apps derive from them: entropy (CSPRNG) → words
 * (@scure/bip39) → BIP39 seed (PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic") → SLIP-0010
 * ed25519 along a hardened path → the 32-byte ed25519 seed of a wallet.
 *
 * Pure: node:crypto and @scure/bip39 only, so that the server (the workers of generate.ts) and the
 * CLI (`cinder derive`, `cinder wallets --hd`, which derive on the user's machine and never send a
 * phrase anywhere) share this one implementation without the CLI loading any server code.
 *
 * PBKDF2 runs in node:crypto (OpenSSL): the same function as `mnemonicToSeedSync` of @scure/bip39,
 * about 9× faster (≈ 1.4 ms instead of ≈ 12 ms), and `mnemonicToSeed` runs it on libuv's thread
 * pool, off the event loop. SLIP-0010 is two HMAC-SHA512 per level in node:crypto (≈ 4 µs a
 * level; micro-key-producer's HDKey also computes each level's public key in JavaScript, ≈ 300 µs).
 * test/wallets/mnemonic.test.ts and test/wallets/hd.test.ts check both against the published
 * vectors, @scure/bip39, micro-key-producer and a reference written from the specification.
 */
import { createHmac, pbkdf2, pbkdf2Sync, randomFillSync } from 'node:crypto';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

export type MnemonicWords = 12 | 24;

export const HARDENED = 0x80000000;

/** Phantom's and Solflare's first account: m/44'/501'/0'/0' (every level hardened). */
export const SOLANA_DERIVATION_PATH = "m/44'/501'/0'/0'";
/** m/44'/501': the parent of every account of both schemes below. */
const SOLANA_PARENT = [44 + HARDENED, 501 + HARDENED];

/**
 * How a wallet app turns one phrase into many wallets:
 * - phantom: m/44'/501'/i'/0' (Phantom, Solflare, Backpack, Trust Wallet; Cinder's `hd=`);
 * - ledger-live: m/44'/501'/i' (Ledger Live; Solflare's and Phantom's "Ledger" import);
 * - keygen: no path: the BIP39 seed's first 32 bytes are the ed25519 seed, one wallet
 *   (`solana-keygen recover` / `solana-keygen new` without a derivation path).
 */
export type DerivationScheme = 'phantom' | 'ledger-live' | 'keygen';

/** Bytes of entropy behind a phrase of that many words (BIP39: 128 or 256 bits). */
export function entropyBytesOf(words: MnemonicWords): 16 | 32 {
  return words === 12 ? 16 : 32;
}

// One buffer per entropy size and thread, wiped after each phrase.
const entropyBuffers = new Map<number, Uint8Array>();

/** A fresh English BIP39 phrase from the CSPRNG (node:crypto: OpenSSL's DRBG, seeded by the OS). */
export function generateMnemonic(words: MnemonicWords): string {
  const size = entropyBytesOf(words);
  let entropy = entropyBuffers.get(size);
  if (!entropy) entropyBuffers.set(size, (entropy = new Uint8Array(size)));
  try {
    randomFillSync(entropy);
    return entropyToMnemonic(entropy, wordlist);
  } finally {
    entropy.fill(0);
  }
}

const bip39Salt = (passphrase: string) => `mnemonic${passphrase}`.normalize('NFKD');

/** BIP39 seed of a phrase (64 bytes), written into `out`. */
export function mnemonicToSeedInto(mnemonic: string, out: Uint8Array, passphrase = ''): void {
  const seed = pbkdf2Sync(mnemonic.normalize('NFKD'), bip39Salt(passphrase), 2048, 64, 'sha512');
  out.set(seed);
  seed.fill(0);
}

/** BIP39 seed of a phrase (64 bytes), computed off the event loop. The caller wipes it. */
export function mnemonicToSeed(mnemonic: string, passphrase = ''): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    pbkdf2(mnemonic.normalize('NFKD'), bip39Salt(passphrase), 2048, 64, 'sha512', (error, seed) => (error ? reject(error) : resolve(seed))),
  );
}

/**
 * A SLIP-0010 ed25519 node: private key (32 bytes) ‖ chain code (32 bytes), in one array so that
 * it can be handed to a worker and wiped in one go.
 */
export type Slip10Node = Uint8Array;

/** The SLIP-0010 ed25519 master node of a seed: HMAC-SHA512(key "ed25519 seed", seed). */
export function slip10Master(seed: Uint8Array): Slip10Node {
  return new Uint8Array(createHmac('sha512', 'ed25519 seed').update(seed).digest());
}

// 0x00 ‖ private key ‖ index (big-endian): the HMAC message of a hardened child (ed25519 has no other).
const childData = new Uint8Array(37);
const childView = new DataView(childData.buffer);

/**
 * The hardened child `index` (≥ 2^31) of `parent`, written into `out` (which may be `parent`):
 * HMAC-SHA512(key chain code, 0x00 ‖ private key ‖ index).
 */
export function slip10ChildInto(parent: Slip10Node, index: number, out: Slip10Node): void {
  if (index < HARDENED || index > 0xffffffff) throw new RangeError('SLIP-0010 ed25519 derives hardened indexes only');
  childData[0] = 0;
  childData.set(parent.subarray(0, 32), 1);
  childView.setUint32(33, index);
  const I = createHmac('sha512', parent.subarray(32, 64)).update(childData).digest();
  childData.fill(0);
  out.set(I);
  I.fill(0);
}

/** The node at `path` (hardened indexes) below `node`; a new array, `node` left as it is. */
export function slip10Derive(node: Slip10Node, path: readonly number[]): Slip10Node {
  const out = Uint8Array.from(node);
  for (const index of path) slip10ChildInto(out, index, out);
  return out;
}

/**
 * SLIP-0010 ed25519 derivation of `indexes` below the master key of `seed`; writes the 32-byte
 * private key (the ed25519 seed of the wallet) into `out` and wipes every intermediate key.
 */
export function deriveSlip10Into(seed: Uint8Array, out: Uint8Array, indexes: readonly number[] = [...SOLANA_PARENT, HARDENED, HARDENED]): void {
  const master = slip10Master(seed);
  const node = slip10Derive(master, indexes);
  out.set(node.subarray(0, 32));
  master.fill(0);
  node.fill(0);
}

/**
 * The ed25519 seed Phantom derives from a phrase (its first account), written into `out32`.
 * `scratch64` receives the BIP39 seed on the way and is wiped before this returns.
 */
export function solanaSeedFromMnemonic(mnemonic: string, out32: Uint8Array, scratch64: Uint8Array): void {
  mnemonicToSeedInto(mnemonic, scratch64);
  try {
    deriveSlip10Into(scratch64, out32);
  } finally {
    scratch64.fill(0);
  }
}

/** m/44'/501' of a BIP39 seed: derived once, every account of the phantom and ledger-live schemes below it. */
export function solanaParentNode(bip39Seed: Uint8Array): Slip10Node {
  const master = slip10Master(bip39Seed);
  try {
    return slip10Derive(master, SOLANA_PARENT);
  } finally {
    master.fill(0);
  }
}

/** The levels below m/44'/501' of account `i` in `scheme` (phantom: i'/0'; ledger-live: i'). */
export function accountLevels(scheme: Exclude<DerivationScheme, 'keygen'>, i: number): number[] {
  return scheme === 'phantom' ? [i + HARDENED, HARDENED] : [i + HARDENED];
}

/** The path of account `i` in `scheme`, as wallet apps write it. */
export function accountPath(scheme: Exclude<DerivationScheme, 'keygen'>, i: number): string {
  return scheme === 'phantom' ? `m/44'/501'/${i}'/0'` : `m/44'/501'/${i}'`;
}

/** Account indexes are hardened 31-bit numbers: i < 2^31. */
export const MAX_ACCOUNT_INDEX = HARDENED - 1;

// Scratch node of the account derivation, wiped after each account.
const accountNode = new Uint8Array(64);

/**
 * The ed25519 seed of account `i` below `parent` (m/44'/501'), written into `out32`: two HMACs
 * for the phantom scheme, one for ledger-live.
 */
export function accountSeedInto(parent: Slip10Node, scheme: Exclude<DerivationScheme, 'keygen'>, i: number, out32: Uint8Array): void {
  if (!Number.isInteger(i) || i < 0 || i > MAX_ACCOUNT_INDEX) throw new RangeError(`account index ${i} is not in 0 … ${MAX_ACCOUNT_INDEX}`);
  try {
    slip10ChildInto(parent, i + HARDENED, accountNode);
    if (scheme === 'phantom') slip10ChildInto(accountNode, HARDENED, accountNode);
    out32.set(accountNode.subarray(0, 32));
  } finally {
    accountNode.fill(0);
  }
}
