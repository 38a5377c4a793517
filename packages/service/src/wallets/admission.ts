/**
 * Caps on what runs at once in generate_wallets, per client and in total: open streams and
 * running vanity searches (docs/wallets.md, "Sharing the pool"). Their cost is not the wallets they
 * count (a stream of a million holds only a window of batches, a vanity search of one runs on
 * the pool until it finds it or VANITY_MAX_MS), so the wallets budget and the queue's share do not
 * bound them: these do. Beyond a client's cap, 429 RATE_LIMITED; beyond the total, 503
 * SERVICE_UNAVAILABLE; both with Retry-After, both before any work, and nothing is taken.
 */
import { CinderError } from '../errors.ts';

export interface RunningCaps {
  /** Takes a place for `client`; the returned function gives it back (once, however often called). */
  acquire(client: string): () => void;
  /** Places taken: in all, and by one client. */
  running(client?: string): number;
}

/** `what`: the plural noun of the refusal ("wallet streams"); `perClientName`, `totalName`: the variables that set the caps. */
export function createRunningCaps(options: { perClient: number; total: number; what: string; perClientName: string; totalName: string; retryAfterSeconds?: number }): RunningCaps {
  const { perClient, total, what } = options;
  const retryAfter = String(options.retryAfterSeconds ?? 5);
  const byClient = new Map<string, number>();
  let all = 0;
  return {
    acquire(client) {
      const own = byClient.get(client) ?? 0;
      if (own >= perClient) {
        throw new CinderError('RATE_LIMITED', { reason: 'open', open: own, what, perClient, setting: options.perClientName }, { headers: { 'retry-after': retryAfter } });
      }
      if (all >= total) {
        throw new CinderError('SERVICE_UNAVAILABLE', { reason: 'open', open: all, what, setting: options.totalName }, { headers: { 'retry-after': retryAfter } });
      }
      byClient.set(client, own + 1);
      all++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        all--;
        const left = (byClient.get(client) ?? 1) - 1;
        if (left === 0) byClient.delete(client);
        else byClient.set(client, left);
      };
    },
    running: (client) => (client === undefined ? all : (byClient.get(client) ?? 0)),
  };
}
