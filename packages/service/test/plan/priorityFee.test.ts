import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { computeUnitPriceFor, formatSol, priorityFeeCharged, priorityFeeToLamports } from '../../src/plan/priorityFee.ts';
import { isCinderError } from '../../src/errors.ts';

const MAX = 10_000_000n; // 0.01 SOL

describe('priorityFeeToLamports', () => {
  it('converts SOL to exact lamports', () => {
    assert.equal(priorityFeeToLamports(0, MAX), 0n);
    assert.equal(priorityFeeToLamports(0.001, MAX), 1_000_000n);
    assert.equal(priorityFeeToLamports(0.000000001, MAX), 1n);
    assert.equal(priorityFeeToLamports(0.01, MAX), 10_000_000n);
    assert.equal(priorityFeeToLamports(0.003, MAX), 3_000_000n);
    assert.equal(priorityFeeToLamports(0.1 + 0.2 - 0.29, MAX), 10_000_000n); // float noise below lamport precision is ignored
  });

  for (const [value, reason] of [
    [-0.001, /≥ 0/],
    [0.0000000001, /more than 9 decimals/],
    [0.0100000001, /more than 9 decimals/],
    [0.010000001, /at most 0.01 SOL/],
    [1, /at most 0.01 SOL/],
    [Number.NaN, /≥ 0/],
    [Number.POSITIVE_INFINITY, /≥ 0/],
  ] as const) {
    it(`rejects ${value} with INVALID_PRIORITY_FEE`, () => {
      assert.throws(
        () => priorityFeeToLamports(value, MAX),
        (e: unknown) => isCinderError(e, 'INVALID_PRIORITY_FEE') && reason.test(e.message),
      );
    });
  }
});

describe('compute unit price', () => {
  it('follows the contract: floor(priorityFee × 1e9 × 1e6 / limit)', () => {
    assert.equal(computeUnitPriceFor(1_000_000n, 6000), 166_666_666n);
    assert.equal(computeUnitPriceFor(0n, 6000), 0n);
    assert.equal(computeUnitPriceFor(10_000_000n, 1_400_000), 7_142_857n);
  });

  it('never charges more than asked and at most 1 lamport less', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX }), fc.integer({ min: 1, max: 1_400_000 }), (lamports, limit) => {
        const charged = priorityFeeCharged(computeUnitPriceFor(lamports, limit), limit);
        assert.ok(charged <= lamports, `charged ${charged} > asked ${lamports}`);
        assert.ok(lamports - charged <= 1n, `charged ${charged} is more than 1 lamport below ${lamports}`);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('formatSol', () => {
  it('prints lamports as SOL without trailing zeros', () => {
    assert.equal(formatSol(2_039_280n), '0.00203928');
    assert.equal(formatSol(1_000_000_000n), '1');
    assert.equal(formatSol(0n), '0');
    assert.equal(formatSol(1_500_000_001n), '1.500000001');
  });
});
