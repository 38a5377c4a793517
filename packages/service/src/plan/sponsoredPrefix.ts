/**
 * Which transactions of a 0-SOL owner's plan the fee sponsor pays for, and in what waves they may
 * land (docs/money.md, "When someone else pays the fee"). Pure: balances and fees in, the split out.
 *
 * The contract's rule: the sponsor pays for as little as it must. Only a prefix of the plan that
 * the owner cannot pay is sponsored (usually the first transaction, before any rent came back);
 * each of those repays the sponsor its exact fee out of its own closes and lands before the next
 * wave starts. Every later transaction has the owner as fee payer and is paid from the rent the
 * prefix returned. Those go out together, so they may land in any order: each must be payable
 * whichever of the others landed before it, which is why the check below takes the worst case
 * (every other transaction of the wave that costs the owner more than it returns landed first).
 */
import { canRepaySponsor, leavesValidBalance } from './money.ts';

/** What one transaction of the plan moves for the owner, priced both ways. */
export interface StepMoney {
  /** Lamports its closes and withdrawals return to the owner. */
  returnsLamports: bigint;
  /** Its fee when the owner pays it (one signature, no repayment). */
  ownerFeeLamports: bigint;
  /** Its fee when the sponsor pays it (two signatures and the repayment): what the owner repays. */
  sponsoredFeeLamports: bigint;
}

export interface SplitStep {
  index: number;
  feePayer: 'sponsor' | 'owner';
  /** Transactions that must have landed before this one is relayed (the owner's funds come from them). */
  dependsOn: number[];
  /** Landing wave: every transaction of a wave may go out together once each earlier wave landed. */
  wave: number;
  /** The fee this transaction costs the owner (paid directly, or repaid to the sponsor). */
  feeLamports: bigint;
}

export interface SponsoredSplit {
  /** How many transactions, from the first, the sponsor pays for (0: the owner pays everything). */
  sponsoredCount: number;
  steps: SplitStep[];
  /** The owner's balance once every transaction landed. */
  ownerFinalLamports: bigint;
  /** Returned − fees, to the lamport: what the preview states as the owner's net. */
  netLamports: bigint;
}

/**
 * Whether the owner, holding `balance` when a wave of owner-paid transactions is sent together,
 * can pay every one of them in any landing order. With one transaction the chain's own rule
 * applies (after the fee: 0 or at least `reserve`). With several, a transaction that would leave
 * exactly 0 in the worst order could leave a positive amount below the reserve in a better one,
 * so the worst order must keep the reserve.
 */
export function ownerWaveCanPay(balance: bigint, wave: readonly StepMoney[], reserve: bigint): boolean {
  if (wave.length === 0) return true;
  if (wave.length === 1) return leavesValidBalance(balance, wave[0]!.ownerFeeLamports, reserve);
  const losses = wave.map((step) => {
    const net = step.returnsLamports - step.ownerFeeLamports;
    return net < 0n ? net : 0n;
  });
  const allLosses = losses.reduce((sum, loss) => sum + loss, 0n);
  return wave.every((step, i) => balance + (allLosses - losses[i]!) - step.ownerFeeLamports >= reserve);
}

/**
 * The shortest sponsored prefix after which the owner can pay every remaining transaction at
 * once, or null when none exists (a prefix transaction cannot repay its sponsor in full, and the
 * owner cannot pay from before it). `sponsorAvailable` false: only the owner may pay (prefix 0).
 */
export function splitSponsored(ownerLamports: bigint, steps: readonly StepMoney[], reserve: bigint, sponsorAvailable = true): SponsoredSplit | null {
  let balance = ownerLamports;
  for (let prefix = 0; prefix <= steps.length; prefix++) {
    if (ownerWaveCanPay(balance, steps.slice(prefix), reserve)) return describeSplit(ownerLamports, steps, prefix);
    if (!sponsorAvailable || prefix === steps.length) return null;
    const next = steps[prefix]!;
    // The next transaction joins the prefix only if it repays its sponsor in full: one that could not is never sent.
    if (!canRepaySponsor(balance, next.returnsLamports, next.sponsoredFeeLamports, reserve)) return null;
    balance += next.returnsLamports - next.sponsoredFeeLamports;
  }
  return null;
}

function describeSplit(ownerLamports: bigint, steps: readonly StepMoney[], prefix: number): SponsoredSplit {
  let returned = 0n;
  let fees = 0n;
  const described = steps.map((step, index): SplitStep => {
    const sponsored = index < prefix;
    const feeLamports = sponsored ? step.sponsoredFeeLamports : step.ownerFeeLamports;
    returned += step.returnsLamports;
    fees += feeLamports;
    // A sponsored transaction waits for the one before it (its repayment may need that one's rent); the owner-paid wave waits for the last sponsored one.
    const before = sponsored ? index - 1 : prefix - 1;
    return { index, feePayer: sponsored ? 'sponsor' : 'owner', dependsOn: before >= 0 ? [before] : [], wave: sponsored ? index : prefix, feeLamports };
  });
  const netLamports = returned - fees;
  return { sponsoredCount: prefix, steps: described, ownerFinalLamports: ownerLamports + netLamports, netLamports };
}
