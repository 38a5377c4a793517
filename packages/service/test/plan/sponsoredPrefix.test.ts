/**
 * The sponsored prefix of a 0-SOL owner's plan (src/plan/sponsoredPrefix.ts): pure, no chain.
 * What the chain charges for the same split is checked to the lamport by the HTTP tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { leavesValidBalance } from '../../src/plan/money.ts';
import { ownerWaveCanPay, splitSponsored, type StepMoney } from '../../src/plan/sponsoredPrefix.ts';

const RESERVE = 890_880n;
const RENT = 2_039_280n;
// A transaction of n closes: the owner-paid fee is one signature, the sponsored one two.
const closes = (n: number): StepMoney => ({ returnsLamports: RENT * BigInt(n), ownerFeeLamports: 5000n, sponsoredFeeLamports: 10_000n });
// A burn-only transaction: returns nothing and costs its fee.
const burnOnly: StepMoney = { returnsLamports: 0n, ownerFeeLamports: 5000n, sponsoredFeeLamports: 10_000n };

/** Lands `order` on a model of the chain's fee-payer rules: null when some transaction would be refused. */
function landInOrder(start: bigint, steps: readonly StepMoney[], order: readonly number[], sponsoredCount: number): bigint | null {
  let balance = start;
  for (const i of order) {
    const step = steps[i]!;
    if (i < sponsoredCount) {
      balance = balance + step.returnsLamports - step.sponsoredFeeLamports;
      if (!(balance === 0n || balance >= RESERVE)) return null;
    } else {
      if (!leavesValidBalance(balance, step.ownerFeeLamports, RESERVE)) return null;
      balance = balance - step.ownerFeeLamports + step.returnsLamports;
    }
  }
  return balance;
}

describe('the sponsored prefix', () => {
  it('a 0-SOL owner of 3 full transactions: only the first is sponsored, the other two wait for it and go out together', () => {
    const steps = [closes(22), closes(22), closes(2)];
    const split = splitSponsored(0n, steps, RESERVE)!;
    assert.equal(split.sponsoredCount, 1);
    assert.deepEqual(
      split.steps.map((s) => [s.feePayer, s.dependsOn, s.wave, s.feeLamports]),
      [
        ['sponsor', [], 0, 10_000n],
        ['owner', [0], 1, 5000n],
        ['owner', [0], 1, 5000n],
      ],
    );
    assert.equal(split.netLamports, RENT * 46n - 20_000n);
    assert.equal(split.ownerFinalLamports, split.netLamports);
  });

  it('an owner that can pay everything is sponsored for nothing, and all its transactions form one wave', () => {
    const split = splitSponsored(1_000_000_000n, [closes(22), burnOnly, closes(3)], RESERVE)!;
    assert.equal(split.sponsoredCount, 0);
    assert.ok(split.steps.every((s) => s.feePayer === 'owner' && s.wave === 0 && s.dependsOn.length === 0));
    assert.equal(split.ownerFinalLamports, 1_000_000_000n + RENT * 25n - 15_000n);
  });

  it('the prefix grows while the owner could not pay the rest in the worst landing order', () => {
    // A close that returns little more than the reserve, then burn-only transactions that cost the owner their fee.
    const cheap: StepMoney = { returnsLamports: RESERVE + 20_000n, ownerFeeLamports: 5000n, sponsoredFeeLamports: 10_000n };
    const split = splitSponsored(0n, [cheap, cheap, burnOnly, burnOnly], RESERVE)!;
    // After the first the owner holds RESERVE + 10,000: if both burns land first, the second close's fee
    // would leave RESERVE − 5,000. After the second it holds 2·RESERVE + 20,000: both burns are paid.
    assert.equal(split.sponsoredCount, 2);
    assert.deepEqual(split.steps.map((s) => s.dependsOn), [[], [0], [1], [1]]);
    assert.deepEqual(split.steps.map((s) => s.wave), [0, 1, 2, 2]);
  });

  it('none when a transaction the owner cannot pay cannot repay its sponsor either', () => {
    assert.equal(splitSponsored(0n, [burnOnly, closes(3)], RESERVE), null);
    // Without a sponsor, a 0-SOL owner has no split at all.
    assert.equal(splitSponsored(0n, [closes(3)], RESERVE, false), null);
  });

  it('a wave of several keeps the reserve in the worst order; a lone transaction may leave exactly 0', () => {
    assert.equal(ownerWaveCanPay(5000n, [burnOnly], RESERVE), true);
    assert.equal(ownerWaveCanPay(10_000n, [burnOnly, burnOnly], RESERVE), false);
    assert.equal(ownerWaveCanPay(RESERVE + 10_000n, [burnOnly, burnOnly], RESERVE), true);
    assert.equal(ownerWaveCanPay(RESERVE + 9999n, [burnOnly, burnOnly], RESERVE), false);
  });

  it('whatever the plan, every landing order the split allows is accepted by the fee-payer rules and ends at the stated net', () => {
    const step = fc.record({
      returnsLamports: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: RENT * 30n })),
      ownerFeeLamports: fc.bigInt({ min: 5000n, max: 20_000n }),
      sponsoredFeeLamports: fc.bigInt({ min: 10_000n, max: 25_000n }),
    });
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 3_000_000n }), fc.array(step, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 1000 }), (start, steps, seed) => {
        const split = splitSponsored(start, steps, RESERVE);
        if (split === null) return;
        // The prefix in order, then the owner-paid wave in a seeded shuffle of the order.
        const wave = steps.map((_, i) => i).filter((i) => i >= split.sponsoredCount);
        for (let k = wave.length - 1; k > 0; k--) {
          const j = (seed * (k + 7)) % (k + 1);
          [wave[k], wave[j]] = [wave[j]!, wave[k]!];
        }
        const order = [...Array(split.sponsoredCount).keys(), ...wave];
        assert.equal(landInOrder(start, steps, order, split.sponsoredCount), split.ownerFinalLamports);
        // Shortest: one fewer sponsored transaction would leave the owner unable to pay its wave.
        if (split.sponsoredCount > 0) {
          let before = start;
          for (let i = 0; i < split.sponsoredCount - 1; i++) before += steps[i]!.returnsLamports - steps[i]!.sponsoredFeeLamports;
          assert.equal(ownerWaveCanPay(before, steps.slice(split.sponsoredCount - 1), RESERVE), false);
        }
      }),
    );
  });
});
