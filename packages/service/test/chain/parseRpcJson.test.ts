/**
 * parseRpcJson, the transport's reader of JSON-RPC answers, against the reader it replaces (kit's
 * parseJsonWithBigInts, whose output shapes the types of kit's RPC API): the same value for every
 * answer, including integers past 2^53 (lamports, rentEpoch = u64::MAX), floats, negative
 * exponents, and digits, quotes and backslashes inside strings (base64 and base58 data).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJsonWithBigInts } from '@solana/rpc-spec-types';
import { parseRpcJson } from '../../src/chain/rpcTransport.ts';

/** JSON values as an RPC node writes them: integers of any size, floats, strings of any content. */
const rpcValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => ({ raw: n.toString() })),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => ({ raw: JSON.stringify(x) })),
    fc.string({ unit: 'binary' }).map((s) => ({ raw: JSON.stringify(s) })),
    fc.constantFrom({ raw: 'true' }, { raw: 'false' }, { raw: 'null' }, { raw: '1e5' }, { raw: '-2E+3' }, { raw: '3.5e-7' }, { raw: '1.0' }),
    fc.array(tie('value'), { maxLength: 5 }).map((items) => ({ raw: `[${items.map((i) => (i as { raw: string }).raw).join(',')}]` })),
    fc
      .array(fc.tuple(fc.string(), tie('value')), { maxLength: 5 })
      .map((entries) => ({ raw: `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${(v as { raw: string }).raw}`).join(',')}}` })),
  ),
})).value as fc.Arbitrary<{ raw: string }>;

describe('parseRpcJson', () => {
  it('reads every answer exactly as kit parseJsonWithBigInts does', () => {
    fc.assert(
      fc.property(rpcValue, ({ raw }) => {
        assert.deepEqual(parseRpcJson(raw), parseJsonWithBigInts(raw));
      }),
      { numRuns: 2000, seed: 20261125 },
    );
  });

  it('keeps u64 values exact and leaves digits inside strings alone', () => {
    const answer = '{"jsonrpc":"2.0","result":{"context":{"slot":41},"value":[{"account":{"data":["AQ\\"12==","base64"],"lamports":9007199254740993,"rentEpoch":18446744073709551615,"space":165},"pubkey":"4Nd1m"}]},"id":7}';
    const parsed = parseRpcJson(answer) as { result: { value: { account: { lamports: bigint; rentEpoch: bigint; data: string[] } }[] } };
    const { account } = parsed.result.value[0]!;
    assert.equal(account.lamports, 9_007_199_254_740_993n);
    assert.equal(account.rentEpoch, 18_446_744_073_709_551_615n);
    assert.deepEqual(account.data, ['AQ"12==', 'base64']);
    assert.deepEqual(parsed, parseJsonWithBigInts(answer));
  });
});
