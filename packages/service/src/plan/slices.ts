/**
 * Work on thousands of accounts (decoding, planning, packing) in slices, with a turn of the event
 * loop between them: a wallet of 3,000 accounts must not hold every other request (GET /health
 * among them) for the whole of its work, only for a few milliseconds at a time.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items per slice: each costs a few microseconds, so a slice is a millisecond or two on a slow core. */
export const ITEMS_PER_SLICE = 128;

/** True after the last item of a slice: `if (endOfSlice(i)) await nextTurn();` in a loop over items. */
export const endOfSlice = (index: number): boolean => index % ITEMS_PER_SLICE === ITEMS_PER_SLICE - 1;

export { nextTurn };

/**
 * Simulations of one job in flight at once, on every path that simulates: a wallet of thousands of
 * accounts (or a job of a thousand owners) is a hundred transactions, which must neither flood the
 * RPC nor build every message in one turn of the event loop (each lane builds one message, then
 * waits for its simulation).
 */
export const SIMULATIONS_AT_ONCE = 8;

/** Transactions compiled or signed in one turn of the event loop at most (a millisecond or so each). */
export const COMPILES_PER_SLICE = 8;

/** `items.map(map)`, a slice at a time: `perSlice` items (fewer when each is costlier, e.g. compiling a transaction). */
export async function mapInSlices<T, R>(items: readonly T[], map: (item: T) => R, perSlice = ITEMS_PER_SLICE): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i++) {
    results.push(map(items[i]!));
    if (i % perSlice === perSlice - 1) await nextTurn();
  }
  return results;
}

/**
 * `Promise.all(items.map(map))` with at most `limit` calls running at once: a plan of a hundred
 * transactions must not send a hundred simulations to the RPC at the same moment. After a failure
 * no new call starts, and the first failure is thrown.
 */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, map: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await map(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
