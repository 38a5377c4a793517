/**
 * Following landings as they happen: one open request (POST /api/transactions/statuses with
 * waitMs) for every transaction that is with the relay or sent but not confirmed, answered by the
 * server as soon as one of them lands; then again for those left. No poll per signature, no fixed
 * pause between rounds: each landing is seen within a server round (about 0.2 s).
 */
import { api, ApiError } from './api.ts';

/** waiting: not yet signed; signed: signed, not yet handed to the relay; sending: with the relay. */
export type TxState = 'waiting' | 'signed' | 'sending' | 'success' | 'failed' | 'pending';
export interface TxProgress {
  state: TxState;
  signature: string | null;
  error: string | null;
  /** Token accounts this transaction closes. */
  closes: number;
}

/** The server answers when one settles, or after this: then the page asks again with what is left. */
const WAIT_MS = 5_000;
/** The most signatures one status request takes. */
const MAX_SIGNATURES = 128;
/** After the last relay answered, transactions still pending are followed this long: past it, their blockhash has expired and the service says so. */
const FOLLOW_AFTER_RELAY_MS = 120_000;

const following = (t: TxProgress) => t.signature !== null && (t.state === 'sending' || t.state === 'pending');

export function followLandings(current: () => readonly TxProgress[], update: (index: number, change: Partial<TxProgress>) => void) {
  let relaysDone = false;
  let stopAt = Number.POSITIVE_INFINITY;
  let wake: (() => void) | null = null;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = (async () => {
    for (;;) {
      const all = current();
      const open = all.flatMap((t, i) => (following(t) ? [i] : [])).slice(0, MAX_SIGNATURES);
      if (open.length === 0) {
        if (relaysDone) return;
        // Nothing to follow yet (the first relay request is on its way): look again shortly.
        await pause(100);
        continue;
      }
      if (Date.now() > stopAt) return;
      try {
        const { transactions } = await api.statuses({ signatures: open.map((i) => all[i]!.signature!), waitMs: WAIT_MS });
        transactions.forEach((entry, k) => {
          const i = open[k]!;
          // Only news moves a transaction on: a landing, a failure, or processed (pending) after sending.
          if (entry.status === 'success' || entry.status === 'failed') update(i, { state: entry.status, error: entry.error });
          else if (entry.status === 'pending' && relaysDone && current()[i]!.state === 'sending') update(i, { state: 'pending' });
        });
      } catch (error) {
        // The relay's own answers still report every transaction: a status request that failed
        // only delays what the page learns early; a limit is waited out as the server asks.
        await pause(error instanceof ApiError && error.retryAfterSeconds !== null ? error.retryAfterSeconds * 1000 : 1_000);
      }
    }
  })();

  return {
    /** The relay requests are done: follow what is still pending, then end. */
    async finish(): Promise<void> {
      relaysDone = true;
      stopAt = Date.now() + FOLLOW_AFTER_RELAY_MS;
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
