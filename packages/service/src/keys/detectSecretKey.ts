/**
 * Is this text a Solana private key? True when it encodes 64 bytes that are a valid ed25519
 * keypair: a 32-byte seed followed by the public key that seed derives. That is what Phantom,
 * Solflare and solana-keygen export, and what `userPrivateKey` accepts; a random 64-byte value
 * (a transaction signature, for instance) almost never passes, so signatures are not mistaken
 * for keys.
 *
 * Encodings recognised: base58 (the wallet export), hex (128 digits), base64 / base64url and a
 * JSON array of 64 numbers (the solana-keygen file). Used by the HTTP edge to refuse a key that
 * arrives in a URL (a path segment, a query name or value) before it is logged or forwarded.
 *
 * The public key is derived with libsodium's `crypto_sign_seed_keypair` (the same derivation as
 * solana-keygen), so the check is exact, not a heuristic.
 */
import { createRequire } from 'node:module';
import { getBase58Encoder } from '@solana/kit';
import type Sodium from 'sodium-native';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{86,88}$/;
const HEX = /^[0-9a-fA-F]{128}$/;
const BASE64 = /^[A-Za-z0-9+/_-]{85,86}={0,2}$/;
const NUMBER_ARRAY = /^\[\s*\d{1,3}(\s*,\s*\d{1,3}){63}\s*\]$/;

/**
 * Scratch space, allocated once: this runs for every long URL segment, before authentication, and
 * a sodium_malloc per call (locked pages, freed only by the garbage collector) let a client
 * exhaust the process's mappings and abort it within ten thousand requests.
 */
let scratch: { sodium: typeof Sodium; publicKey: Buffer; secretKey: Buffer } | undefined;

/**
 * libsodium's native addon and the scratch space, on the first 64-byte candidate: most processes
 * never see one, and loading the addon is some 25–35 ms of CPU and 8 MiB at start (docs/deployment.md).
 */
function sodiumScratch(): NonNullable<typeof scratch> {
  if (scratch) return scratch;
  const sodium = createRequire(import.meta.url)('sodium-native') as typeof Sodium;
  scratch = { sodium, publicKey: Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES), secretKey: sodium.sodium_malloc(sodium.crypto_sign_SECRETKEYBYTES) };
  return scratch;
}

/** True when `bytes` is 64 bytes whose second half is the ed25519 public key of the first half. */
export function isEd25519Keypair(bytes: Uint8Array): boolean {
  if (bytes.length !== 64) return false;
  const { sodium, publicKey, secretKey } = sodiumScratch();
  try {
    sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.from(bytes.buffer, bytes.byteOffset, 32));
    return sodium.sodium_memcmp(publicKey, Buffer.from(bytes.buffer, bytes.byteOffset + 32, 32));
  } finally {
    sodium.sodium_memzero(secretKey);
    sodium.sodium_memzero(publicKey);
  }
}

/** Every 64-byte reading of `text` (a text can be valid base58 and base64 at once). */
function decodings(text: string): Uint8Array[] {
  const found: Uint8Array[] = [];
  if (BASE58.test(text)) {
    try {
      found.push(new Uint8Array(getBase58Encoder().encode(text)));
    } catch {
      // not base58 after all
    }
  }
  if (HEX.test(text)) found.push(Buffer.from(text, 'hex'));
  if (BASE64.test(text)) found.push(Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64'));
  if (NUMBER_ARRAY.test(text)) {
    const numbers = (JSON.parse(text) as number[]).filter((n) => n <= 255);
    if (numbers.length === 64) found.push(Uint8Array.from(numbers));
  }
  return found.filter((bytes) => bytes.length === 64);
}

/** True when `text` (trimmed) is a 64-byte ed25519 keypair in one of the encodings above. */
export function isSecretKeyText(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length < 86 || trimmed.length > 400) return false;
  const candidates = decodings(trimmed);
  try {
    return candidates.some(isEd25519Keypair);
  } finally {
    for (const bytes of candidates) bytes.fill(0);
  }
}

const CANDIDATES = /[1-9A-HJ-NP-Za-km-z]{86,88}|[0-9a-fA-F]{128}|\[[\d\s,]{127,400}\]/g;

/**
 * `text` with every 64-byte private key in it (base58, hex or a number array) replaced by
 * "[private key]". A last guard for texts that are echoed or logged.
 */
export function scrubSecretKeys(text: string): string {
  if (text.length < 86) return text;
  return text.replace(CANDIDATES, (candidate) => (isSecretKeyText(candidate) ? '[private key]' : candidate));
}
