import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  autoPriorityFeeLamports,
  computeUnitPriceFor,
  formatSol,
  priorityFeeCharged,
  priorityFeeRequest,
  priorityFeeToLamports,
  recentFeePercentile,
} from '../../src/plan/priorityFee.ts';
import { isCinderError, type CinderError } from '../../src/errors.ts';

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

describe('priorityFee "auto": the percentile and its bounds', () => {
  it('takes the nearest-rank 75th percentile of the recent per-slot fees, 0 when there are none', () => {
    assert.equal(recentFeePercentile([]), 0n);
    assert.equal(recentFeePercentile([7n]), 7n);
    const fees = Array.from({ length: 100 }, (_, i) => BigInt(100 - i)); // 100 … 1, unsorted order
    assert.equal(recentFeePercentile(fees), 75n);
    assert.equal(recentFeePercentile(fees, 50), 50n);
    assert.equal(recentFeePercentile([0n, 0n, 0n, 1_000n]), 0n, 'three idle slots of four: nothing to pay');
  });

  it('prices the job\'s compute units at the percentile, rounded up, within the operator\'s price and total and the net-loss rule', () => {
    const base = { microLamportsPerComputeUnit: 10_000n, computeUnitsUpperBound: 96_000, maxMicroLamportsPerComputeUnit: 1_000_000n, maxPriorityFeeLamports: 10_000_000n, netLossBoundLamports: null };
    assert.equal(autoPriorityFeeLamports(base), 960n);
    assert.equal(autoPriorityFeeLamports({ ...base, microLamportsPerComputeUnit: 10_001n }), 961n, 'rounded up');
    assert.equal(autoPriorityFeeLamports({ ...base, maxMicroLamportsPerComputeUnit: 1_000n }), 96n, 'the operator\'s price cap');
    assert.equal(autoPriorityFeeLamports({ ...base, maxPriorityFeeLamports: 500n }), 500n, 'MAX_PRIORITY_FEE_SOL');
    assert.equal(autoPriorityFeeLamports({ ...base, netLossBoundLamports: 300n }), 300n, 'never more than the job returns less its base fees');
    assert.equal(autoPriorityFeeLamports({ ...base, netLossBoundLamports: 0n }), 0n);
    assert.equal(autoPriorityFeeLamports({ ...base, microLamportsPerComputeUnit: 0n }), 0n, 'an idle cluster: no fee');
  });

  it('"auto" or a number at the door, lamports exact from the SOL decimal', () => {
    assert.equal(priorityFeeRequest('auto', 10_000_000n), 'auto');
    assert.equal(priorityFeeRequest(0.001, 10_000_000n), 1_000_000n);
    assert.equal(priorityFeeRequest(undefined, 10_000_000n), 0n);
    assert.equal(priorityFeeRequest(0.000000005, 10_000_000n), 5n);
    assert.throws(() => priorityFeeRequest(0.02, 10_000_000n), (e: CinderError) => e.code === 'INVALID_PRIORITY_FEE' && e.errors?.[0]?.field === 'priorityFee');
  });
});
