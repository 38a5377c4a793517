/**
 * The fee formula, the net and the sponsor's reserve check (src/plan/fees.ts, net.ts, money.ts):
 * pure, no chain. What the chain charges for the same transactions is checked to the lamport by
 * the HTTP tests (moneyRules, burnTokens, sponsor).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BASE_FEE_LAMPORTS_PER_SIGNATURE, feeUpperBound, priorityShare, signatureFees, transactionFee } from '../../src/plan/fees.ts';
import { sponsorCanPay } from '../../src/plan/money.ts';
import { netOf } from '../../src/plan/net.ts';
import { computeUnitPriceFor } from '../../src/plan/priorityFee.ts';

describe('the fee formula', () => {
  it('is 5,000 lamports per signature plus the priority fee the runtime charges (price × limit / 1e6, rounded up)', () => {
    assert.equal(BASE_FEE_LAMPORTS_PER_SIGNATURE, 5000n);
    assert.equal(signatureFees(2), 10_000n);
    assert.equal(transactionFee(1, 0n, 200_000), 5000n);
    assert.equal(transactionFee(2, 1n, 1_000_000), 10_001n);
    assert.equal(transactionFee(1, 3n, 1_400_000), 5005n); // 4.2 lamports, rounded up
    assert.equal(feeUpperBound(2, 1234n), 11_234n);
  });

  it('a priority share priced at any limit up to 1,000,000 CU costs exactly its upper bound (so a preview priced without simulation is exact)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 2 }), (share, limit, signatures) => {
        assert.equal(transactionFee(signatures, computeUnitPriceFor(share, limit), limit), feeUpperBound(signatures, share));
      }),
    );
  });

  it('never charges more than the share asked for, at any limit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.integer({ min: 1, max: 1_400_000 }), (share, limit) => {
        assert.ok(transactionFee(1, computeUnitPriceFor(share, limit), limit) <= feeUpperBound(1, share));
      }),
    );
  });

  it('shares a total priority fee between the transactions to the lamport, the first taking the remainder', () => {
    assert.deepEqual([0, 1, 2].map((i) => priorityShare(10n, 3, i)), [4n, 3n, 3n]);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10_000_000n }), fc.integer({ min: 1, max: 200 }), (total, count) => {
        const shares = Array.from({ length: count }, (_, i) => priorityShare(total, count, i));
        assert.equal(shares.reduce((a, b) => a + b, 0n), total);
      }),
    );
  });
});

describe('the net', () => {
  it('splits what comes back into closed rent and withdrawn excess, and takes the fees off both', () => {
    const net = netOf(
      [
        { action: 'close', returnsLamports: 2_039_280n },
        { action: 'burn_and_close', returnsLamports: 2_039_280n },
        { action: 'withdraw_excess', returnsLamports: 1_000n },
        { action: 'unwrap', returnsLamports: 3_000_000n },
      ],
      15_000n,
    );
    assert.deepEqual(net, { reclaimedLamports: 7_078_560n, excessWithdrawnLamports: 1_000n, feeLamports: 15_000n, netLamports: 7_064_560n });
  });

  it('is negative when the fees are larger, and the fees alone when nothing landed', () => {
    assert.equal(netOf([{ action: 'withdraw_excess', returnsLamports: 100n }], 5000n).netLamports, -4900n);
    assert.deepEqual(netOf([], 5000n), { reclaimedLamports: 0n, excessWithdrawnLamports: 0n, feeLamports: 5000n, netLamports: -5000n });
  });
});

describe("the fee sponsor's reserve", () => {
  const reserve = 890_880n;
  it('pays when it can pay the largest fee and keep the reserve, whatever the number of transactions', () => {
    assert.equal(sponsorCanPay(reserve + 10_000n, [10_000n, 7_000n, 10_000n], reserve), true);
    assert.equal(sponsorCanPay(reserve + 9_999n, [10_000n, 7_000n], reserve), false);
    // Unlike a fee payer's balance, the sponsor never goes to 0: it must keep paying.
    assert.equal(sponsorCanPay(10_000n, [10_000n], reserve), false);
  });
});
