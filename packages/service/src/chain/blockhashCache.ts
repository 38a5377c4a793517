/**
 * One recent blockhash for every transaction this process builds: fetched once (concurrent callers
 * share one getLatestBlockhash), handed out while it is young, refreshed in the background once it
 * is a few seconds old, and dropped once too much of its lifetime is used up, by time or by blocks.
 *
 * A blockhash is valid until the block height passes its lastValidBlockHeight (150 blocks after
 * the block it names, about a minute), so a transaction signed with a hash from this cache keeps at
 * least MIN_REMAINING_BLOCKS blocks, and at least most of a minute, to land.
 */
import type { BlockhashLifetime } from './types.ts';

export interface BlockhashCacheOptions {
  /** getLatestBlockhash, with the slot of its answer (context.slot). */
  fetch(deadline: number): Promise<{ lifetime: BlockhashLifetime; slot: bigint }>;
  /** Older than this: still handed out, and refreshed in the background. */
  refreshAfterMs?: number;
  /** Older than this: never handed out; callers wait for a fresh one. */
  maxAgeMs?: number;
  /** A hash with fewer blocks than this left before its lastValidBlockHeight is never handed out. */
  minRemainingBlocks?: bigint;
  /**
   * A hash fetched more than this many slots ago (seen in any answer's context.slot) is never
   * handed out: the block height grows by at most one per slot, so this bounds the blocks it used
   * even on a chain whose slots are faster than the clock bounds assume.
   */
  maxAgeSlots?: bigint;
}

export interface BlockhashCache {
  get(deadline: number): Promise<BlockhashLifetime>;
  /** Tells the cache the chain's current block height (seen by anyone), so an ageing hash is dropped. */
  observeBlockHeight(blockHeight: bigint): void;
  /** Tells the cache a slot the RPC answered at (context.slot of any answer). */
  observeSlot(slot: bigint): void;
}

export function createBlockhashCache(options: BlockhashCacheOptions): BlockhashCache {
  const refreshAfterMs = options.refreshAfterMs ?? 5_000;
  const maxAgeMs = options.maxAgeMs ?? 20_000;
  const minRemainingBlocks = options.minRemainingBlocks ?? 100n;
  const maxAgeSlots = options.maxAgeSlots ?? 50n;
  let cached: { lifetime: BlockhashLifetime; fetchedAt: number; slot: bigint } | undefined;
  /** The one getLatestBlockhash under way, and the deadline of the caller that started it. */
  let inFlight: { promise: Promise<BlockhashLifetime>; deadline: number } | undefined;
  let highestBlockHeight = 0n;
  let highestSlot = 0n;

  const usable = (entry: { lifetime: BlockhashLifetime; slot: bigint }) =>
    entry.lifetime.lastValidBlockHeight - highestBlockHeight >= minRemainingBlocks && highestSlot - entry.slot <= maxAgeSlots;

  function startFetch(deadline: number): { promise: Promise<BlockhashLifetime>; deadline: number } {
    const promise = options
      .fetch(deadline)
      .then(({ lifetime, slot }) => {
        cached = { lifetime, fetchedAt: Date.now(), slot };
        if (slot > highestSlot) highestSlot = slot;
        return lifetime;
      })
      .finally(() => {
        if (inFlight?.promise === promise) inFlight = undefined;
      });
    return { promise, deadline };
  }

  async function refresh(deadline: number): Promise<BlockhashLifetime> {
    const shared = (inFlight ??= startFetch(deadline));
    try {
      return await shared.promise;
    } catch (error) {
      // A shared fetch runs on the time of the caller that started it (an earlier request, or a
      // background refresh). When it gives up, a caller with time left tries again on its own time
      // instead of failing with someone else's deadline.
      if (shared.deadline < deadline && Date.now() < deadline) return refresh(deadline);
      throw error;
    }
  }

  return {
    async get(deadline) {
      if (cached) {
        const age = Date.now() - cached.fetchedAt;
        if (age < maxAgeMs && usable(cached)) {
          // Stale-while-revalidate: a failed background refresh only means the next caller fetches.
          if (age >= refreshAfterMs) refresh(deadline).catch(() => undefined);
          return cached.lifetime;
        }
        cached = undefined;
      }
      return refresh(deadline);
    },

    observeBlockHeight(blockHeight) {
      if (blockHeight > highestBlockHeight) highestBlockHeight = blockHeight;
      if (cached && !usable(cached)) cached = undefined;
    },

    observeSlot(slot) {
      if (slot > highestSlot) highestSlot = slot;
      if (cached && !usable(cached)) cached = undefined;
    },
  };
}
