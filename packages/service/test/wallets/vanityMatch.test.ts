/**
 * The numeric vanity matcher (src/wallets/vanityMatch.ts) against the plain one: encode the address
 * with bs58 and compare the text (startsWith / endsWith, lowercased for ignoreCase), on random keys
 * and random patterns (fast-check). Patterns are drawn from the key's own address (so that matches
 * are common), altered at random (so that near-misses are too), or random; keys include leading
 * zero bytes (leading '1's) and the extremes.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import bs58 from 'bs58';
import fc from 'fast-check';
import { BASE58_ALPHABET } from '../../src/keys/base58.ts';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { caseVariants, createVanityMatcher, type VanityPatternSpec } from '../../src/wallets/vanityMatch.ts';
import { checkBody, parseGenerated } from '@cinder/testkit';

function plainMatch(key: Uint8Array, spec: VanityPatternSpec): boolean {
  const address = bs58.encode(key);
  const fold = (s: string) => (spec.ignoreCase ? s.toLowerCase() : s);
  return fold(address).startsWith(fold(spec.prefix)) && fold(address).endsWith(fold(spec.suffix));
}

const base58Char = fc.constantFrom(...BASE58_ALPHABET);
const randomPattern = fc.array(base58Char, { minLength: 0, maxLength: 6 }).map((cs) => cs.join(''));

/** 32-byte keys: uniform, with 1–31 leading zero bytes, or all-zero / all-0xff. */
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 31 }), fc.uint8Array({ minLength: 32, maxLength: 32 }))
      .map(([zeros, bytes]) => Uint8Array.from(bytes, (b, i) => (i < zeros ? 0 : b))),
  },
  { weight: 1, arbitrary: fc.constantFrom(new Uint8Array(32), new Uint8Array(32).fill(0xff)) },
);

/** The value one time in five, else undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** A pattern from the address itself: its first/last characters, maybe one changed, maybe case-flipped. */
const specArb = fc
  .record({
    key: keyArb,
    prefixLength: fc.integer({ min: 0, max: 6 }),
    suffixLength: fc.integer({ min: 0, max: 6 }),
    ignoreCase: fc.boolean(),
    flipCase: fc.boolean(),
    mutate: sometimes(fc.tuple(fc.nat(), base58Char)),
    randomPrefix: sometimes(randomPattern),
    randomSuffix: sometimes(randomPattern),
  })
  .map(({ key, prefixLength, suffixLength, ignoreCase, flipCase, mutate, randomPrefix, randomSuffix }) => {
    const address = bs58.encode(key);
    let prefix = randomPrefix ?? address.slice(0, prefixLength);
    let suffix = randomSuffix ?? (suffixLength === 0 ? '' : address.slice(-suffixLength));
    if (mutate && prefix.length + suffix.length > 0) {
      const [at, c] = mutate;
      const both = prefix + suffix;
      const i = at % both.length;
      const changed = both.slice(0, i) + c + both.slice(i + 1);
      prefix = changed.slice(0, prefix.length);
      suffix = changed.slice(prefix.length);
    }
    if (flipCase) {
      // Another spelling that ignoreCase accepts (letters whose other case base58 has).
      const flip = (s: string) => caseVariants(s, true).at(-1)!;
      prefix = flip(prefix);
      suffix = flip(suffix);
    }
    return { key, spec: { prefix, suffix, ignoreCase } };
  });

describe('numeric vanity matcher', () => {
  it('agrees with bs58 encode-and-compare on random keys and patterns (property)', () => {
    let matched = 0;
    fc.assert(
      fc.property(specArb, ({ key, spec }) => {
        const expected = plainMatch(key, spec);
        if (expected) matched++;
        // At an offset too, as the workers hand it a key inside a larger buffer.
        const padded = new Uint8Array(40);
        padded.set(key, 5);
        const matches = createVanityMatcher(spec);
        assert.equal(matches(key, 0), expected, `${bs58.encode(key)} ${JSON.stringify(spec)}`);
        assert.equal(matches(padded, 5), expected);
      }),
      { numRuns: 3000 },
    );
    assert.ok(matched > 300, `the patterns matched often enough to test both answers (${matched} of 3000)`);
  });

  it('leading 1s: a prefix of n ones is exactly n (or more) leading zero bytes', () => {
    const key = new Uint8Array(32).fill(7);
    key[0] = 0;
    key[1] = 0;
    const address = bs58.encode(key);
    assert.ok(address.startsWith('11') && !address.startsWith('111'));
    for (const prefix of ['1', '11', '111', `11${address[2]}`, `1${address[2]}`]) {
      assert.equal(createVanityMatcher({ prefix, suffix: '', ignoreCase: false })(key, 0), address.startsWith(prefix), prefix);
    }
    assert.ok(createVanityMatcher({ prefix: '1'.repeat(32), suffix: '1'.repeat(4), ignoreCase: false })(new Uint8Array(32), 0));
  });

  it('ignoreCase expands each letter to the cases base58 has (no l, I or O)', () => {
    assert.deepEqual(caseVariants('aL9', true).sort(), ['AL9', 'aL9'].sort());
    assert.deepEqual(caseVariants('ko', true).sort(), ['Ko', 'ko']);
    assert.deepEqual(caseVariants('Ab', false), ['Ab']);
  });
});

describe('a vanity search with the numeric matcher', () => {
  const generator = createWalletGenerator({ vanityTimeoutMs: 60_000, threads: 2 });
  after(() => generator.close());

  it('finds addresses that really match (checked by bs58 and by signing), leading 1s and ignoreCase included', async () => {
    for (const vanity of [
      { prefix: '1', suffix: '', ignoreCase: false },
      { prefix: 'Ab', suffix: '', ignoreCase: true },
      { prefix: '', suffix: 'Zz', ignoreCase: true },
      { prefix: '9', suffix: 'k', ignoreCase: false },
    ]) {
      const body = parseGenerated(await generator.generate({ n: 3, vanity }));
      checkBody(body, 3, { derive: true });
      for (const address of body.wallets) {
        assert.ok(plainMatch(bs58.decode(address), vanity), `${address} matches ${JSON.stringify(vanity)}`);
      }
    }
  });
});
