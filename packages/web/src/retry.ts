/**
 * Waiting out a rate limit by itself: a 429 (or a 503 with Retry-After) was refused before anything
 * was done, so asking again after the time the server names is always safe. While it waits, the
 * page is told every second how long is left, so the person sees a countdown and never a "retry
 * in 47 s" that stays on the screen.
 */
import { ApiError } from './api.ts';

/** Seconds left before the next try, ticking down; null once it is trying again. */
export type Countdown = (secondsLeft: number | null) => void;

/** Whether an error is a refusal worth waiting out (the server said when to come back). */
export const isLimit = (error: unknown): error is ApiError =>
  error instanceof ApiError && (error.status === 429 || (error.status === 503 && error.retryAfterSeconds !== null));

/** Counts `seconds` down through `tell`, one tick a second. */
export async function countDown(seconds: number, tell: Countdown): Promise<void> {
  for (let left = Math.max(1, Math.ceil(seconds)); left > 0; left--) {
    tell(left);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  tell(null);
}

/** Calls `attempt` until it is not refused by a limit, counting down between tries. */
export async function retryingLimits<T>(attempt: () => Promise<T>, tell: Countdown): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isLimit(error)) throw error;
      await countDown(error.retryAfterSeconds ?? 5, tell);
    }
  }
}
