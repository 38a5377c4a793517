/**
 * One tracker for every transaction in flight in this process (Solana's recommended landing loop,
 * shared): each transaction is sent with maxRetries 0 and its same signed bytes rebroadcast on
 * their own interval until it lands or its blockhash expires; every tick asks the RPC about all
 * pending signatures at once.
 *
 * Per tick, whatever the number of transactions in flight:
 * - one getSignatureStatuses per 256 pending signatures (the RPC's limit,
 *   MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS in solana-rpc-client-api), without
 *   searchTransactionHistory: a transaction sent moments ago is in the node's recent status cache;
 * - one getBlockHeight, only while some signature is still unknown to the node (to tell when its
 *   blockhash expired);
 * - for the signatures that expired, one last getSignatureStatuses with searchTransactionHistory
 *   before they are declared dead (the verdicts are src/chain/verdicts.ts's).
 *
 * With WebSocket subscriptions (SOLANA_WS_URL), each transaction is subscribed (signatureSubscribe)
 * before its first send and settles on its notification; a subscribed signature is still asked about
 * once per rebroadcast interval, in the same shared call, in case a notification is lost (a
 * subscription that fails falls back to polling every tick).
 *
 * Rebroadcasting identical bytes can never burn twice: the signature is the transaction's identity.
 * Nothing here assumes this service signed the transaction (relayed transactions use it too).
 */
import type { Signature } from '@solana/kit';
import type { Commitment } from '../config.ts';
import type { SendOutcome, SignatureStatus, SignedTransaction } from './types.ts';
import { expireUnknown, verdictOf, type StatusReader } from './verdicts.ts';

/** getSignatureStatuses accepts at most this many signatures per call. */
export const MAX_SIGNATURES_PER_STATUS_CALL = 256;
/** Sends that failed this many times without reaching the node end the attempt: nothing was sent. */
export const MAX_UNDELIVERED_SENDS = 3;

export interface SignatureTrackerOptions {
  commitment: Commitment;
  pollIntervalMs: number;
  rebroadcastIntervalMs: number;
  /** How long one tick's calls may take before the tick gives up (the next tick tries again). */
  tickTimeoutMs: number;
  /** One getSignatureStatuses of at most MAX_SIGNATURES_PER_STATUS_CALL signatures, without searchTransactionHistory. */
  getRecentStatuses(signatures: Signature[], deadline: number): Promise<(SignatureStatus | null)[]>;
  /** Statuses searching the whole history, of any number of signatures (the last look before "expired"). */
  getSignatureStatuses: StatusReader['getSignatureStatuses'];
  getBlockHeight(deadline: number): Promise<bigint>;
  /** One sendTransaction; throws on failure. */
  send(transaction: SignedTransaction, deadline: number): Promise<void>;
  /** True when the error proves the transaction never reached the node. */
  isUndelivered(error: unknown): boolean;
  /** The error for a transaction that could not be sent at all. */
  notSent(cause: unknown): Error;
  /**
   * WebSocket mode: subscribes to the signature reaching the commitment; resolves once the
   * subscription is in place, then calls `onLanded` once, or `onLost` when the subscription ends
   * without a notification. Rejects when it cannot subscribe.
   */
  subscribe?(
    signature: Signature,
    handlers: { onLanded(slot: bigint, err: unknown): void; onLost(): void },
    abortSignal: AbortSignal,
  ): Promise<void>;
  /** How long to wait for a subscription before sending without one. */
  subscribeTimeoutMs?: number;
}

interface Waiter {
  deadline: number;
  timer: NodeJS.Timeout;
  resolve(outcome: SendOutcome): void;
  reject(error: unknown): void;
}

interface Entry {
  transaction: SignedTransaction;
  waiters: Set<Waiter>;
  /** A send answered, or failed in a way that does not prove it never arrived: it may land. */
  possiblyDelivered: boolean;
  undeliveredSends: number;
  lastError: unknown;
  lastBroadcastAt: number;
  broadcasting: boolean;
  /** The node has seen it (a status, at any commitment): no rebroadcast needed while that holds. */
  seen: boolean;
  /** A WebSocket subscription watches it: polled only once per rebroadcast interval. */
  subscribed: boolean;
  lastPolledAt: number;
  stop: AbortController;
}

export interface SignatureTracker {
  /** Sends the transaction and resolves when it landed, expired, or the deadline passed (unknown). */
  track(transaction: SignedTransaction, deadline: number): Promise<SendOutcome>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createSignatureTracker(options: SignatureTrackerOptions): SignatureTracker {
  const entries = new Map<Signature, Entry>();
  let ticking = false;
  const historyReader: StatusReader = {
    commitment: options.commitment,
    getBlockHeight: options.getBlockHeight,
    getSignatureStatuses: options.getSignatureStatuses,
  };

  function settle(signature: Signature, outcome: SendOutcome | { error: unknown }): void {
    const entry = entries.get(signature);
    if (!entry) return;
    entries.delete(signature);
    entry.stop.abort();
    for (const waiter of entry.waiters) {
      clearTimeout(waiter.timer);
      if ('error' in outcome) waiter.reject(outcome.error);
      else waiter.resolve(outcome);
    }
  }

  /** The latest deadline among the callers waiting on this transaction. */
  const deadlineOf = (entry: Entry) => Math.max(...[...entry.waiters].map((w) => w.deadline));

  async function broadcast(signature: Signature, entry: Entry): Promise<void> {
    entry.broadcasting = true;
    entry.lastBroadcastAt = Date.now();
    try {
      await options.send(entry.transaction, deadlineOf(entry));
      entry.possiblyDelivered = true;
      // The interval counts from when the node had it: a send that waited for the budget or a slow
      // answer is not repeated the moment it arrives.
      entry.lastBroadcastAt = Date.now();
    } catch (error) {
      entry.lastError = error;
      if (!options.isUndelivered(error)) entry.possiblyDelivered = true;
      else if (!entry.possiblyDelivered && ++entry.undeliveredSends >= MAX_UNDELIVERED_SENDS) {
        settle(signature, { error: options.notSent(error) });
      }
      // Otherwise the next rebroadcast tries again, and a status may still find it.
    } finally {
      entry.broadcasting = false;
    }
  }

  /** The subscription first (a notification is only sent for what happens after it), then the send. */
  async function subscribeThenBroadcast(signature: Signature, entry: Entry): Promise<void> {
    if (options.subscribe) {
      const subscribed = options.subscribe(
        signature,
        {
          onLanded: (slot, err) => settle(signature, { kind: 'landed', slot, err }),
          onLost: () => {
            entry.subscribed = false;
          },
        },
        entry.stop.signal,
      );
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), options.subscribeTimeoutMs ?? 2000);
      });
      try {
        // Without a subscription in time, send anyway: polling watches it.
        entry.subscribed = await Promise.race([subscribed.then(() => true), timedOut]);
      } catch {
        entry.subscribed = false;
      } finally {
        clearTimeout(timer);
      }
      if (!entries.has(signature)) return; // settled or given up meanwhile
    }
    await broadcast(signature, entry);
  }

  async function tick(): Promise<void> {
    const now = Date.now();
    const deadline = now + options.tickTimeoutMs;
    const pending = [...entries].filter(
      ([, entry]) => entry.possiblyDelivered && (!entry.subscribed || now - entry.lastPolledAt >= options.rebroadcastIntervalMs),
    );
    for (const [, entry] of pending) entry.lastPolledAt = now;
    const unknown: [Signature, Entry][] = [];
    for (let i = 0; i < pending.length; i += MAX_SIGNATURES_PER_STATUS_CALL) {
      const chunk = pending.slice(i, i + MAX_SIGNATURES_PER_STATUS_CALL);
      const statuses = await options.getRecentStatuses(chunk.map(([signature]) => signature), deadline);
      chunk.forEach(([signature, entry], j) => {
        const verdict = verdictOf(statuses[j] ?? null, options.commitment);
        if (verdict.kind === 'landed') settle(signature, verdict);
        else {
          // In a block below the commitment: seen. None (again): it may have been dropped, or was
          // on a fork that lost: rebroadcast.
          entry.seen = verdict.kind === 'processed';
          if (verdict.kind === 'unknown') unknown.push([signature, entry]);
        }
      });
    }

    // The unknown ones whose blockhash expired get one last look with the whole history before
    // they are declared dead (src/chain/verdicts.ts).
    const verdicts = await expireUnknown(
      historyReader,
      unknown.map(([signature, entry]) => ({ signature, lastValidBlockHeight: entry.transaction.lastValidBlockHeight })),
      deadline,
    );
    unknown.forEach(([signature, entry], i) => {
      const verdict = verdicts[i]!;
      if (verdict.kind === 'landed' || verdict.kind === 'expired') settle(signature, verdict);
      else if (verdict.kind === 'processed') entry.seen = true;
    });
  }

  function rebroadcastDue(): void {
    const now = Date.now();
    for (const [signature, entry] of entries) {
      if (!entry.seen && !entry.broadcasting && now - entry.lastBroadcastAt >= options.rebroadcastIntervalMs) {
        void broadcast(signature, entry);
      }
    }
  }

  async function run(): Promise<void> {
    if (ticking) return;
    ticking = true;
    try {
      while (entries.size > 0) {
        await sleep(options.pollIntervalMs);
        try {
          await tick();
        } catch {
          // RPC trouble while confirming: the next tick tries again, until each caller's deadline.
        }
        rebroadcastDue();
      }
    } finally {
      ticking = false;
    }
  }

  return {
    track(transaction, deadline) {
      return new Promise<SendOutcome>((resolve, reject) => {
        const { signature } = transaction;
        let entry = entries.get(signature);
        const isNew = !entry;
        if (!entry) {
          entry = {
            transaction,
            waiters: new Set(),
            possiblyDelivered: false,
            undeliveredSends: 0,
            lastError: undefined,
            // The first send is subscribeThenBroadcast's; the tick's rebroadcasts start an interval later.
            lastBroadcastAt: Date.now(),
            broadcasting: false,
            seen: false,
            subscribed: false,
            lastPolledAt: Date.now(),
            stop: new AbortController(),
          };
          entries.set(signature, entry);
        }
        const tracked = entry;
        const waiter: Waiter = {
          deadline,
          resolve,
          reject,
          // The deadline passed: this caller stops waiting (the others, if any, keep tracking it).
          timer: setTimeout(() => {
            tracked.waiters.delete(waiter);
            if (tracked.waiters.size === 0 && entries.get(signature) === tracked) {
              entries.delete(signature);
              tracked.stop.abort();
            }
            // A send still under way may have reached the node: that is "unknown", never "not sent".
            if (tracked.possiblyDelivered || tracked.broadcasting) resolve({ kind: 'unknown' });
            else reject(options.notSent(tracked.lastError));
          }, Math.max(0, deadline - Date.now())),
        };
        tracked.waiters.add(waiter);
        if (isNew) void subscribeThenBroadcast(signature, tracked);
        void run();
      });
    },
  };
}
