import type { BurnResult } from './burnTokens.ts';
import type { BurnPlan } from './planBurn.ts';
import { formatSol } from './priorityFee.ts';

/** A raw u64 amount in UI units with thousands separators: (1234500000n, 6) → "1,234.5". */
export function formatTokenAmount(amount: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = (amount / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '') : '';
  return fraction ? `${whole}.${fraction}` : whole;
}

const accounts = (n: number) => `${n} account${n === 1 ? '' : 's'}`;

/** The human sentence of a burn result: what was burned, closed and reclaimed, or why not. */
export function describeBurn(result: Omit<BurnResult, 'message'>, plan: BurnPlan): string {
  const closed = result.closedAccounts.length;
  const what = result.unwrapsSol
    ? `Unwrapped SOL and closed ${accounts(closed)} of ${result.mint}`
    : result.burnedAmount > 0n
      ? `Burned ${formatTokenAmount(result.burnedAmount, result.decimals)} of ${result.mint} and closed ${accounts(closed)}`
      : `Closed ${accounts(closed)} of ${result.mint} (nothing to burn)`;
  const done = `${what}; reclaimed ${formatSol(result.reclaimedLamports)} SOL`;

  if (result.status === 'success') return done;

  const problems = result.transactions
    .filter((t) => t.status !== 'success')
    .map((t) => `transaction ${t.signature} ${t.status === 'pending' ? 'is pending' : `failed: ${t.error}`}`);
  if (result.status === 'pending') {
    return (
      `The burn was sent but its confirmation could not be observed in time, so its outcome is unknown: ` +
      `${problems.join('; ')}. Check it with GET /api/transactions/{signature}; do not resend the burn until it is final.` +
      (closed > 0 ? ` Meanwhile: ${done}.` : '')
    );
  }
  const partial = closed > 0 && closed < plan.closedAccounts.length ? ` Only part of the burn landed: ${done}.` : '';
  return `The burn failed: ${problems.join('; ')}.${partial}`;
}
