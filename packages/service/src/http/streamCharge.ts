/**
 * The wallets budget of a streamed generate_wallets request (docs/api-keys-and-limits.md): charged
 * as the wallets are made, not up front. A JSON answer must fit the budget at once (or it is a 429),
 * but a stream of a million wallets cannot, and need not: its client reads as it goes. So the
 * stream takes its wallets from the same window counter (Redis or memory) in chunks, just before
 * they are made, and when the client's budget for the window is spent it waits, connection open,
 * for the window to reset: the stream's progress pauses, and resumes at the client's budget pace.
 * Other clients' windows are their own. A client that disconnects aborts the wait (and the work).
 */
import type { TakeResult } from '../store/windowCounter.ts';

/** Wallets taken from the window counter at a time: one counter call per chunk, not per wallet. */
export const STREAM_CHARGE_CHUNK = 1000;

export interface StreamChargeOptions {
  /** Takes `units` from this client's wallets window (the counter's take, bound to key, max and window). */
  take(units: number): Promise<TakeResult>;
  /** The budget of one window (RATE_LIMIT_WALLETS_PER_MIN). */
  max: number;
  /** The wallets of the whole stream (n): never charged beyond them. */
  total: number;
  chunk?: number;
  /** Waits `ms` (until the window resets), rejecting when `signal` aborts. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void>;
  /** The counter failed (Redis unreachable): the rest of the stream is not charged, as any request then fails open. */
  onStoreError(error: unknown): void;
  /** Told each time the stream waits for its window to reset. */
  onPause?: ((ms: number) => void) | undefined;
}

/**
 * `charge(wallets, signal)` resolves once `wallets` more are paid for: from the chunk already taken
 * when it covers them, else by taking the next chunks (a chunk never more than what the window has
 * left, so a window's last units are used), waiting for the next window when nothing is left.
 */
export type StreamCharge = (wallets: number, signal?: AbortSignal) => Promise<void>;

export function createStreamCharge(options: StreamChargeOptions): StreamCharge {
  const { max, total } = options;
  const chunk = Math.max(1, options.chunk ?? STREAM_CHARGE_CHUNK);
  let paid = 0;
  let used = 0;
  /** What the window had left at the last take (max until one says otherwise). */
  let left = max;
  let failedOpen = false;
  return async (wallets, signal) => {
    used += wallets;
    while (paid < used && !failedOpen) {
      if (left <= 0) {
        left = max;
        continue;
      }
      const units = Math.min(chunk, total - paid, left);
      if (units <= 0) return; // more made than the stream's n: nothing more is charged
      let taken: TakeResult;
      try {
        taken = await options.take(units);
      } catch (error) {
        failedOpen = true;
        options.onStoreError(error);
        return;
      }
      left = max - taken.used;
      if (taken.allowed) {
        paid += units;
      } else if (left <= 0) {
        // This client's window is spent: wait for it to reset, the connection open.
        const ms = Math.max(1, taken.ttlMs);
        options.onPause?.(ms);
        await options.wait(ms, signal);
        left = max;
      }
      // Refused with some units left (another request of this client took the rest): take those.
    }
  };
}
