/**
 * The one lock wait of every signing door, one owner or many: the operation runs holding the turn
 * of each owner it signs for (src/store/operationLocks.ts), waiting at most half of what is left
 * before its deadline (turnWaitMs), and keeps the turns while what it sent may still land.
 *
 * Several owners' turns are taken in address order, so that two jobs sharing owners can never each
 * hold a turn the other waits for. `fn` gets the one hold for landing of all of them: called right
 * before the first send, it keeps every turn across a crash too.
 */
import type { Address } from '@solana/kit';
import { turnWaitMs, type BusyCode, type HeldLock, type OperationLocks } from '../store/operationLocks.ts';

export interface OwnerTurnOptions<T> {
  deadline: number;
  busyCode: BusyCode;
  /** A duplicate of the same operation (the same burn, a second reclaim) joins the running one and gets its answer. */
  joinAs?: string;
  /** The 409 names the owner whose turn did not come (a request naming several owners); else it says "this wallet". */
  nameOwner?: boolean;
  /** Whether a result leaves transactions that may still land: the turns are kept while it can. */
  keepWhile: (result: T) => boolean;
}

export function inOwnerTurns<T>(
  locks: Pick<OperationLocks, 'withLock'>,
  owners: readonly Address[],
  options: OwnerTurnOptions<T>,
  fn: (holdForLanding: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const sorted = [...new Set(owners)].sort();
  const held: HeldLock[] = [];
  const next = (i: number): Promise<T> => {
    if (i === sorted.length) {
      return fn(async () => {
        for (const turn of held) await turn.holdForLanding();
      });
    }
    return locks.withLock(
      `owner:${sorted[i]}`,
      (turn) => {
        held.push(turn);
        return next(i + 1);
      },
      {
        busyCode: options.busyCode,
        maxWaitMs: turnWaitMs(options.deadline),
        keepWhile: options.keepWhile,
        ...(options.nameOwner ? { busyWallet: sorted[i]! } : {}),
        ...(options.joinAs !== undefined ? { joinAs: options.joinAs } : {}),
      },
    );
  };
  return next(0);
}
