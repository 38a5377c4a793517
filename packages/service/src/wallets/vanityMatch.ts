/**
 * Vanity matching on the public key's bytes, without base58-encoding the address (the encoding
 * costs ≈ 0.6 µs a key, the matcher ≈ 0.03 µs: the search then runs at keygen's own pace).
 *
 * An address is base58 of the 32-byte key read as a big-endian number N: one '1' per leading
 * zero byte (z of them), then the digits of N without leading zeros (D; its first digit is never
 * '1', which is the digit 0).
 * - Suffix of k characters: the last k digits of N, zero-padded, so `N mod 58^k` is the suffix's
 *   value. (An address is never shorter than 32 characters, so the padding is made of the
 *   leading '1's themselves.) Computed from 16 limbs of 16 bits and a table of 2^(16j) mod 58^k,
 *   exact in float64 for k ≤ 4; a longer suffix is filtered on its last 4 characters and a hit
 *   confirmed by encoding (one key in 11 million).
 * - Prefix P = '1'^a ‖ Q (Q not starting with '1'): with Q empty, z ≥ a, i.e. N < 256^(32−a).
 *   Otherwise z = a exactly (256^(31−a) ≤ N < 256^(32−a)) and D starts with Q: for some digit
 *   count d, Q·58^(d−q) ≤ N < (Q+1)·58^(d−q). So the matching keys are a few ranges of numbers,
 *   compared byte by byte with the key (usually decided by its first byte).
 * - ignoreCase: each letter stands for the cases the alphabet has (no 'l', 'I', 'O'), so a pattern
 *   is a set of patterns; their ranges are merged and searched by bisection, their suffix values
 *   kept in a set.
 * test/wallets/vanityMatch.test.ts compares this to encode-and-compare (bs58) on random keys and
 * patterns (fast-check).
 */
import { BASE58_ALPHABET, BASE58_MAX_32, writeBase58Of32 } from '../keys/base58.ts';

export interface VanityPatternSpec {
  /** base58 characters ('' for none). */
  prefix: string;
  suffix: string;
  ignoreCase: boolean;
}

/** True when the 32 bytes of `key` from `offset` are a public key whose address matches. */
export type VanityMatcher = (key: Uint8Array, offset: number) => boolean;

/** Suffix characters the modulus covers exactly (58^4 < 2^24: limb × table entry < 2^40, 16 of them < 2^44). */
const EXACT_SUFFIX_CHARS = 4;
const LIMBS = 16;
const TWO_256 = 1n << 256n;

/** Every spelling of `pattern` that ignoreCase matches (letters in each case the alphabet has). */
export function caseVariants(pattern: string, ignoreCase: boolean): string[] {
  let variants = [''];
  for (const c of pattern) {
    const options = ignoreCase ? [...new Set([c.toLowerCase(), c.toUpperCase()])].filter((x) => BASE58_ALPHABET.includes(x)) : [c];
    variants = variants.flatMap((v) => options.map((o) => v + o));
  }
  return variants;
}

function digitsValue(text: string): bigint {
  let value = 0n;
  for (const c of text) value = value * 58n + BigInt(BASE58_ALPHABET.indexOf(c));
  return value;
}

/** Inclusive ranges [lo, hi] of keys (as numbers) whose address starts with `prefix` (exact spelling). */
function prefixRanges(prefix: string): [bigint, bigint][] {
  const a = prefix.length - prefix.replace(/^1+/, '').length;
  const q = prefix.slice(a);
  if (a > 32) return [];
  // Keys with exactly (or, for an all-'1' prefix, at least) a leading zero bytes.
  const zerosHi = a === 32 ? 1n : 1n << BigInt(8 * (32 - a));
  if (q === '') return [[0n, zerosHi - 1n]];
  if (a === 32) return [];
  const zerosLo = 1n << BigInt(8 * (31 - a));
  const qValue = digitsValue(q);
  const ranges: [bigint, bigint][] = [];
  for (let scale = 1n; qValue * scale < TWO_256; scale *= 58n) {
    const lo = qValue * scale > zerosLo ? qValue * scale : zerosLo;
    const hi = (qValue + 1n) * scale < zerosHi ? (qValue + 1n) * scale : zerosHi;
    if (lo < hi) ranges.push([lo, hi - 1n]);
  }
  return ranges;
}

function toBytes(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--, value >>= 8n) out[i] = Number(value & 0xffn);
  return out;
}

/** Sorted, merged inclusive ranges, as 32-byte big-endian bounds. */
function mergedRanges(ranges: [bigint, bigint][]): { lo: Uint8Array[]; hi: Uint8Array[] } {
  ranges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1n) last[1] = r[1] > last[1] ? r[1] : last[1];
    else merged.push([r[0], r[1]]);
  }
  return { lo: merged.map((r) => toBytes(r[0])), hi: merged.map((r) => toBytes(r[1])) };
}

/** Sign of key[offset …] − bound, as 32-byte big-endian numbers. */
function compare(key: Uint8Array, offset: number, bound: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const d = key[offset + i]! - bound[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** A suffix longer than the modulus covers: encode the address and compare (run on the rare keys the modulus let through). */
function encodedSuffixMatcher(suffix: string, ignoreCase: boolean): VanityMatcher {
  const fold = ignoreCase ? 0x20 : 0;
  // Base58 text is ASCII letters and digits: setting bit 0x20 lowercases a letter, leaves a digit.
  const wanted = Uint8Array.from(suffix, (c) => c.charCodeAt(0) | fold);
  const address = new Uint8Array(BASE58_MAX_32);
  return (key, offset) => {
    const end = writeBase58Of32(key, offset, address, 0);
    for (let i = 0, at = end - wanted.length; i < wanted.length; i++) if ((address[at + i]! | fold) !== wanted[i]) return false;
    return true;
  };
}

export function createVanityMatcher(spec: VanityPatternSpec): VanityMatcher {
  const checks: VanityMatcher[] = [];

  if (spec.prefix !== '') {
    const { lo, hi } = mergedRanges(caseVariants(spec.prefix, spec.ignoreCase).flatMap(prefixRanges));
    const count = lo.length;
    checks.push((key, offset) => {
      // The last range starting at or below the key, by bisection; the key matches when it is inside.
      let low = 0;
      let high = count - 1;
      let found = -1;
      while (low <= high) {
        const mid = (low + high) >> 1;
        if (compare(key, offset, lo[mid]!) >= 0) {
          found = mid;
          low = mid + 1;
        } else {
          high = mid - 1;
        }
      }
      return found >= 0 && compare(key, offset, hi[found]!) <= 0;
    });
  }

  if (spec.suffix !== '') {
    const k = Math.min(spec.suffix.length, EXACT_SUFFIX_CHARS);
    const modulus = 58 ** k;
    // table[i]: 2^(16 × (15 − i)) mod 58^k, for limb i (most significant first).
    const table = Float64Array.from({ length: LIMBS }, (_, i) => Number((1n << BigInt(16 * (LIMBS - 1 - i))) % BigInt(modulus)));
    const wanted = new Set(caseVariants(spec.suffix.slice(-k), spec.ignoreCase).map((v) => Number(digitsValue(v))));
    const one = wanted.size === 1 ? [...wanted][0]! : -1;
    checks.push((key, offset) => {
      let sum = 0;
      for (let i = 0; i < LIMBS; i++) sum += ((key[offset + 2 * i]! << 8) | key[offset + 2 * i + 1]!) * table[i]!;
      const rest = sum % modulus;
      return one >= 0 ? rest === one : wanted.has(rest);
    });
    if (spec.suffix.length > EXACT_SUFFIX_CHARS) checks.push(encodedSuffixMatcher(spec.suffix, spec.ignoreCase));
  }

  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0]!;
  return (key, offset) => {
    for (const check of checks) if (!check(key, offset)) return false;
    return true;
  };
}
