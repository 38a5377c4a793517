/**
 * Fixed-size base58 (Bitcoin alphabet) encoders for 32-byte public keys and 64-byte secret keys,
 * writing ASCII straight into a byte array: no strings, no BigInt, no per-call allocation.
 *
 * Method: the input is read as big-endian 16-bit limbs. A table built once holds every
 * power 2^(16k) in radix R = 58^5, so the number in radix R is Σ limb × table (every partial sum
 * stays below 2^51, exact in float64). One carry pass normalises the radix-R digits, and each
 * one becomes five base58 characters (two pairs from a table of 58² and one single), written
 * straight to the destination. Leading zero bytes become leading '1's, as in every other base58
 * implementation. test/keys/base58.test.ts checks it against `bs58` (fast-check).
 */

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Longest base58 text of a 32-byte value (all bytes 0xFF or zero: 44 / 32 characters). */
export const BASE58_MAX_32 = 44;
/** Longest base58 text of a 64-byte value. */
export const BASE58_MAX_64 = 88;

const ALPHABET_CODES = Uint8Array.from(BASE58_ALPHABET, (c) => c.charCodeAt(0));
const R = 58 ** 5; // 656,356,768 < 2^30

interface Layout {
  bytes: number;
  limbs: number;
  /** Radix-R digits the largest value of that size needs. */
  digits: number;
  /** table[i * digits + j]: radix-R digit j (most significant first) of 2^(16 × (limbs - 1 - i)). */
  table: Float64Array;
  /** For limb i, the first j whose table entry can be non-zero. */
  firstDigit: Uint8Array;
}

function layout(bytes: number): Layout {
  const limbs = bytes / 2;
  let digits = 0;
  for (let max = (1n << BigInt(bytes * 8)) - 1n; max > 0n; max /= BigInt(R)) digits++;
  const table = new Float64Array(limbs * digits);
  const firstDigit = new Uint8Array(limbs);
  for (let i = 0; i < limbs; i++) {
    let power = 1n << BigInt(16 * (limbs - 1 - i));
    for (let j = digits - 1; j >= 0; j--) {
      table[i * digits + j] = Number(power % BigInt(R));
      power /= BigInt(R);
    }
    let first = 0;
    while (first < digits - 1 && table[i * digits + first] === 0) first++;
    firstDigit[i] = first;
  }
  return { bytes, limbs, digits, table, firstDigit };
}

const LAYOUT_32 = layout(32);
const LAYOUT_64 = layout(64);
// Scratch space, big enough for 64 bytes. Encoding is synchronous, so one per thread is safe.
const acc = new Float64Array(LAYOUT_64.digits);
/** PAIRS[2i], PAIRS[2i+1]: the two base58 characters of i < 58². */
const PAIRS = new Uint8Array(2 * 58 * 58);
for (let i = 0; i < 58 * 58; i++) {
  PAIRS[2 * i] = ALPHABET_CODES[Math.floor(i / 58)]!;
  PAIRS[2 * i + 1] = ALPHABET_CODES[i % 58]!;
}

function encodeFixed(L: Layout, src: Uint8Array, srcOffset: number, dst: Uint8Array, dstOffset: number): number {
  const { limbs, digits, table, firstDigit } = L;
  acc.fill(0, 0, digits);
  let zeros = 0;
  while (zeros < L.bytes && src[srcOffset + zeros] === 0) zeros++;

  for (let i = 0; i < limbs; i++) {
    const limb = (src[srcOffset + 2 * i]! << 8) | src[srcOffset + 2 * i + 1]!;
    if (limb === 0) continue;
    const row = i * digits;
    for (let j = firstDigit[i]!; j < digits; j++) acc[j]! += limb * table[row + j]!;
  }
  for (let j = digits - 1; j > 0; j--) {
    const x = acc[j]!;
    let q = Math.floor(x / R);
    let r = x - q * R;
    // x < 2^53, so the quotient is at most one off after rounding; make it exact.
    if (r < 0) {
      q -= 1;
      r += R;
    } else if (r >= R) {
      q += 1;
      r -= R;
    }
    acc[j] = r;
    acc[j - 1]! += q;
  }

  let j = 0;
  while (j < digits - 1 && acc[j] === 0) j++;
  let out = dstOffset;
  for (let z = 0; z < zeros; z++) dst[out++] = 0x31; // '1'
  if (zeros === L.bytes) return out;
  // The most significant radix-R digit without its leading zero characters.
  const top = acc[j]!;
  const width = top >= 58 ** 4 ? 5 : top >= 58 ** 3 ? 4 : top >= 58 ** 2 ? 3 : top >= 58 ? 2 : 1;
  for (let k = width - 1, d = top; k >= 0; k--) {
    const q = Math.floor(d / 58);
    dst[out + k] = ALPHABET_CODES[d - q * 58]!;
    d = q;
  }
  out += width;
  // Every other digit: five characters, as 2 + 1 + 2 through a table of all 58² pairs.
  for (j++; j < digits; j++) {
    const d = acc[j]!;
    const hi = Math.floor(d / 195112); // 58^3
    const lo = d - hi * 195112;
    const mid = Math.floor(lo / 3364); // 58^2
    const r = lo - mid * 3364;
    dst[out] = PAIRS[2 * hi]!;
    dst[out + 1] = PAIRS[2 * hi + 1]!;
    dst[out + 2] = ALPHABET_CODES[mid]!;
    dst[out + 3] = PAIRS[2 * r]!;
    dst[out + 4] = PAIRS[2 * r + 1]!;
    out += 5;
  }
  return out;
}

/** Writes base58 of src[srcOffset, srcOffset + 32) into dst at dstOffset; returns the offset after it. */
export function writeBase58Of32(src: Uint8Array, srcOffset: number, dst: Uint8Array, dstOffset: number): number {
  return encodeFixed(LAYOUT_32, src, srcOffset, dst, dstOffset);
}

/** Writes base58 of src[srcOffset, srcOffset + 64) into dst at dstOffset; returns the offset after it. */
export function writeBase58Of64(src: Uint8Array, srcOffset: number, dst: Uint8Array, dstOffset: number): number {
  return encodeFixed(LAYOUT_64, src, srcOffset, dst, dstOffset);
}

const textScratch = new Uint8Array(BASE58_MAX_64);
/** The characters are ASCII: one native call makes the string (a spread of char codes costs three times the encoding). */
const ascii = new TextDecoder('latin1');

/** base58 text of a 32- or 64-byte array (for tests and the few places that want a string). */
export function base58Encode(bytes: Uint8Array): string {
  let end: number;
  if (bytes.length === 32) end = writeBase58Of32(bytes, 0, textScratch, 0);
  else if (bytes.length === 64) end = writeBase58Of64(bytes, 0, textScratch, 0);
  else throw new RangeError(`base58Encode takes 32 or 64 bytes, got ${bytes.length}`);
  const text = ascii.decode(textScratch.subarray(0, end));
  textScratch.fill(0);
  return text;
}

/**
 * base58 text of the 32 bytes of `bytes` at `offset`: an address inside account data, read where
 * it lies (kit's address decoder goes through BigInt arithmetic, about twenty times slower).
 * Public data only: the scratch is not wiped.
 */
export function base58Of32At(bytes: Uint8Array, offset: number): string {
  return ascii.decode(textScratch.subarray(0, writeBase58Of32(bytes, offset, textScratch, 0)));
}
