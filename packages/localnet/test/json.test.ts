/**
 * stringifyJson, the local chain's JSON writer, against the writer it replaces (a recursive writer
 * in JavaScript, kept here as the reference): the same text for every value an RPC reply holds,
 * bigints of any size (written as bare digits), numbers, strings of any content, nested arrays and
 * objects, undefined members (skipped) and undefined items (null), non-finite numbers (null).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJsonWithBigInts } from '@solana/rpc-spec-types';
import { stringifyJson } from '../src/json.ts';

function reference(value: unknown): string {
  const out: string[] = [];
  const write = (item: unknown): void => {
    switch (typeof item) {
      case 'bigint':
        out.push(item.toString());
        return;
      case 'number':
        out.push(Number.isFinite(item) ? String(item) : 'null');
        return;
      case 'string':
        out.push(JSON.stringify(item));
        return;
      case 'boolean':
        out.push(item ? 'true' : 'false');
        return;
      case 'object':
        if (item === null) out.push('null');
        else if (Array.isArray(item)) {
          out.push('[');
          item.forEach((x, i) => {
            if (i > 0) out.push(',');
            write(x === undefined ? null : x);
          });
          out.push(']');
        } else {
          out.push('{');
          let first = true;
          for (const [key, x] of Object.entries(item)) {
            if (x === undefined || typeof x === 'function') continue;
            if (!first) out.push(',');
            first = false;
            out.push(JSON.stringify(key), ':');
            write(x);
          }
          out.push('}');
        }
        return;
      default:
        out.push('null');
    }
  };
  write(value);
  return out.join('');
}

const replyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    fc.constantFrom(2n ** 64n - 1n, 2n ** 53n, 2n ** 53n - 1n, -(2n ** 53n), 0n),
    fc.double(),
    fc.string({ unit: 'binary' }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('stringifyJson (the local chain)', () => {
  it('writes every reply value as the JavaScript writer did', () => {
    fc.assert(
      fc.property(replyValue, (value) => {
        assert.equal(stringifyJson(value), reference(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes u64 values as bare digits that kit reads back exactly', () => {
    const text = stringifyJson({ lamports: 2_039_280n, rentEpoch: 2n ** 64n - 1n, big: -(2n ** 70n), memo: 'rentEpoch 18446744073709551615' });
    assert.equal(text, '{"lamports":2039280,"rentEpoch":18446744073709551615,"big":-1180591620717411303424,"memo":"rentEpoch 18446744073709551615"}');
    assert.deepEqual(parseJsonWithBigInts(text), { lamports: 2_039_280n, rentEpoch: 2n ** 64n - 1n, big: -(2n ** 70n), memo: 'rentEpoch 18446744073709551615' });
  });
});
