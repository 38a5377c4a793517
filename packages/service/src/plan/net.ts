/**
 * What an operation gives back and what it costs, in one place: the rent of the accounts it closes,
 * the excess rent it withdraws, its fees and the net of the three. The preview, the compiled plan
 * and the answer of a keyed operation all count with it. Pure.
 */
import type { AccountAction } from './actions.ts';

export interface Net {
  /** Rent of the accounts closed (burned and closed, closed, unwrapped). */
  reclaimedLamports: bigint;
  /** Lamports above the rent-exempt minimum withdrawn from accounts that stay open. */
  excessWithdrawnLamports: bigint;
  feeLamports: bigint;
  /** reclaimed + excess − fees: negative when the fees are larger. */
  netLamports: bigint;
}

export function netOf(actions: readonly Pick<AccountAction, 'action' | 'returnsLamports'>[], feeLamports: bigint): Net {
  let reclaimedLamports = 0n;
  let excessWithdrawnLamports = 0n;
  for (const action of actions) {
    if (action.action === 'withdraw_excess') excessWithdrawnLamports += action.returnsLamports;
    else reclaimedLamports += action.returnsLamports;
  }
  return { reclaimedLamports, excessWithdrawnLamports, feeLamports, netLamports: reclaimedLamports + excessWithdrawnLamports - feeLamports };
}
