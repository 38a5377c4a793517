import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import fc from 'fast-check';
import { BASE58_MAX_32, BASE58_MAX_64, base58Encode, writeBase58Of32, writeBase58Of64 } from '../../src/keys/base58.ts';

/** Byte arrays of `size` with a random number of leading zero bytes (the case base58 treats specially). */
function bytesWithLeadingZeros(size: number) {
  return fc
    .tuple(fc.uint8Array({ minLength: size, maxLength: size }), fc.nat({ max: size }))
    .map(([bytes, zeros]) => {
      bytes.fill(0, 0, zeros);
      return bytes;
    });
}

function edgeCases(size: number): Uint8Array[] {
  const cases = [new Uint8Array(size), new Uint8Array(size).fill(0xff)];
  for (let zeros = 1; zeros < size; zeros++) {
    const leading = new Uint8Array(size).fill(0xff);
    leading.fill(0, 0, zeros);
    cases.push(leading);
    const one = new Uint8Array(size);
    one[zeros] = 1;
    cases.push(one);
  }
  const last = new Uint8Array(size);
  last[size - 1] = 1;
  cases.push(last, new Uint8Array(size).fill(0x80), Uint8Array.from({ length: size }, (_, i) => i));
  // Around radix-58^5 boundaries: values just below and at powers of 58.
  for (const power of [5, 10, 20, 40, 43, 85]) {
    let value = 58n ** BigInt(power);
    if (value >= 1n << BigInt(size * 8)) continue;
    for (const v of [value - 1n, value, value + 1n]) {
      const bytes = new Uint8Array(size);
      value = v;
      for (let i = size - 1; i >= 0 && value > 0n; i--, value >>= 8n) bytes[i] = Number(value & 0xffn);
      cases.push(bytes);
    }
  }
  return cases;
}

describe('base58 fixed-size encoder', () => {
  for (const size of [32, 64] as const) {
    it(`equals bs58 on random ${size}-byte inputs, leading zeros included (fast-check)`, () => {
      fc.assert(
        fc.property(bytesWithLeadingZeros(size), (bytes) => base58Encode(bytes) === bs58.encode(bytes)),
        { numRuns: 5000 },
      );
    });

    it(`equals bs58 on ${size}-byte edge cases: all-zero, all-0xFF, every count of leading zeros, radix boundaries`, () => {
      for (const bytes of edgeCases(size)) assert.equal(base58Encode(bytes), bs58.encode(bytes), Buffer.from(bytes).toString('hex'));
    });
  }

  it('writes at any offset of source and destination, and never past the maximum length', () => {
    const write = { 32: writeBase58Of32, 64: writeBase58Of64 } as const;
    const max = { 32: BASE58_MAX_32, 64: BASE58_MAX_64 } as const;
    fc.assert(
      fc.property(
        fc.constantFrom(32 as const, 64 as const),
        fc.nat({ max: 16 }),
        fc.nat({ max: 16 }),
        fc.uint8Array({ minLength: 64, maxLength: 64 }),
        (size, srcOffset, dstOffset, random) => {
          const src = new Uint8Array(srcOffset + size);
          src.set(random.subarray(0, size), srcOffset);
          const dst = new Uint8Array(dstOffset + max[size] + 8).fill(0xee);
          const end = write[size](src, srcOffset, dst, dstOffset);
          const expected = bs58.encode(src.subarray(srcOffset));
          assert.equal(end - dstOffset, expected.length);
          assert.ok(expected.length <= max[size]);
          assert.equal(Buffer.from(dst.subarray(dstOffset, end)).toString('latin1'), expected);
          assert.ok(dst.subarray(0, dstOffset).every((b) => b === 0xee), 'nothing written before the offset');
          assert.ok(dst.subarray(end).every((b) => b === 0xee), 'nothing written after the text');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('takes only 32 or 64 bytes', () => {
    for (const size of [0, 1, 31, 33, 63, 65]) assert.throws(() => base58Encode(new Uint8Array(size)), RangeError);
  });
});
