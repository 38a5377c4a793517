/**
 * The human sentence of an operation's result: what was burned, closed and reclaimed, the fees and
 * the net, what was skipped and why, or what went wrong. Pure.
 */
import type { MintState } from '../plan/tokenState.ts';
import { formatSol } from '../plan/priorityFee.ts';
import { formatNetSol } from '../plan/money.ts';
import { type OperationKind, type ManyResult, type OperationResult } from './operationResult.ts';

/** A raw u64 amount in UI units with thousands separators: (1234500000n, 6) → "1,234.5". */
export function formatTokenAmount(amount: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = (amount / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '') : '';
  return fraction ? `${whole}.${fraction}` : whole;
}

const accounts = (n: number) => `${n} account${n === 1 ? '' : 's'}`;

function whatWasDone(result: Omit<OperationResult, 'message'>, operation: OperationKind, mint: MintState | null): string {
  const closed = result.closedAccounts.length;
  if (operation.kind === 'burn') {
    const burned = result.burned[0]?.amount ?? 0n;
    if (mint?.isNative) return `Unwrapped SOL and closed ${accounts(closed)} of ${operation.mint}`;
    return burned > 0n
      ? `Burned ${formatTokenAmount(burned, mint!.decimals)} of ${operation.mint} and closed ${accounts(closed)}`
      : `Closed ${accounts(closed)} of ${operation.mint} (nothing to burn)`;
  }
  const parts = [`Closed ${accounts(closed)}`];
  if (result.burned.length > 0) parts.push(`burned the balances of ${result.burned.length} mint${result.burned.length === 1 ? '' : 's'}`);
  if (result.excessWithdrawnLamports > 0n) parts.push(`withdrew ${formatSol(result.excessWithdrawnLamports)} SOL of excess rent`);
  return parts.join(', ');
}

/** What any landing answer has that its sentence reads (one owner's result and many owners' alike). */
type Landed = Pick<OperationResult, 'status' | 'feeLamports'> & {
  transactions: readonly Pick<OperationResult['transactions'][number], 'signature' | 'status' | 'error'>[];
  skippedAccounts: readonly { reason: string }[];
};

/**
 * The one sentence of a landing, whichever door: `done` (what landed and the money) when all
 * landed; for a pending or failed one, each transaction that did not land, what to do, and what
 * did land (`landedSome`); then the accounts skipped, each reason once (an owner left out of a
 * many-owner job gives all its accounts the same reason).
 */
function describeLanding(result: Landed, done: string, landedSome: boolean): string {
  const reasons = [...new Set(result.skippedAccounts.map((s) => s.reason))].join('; ');
  const skipped = result.skippedAccounts.length > 0 ? ` Skipped ${accounts(result.skippedAccounts.length)}: ${reasons}.` : '';
  if (result.status === 'success') return `${done}.${skipped}`;

  const problems = result.transactions
    .filter((t) => t.status !== 'success')
    .map((t) => `transaction ${t.signature} ${t.status === 'pending' ? 'is pending' : `failed: ${t.error}`}`);
  if (result.status === 'pending') {
    return (
      `The transactions were sent but their confirmation could not be observed in time, so the outcome is unknown: ` +
      `${problems.join('; ')}. Check with GET /api/transactions/{signature}; do not resend until it is final.` +
      (landedSome ? ` Meanwhile: ${done}.` : '') +
      skipped
    );
  }
  const partial = landedSome ? ` Only part of it landed: ${done}.` : ` Nothing was burned or closed; fees paid: ${formatSol(result.feeLamports)} SOL.`;
  return `It failed: ${problems.join('; ')}.${partial}${skipped}`;
}

/** The sentence of one owner's burn or reclaim. */
export function describeOutcome(result: Omit<OperationResult, 'message'>, operation: OperationKind, mint: MintState | null): string {
  const money =
    `reclaimed ${formatSol(result.reclaimedLamports + result.excessWithdrawnLamports)} SOL, ` +
    `fees ${formatSol(result.feeLamports)} SOL${result.sponsored ? ' (paid by the fee sponsor and repaid from the reclaimed rent)' : ''}, ` +
    `net ${formatNetSol(result.netLamports)} SOL`;
  const landedSome = result.closedAccounts.length > 0 || result.excessWithdrawnLamports > 0n;
  return describeLanding(result, `${whatWasDone(result, operation, mint)}; ${money}`, landedSome);
}

/** The sentence of a reclaim of many wallets: what landed is counted over its transactions, the rent goes to one destination. */
export function describeManyOutcome(result: Omit<ManyResult, 'message'>, owners: number): string {
  const landed = result.transactions.filter((t) => t.status === 'success');
  const closed = landed.reduce((sum, t) => sum + t.closedAccounts.length, 0);
  const money =
    `${formatSol(result.reclaimedLamports)} SOL of rent to ${result.destination}, fees ${formatSol(result.feeLamports)} SOL paid by ${result.feePayer}, ` +
    `net ${formatNetSol(result.netLamports)} SOL`;
  const transactions = `${landed.length} of ${result.transactions.length} transaction${result.transactions.length === 1 ? '' : 's'}`;
  const done = `Closed ${accounts(closed)} of ${owners} owner${owners === 1 ? '' : 's'} in ${transactions}: ${money}`;
  return describeLanding(result, done, closed > 0);
}
