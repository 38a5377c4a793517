/**
 * How `cinder reclaim --keys-file F --fee-payer K --destination A` (./reclaimMany.ts) lands the
 * transactions it signed: the relay groups go out together, a bounded number at a time, and each
 * transaction is followed to its end (landed, failed on chain, or unable to land) before the job
 * may prepare its accounts again. What one job's state file says of each transaction is typed here.
 */
import { CinderApiError, type CinderClient } from '../index.ts';

/**
 * Relay requests in flight at once. Each holds at most 8 transactions (the relay's limit), so 16
 * requests put at most 128 transactions in flight: what one status request follows
 * (POST /api/transactions/statuses takes 128), and far below the service's open connections per
 * client (MAX_CONNECTIONS_PER_CLIENT, 128 by default). The relays of prepared messages are not
 * counted against the burn budget (the prepare was), so no rate limit refuses them; a service
 * with a tight RPC budget queues the work instead of refusing it (SOLANA_RPC_MAX_RPS).
 * At a real cluster's pace a relay answers about 1.3 s after it was sent, so the 25 relay requests
 * of a 1,000-wallet fleet take two such waits instead of 25.
 */
export const RELAYS_AT_ONCE = 16;
/** How long one status request waits for a landing before the client asks again (the server's limit is 10 s). */
const SETTLE_WAIT_MS = 5_000;
/** Signatures per status request (the server takes up to 128). */
const STATUS_BATCH = 128;

/**
 * `sent`: recorded before the relay, outcome not known yet; `dropped`: it did nothing and can no
 * longer land (the service refused it, nothing sent; or its blockhash expired before it landed).
 * `failed`: it landed with an error on chain (its fee was paid).
 */
export type Outcome = 'sent' | 'success' | 'failed' | 'pending' | 'dropped';

export interface StateTransaction {
  signature: string;
  owners: string[];
  closedAccounts: string[];
  feeLamports: string;
  /** The signed transaction (base64) and its relayToken: what a resumed run relays again when the service never received it. */
  wire: string;
  relayToken: string;
  /** After this block height it can no longer land. */
  lastValidBlockHeight: string;
  status: Outcome;
}

export const isSettled = (status: Outcome) => status === 'success' || status === 'failed' || status === 'dropped';

/**
 * A status of the relay or of the status route as a settled outcome, or null while it may still
 * land. A failure without a slot did nothing: its blockhash expired before it landed, or it never
 * left the service (the server reports those without a slot; a failure on chain has its block's).
 */
function outcomeOf(status: string, slot: number | null | undefined): Outcome | null {
  if (status === 'success') return 'success';
  if (status === 'failed') return slot === null || slot === undefined ? 'dropped' : 'failed';
  if (status === 'dropped') return 'dropped';
  return null;
}

/**
 * Waits until the service knows the outcome of each transaction: landed (success / failed), or no
 * longer able to land (dropped: its blockhash expired). All of them are followed in one open status
 * request per 128 (POST /api/transactions/statuses, answered as soon as one settles), not one poll
 * each. One the service has no record of (never received, or still on its way from an interrupted
 * run) is relayed again, the same signed bytes: whichever copy arrives first is the only one that
 * can land. A copy the service refuses (its relayToken expired, which happens after its blockhash
 * did; a rule it breaks) cannot land either: `dropped`. `onSettled` is told of each as it settles.
 */
export async function settleAll(client: CinderClient, records: readonly StateTransaction[], onSettled: (record: StateTransaction) => Promise<void>): Promise<void> {
  let open = [...records];
  while (open.length > 0) {
    const batch = open.slice(0, STATUS_BATCH);
    const statuses = await client.getTransactions(
      batch.map((r) => r.signature),
      { waitMs: SETTLE_WAIT_MS },
    );
    for (const [i, entry] of statuses.entries()) {
      const record = batch[i]!;
      const outcome = entry.status === 'unknown' ? await relayAgain(client, record) : outcomeOf(entry.status, entry.slot);
      if (outcome !== null) {
        record.status = outcome;
        await onSettled(record);
      }
    }
    open = open.filter((r) => !isSettled(r.status));
  }
}

/** Relays a transaction the service does not know again; its outcome then (null: still pending), or `dropped` when the service refuses it. */
async function relayAgain(client: CinderClient, record: StateTransaction): Promise<Outcome | null> {
  try {
    const relayed = await client.relay({ transactions: [record.wire], relayToken: record.relayToken });
    const report = relayed.details?.transactions[0];
    return report ? outcomeOf(report.status, report.slot) : null;
  } catch (refusal) {
    if (refusal instanceof CinderApiError && refusal.status === 400) return 'dropped';
    throw refusal;
  }
}

/** One relay request: transactions sharing one relayToken (at most 8), in the prepare's order. */
export interface RelayGroup {
  records: StateTransaction[];
  relayToken: string;
}

/** Relays groups, at most `atOnce` requests in flight however many parts hand theirs over. */
export interface RelayPool {
  /**
   * Relays these groups as requests free up, in the order handed over, and settles each of their
   * transactions; resolves once none of them can still land. Rejects (after the requests already
   * under way have ended) when the service cannot be reached; the pool then takes no new group.
   */
  relay(groups: readonly RelayGroup[]): Promise<void>;
}

/**
 * One pool for a whole job, so that the parts of a fleet prepared one after another share its
 * bound on requests in flight (RELAYS_AT_ONCE) instead of each adding its own: the bound is what
 * keeps one status request able to follow everything in flight and the client far below the
 * service's open connections per client.
 *
 * A group the service refuses (any 4xx: it checks every transaction before it sends one, so
 * nothing of a refused request was sent) is `dropped`: its blockhash had expired by then (the
 * service simulates first, and a simulation with an expired blockhash fails), or a rule refused it;
 * either way it did nothing, and its wallets can be prepared again. A relay with no answer (the
 * network, or a 5xx after the SDK's retries) may have been sent: it is followed like a pending one
 * (settleAll), by the request's own slot, so that when relay() resolves nothing of its groups can
 * still land.
 */
export function createRelayPool(client: CinderClient, options: { atOnce: number; onSettled: (record: StateTransaction) => Promise<void> }): RelayPool {
  let free = options.atOnce;
  const queue: (() => void)[] = [];
  /** Set when a request fails (the service cannot be reached): no new group is taken, so the command stops with what is recorded. */
  let stopped = false;
  const acquire = () =>
    free > 0
      ? ((free -= 1), Promise.resolve())
      : new Promise<void>((take) => {
          queue.push(take);
        });
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else free += 1;
  };
  const settle = async (record: StateTransaction, outcome: Outcome) => {
    record.status = outcome;
    await options.onSettled(record);
  };

  async function relayGroup(group: RelayGroup): Promise<void> {
    let answer: Awaited<ReturnType<CinderClient['relay']>> | null = null;
    try {
      answer = await client.relay({ transactions: group.records.map((r) => r.wire), relayToken: group.relayToken });
    } catch (error) {
      if (error instanceof CinderApiError && error.status >= 400 && error.status < 500) {
        for (const record of group.records) await settle(record, 'dropped');
        return;
      }
      // No answer: the relay may have sent them. Followed below (one unknown to the service is relayed again, same bytes).
    }
    const waiting: StateTransaction[] = [];
    for (const [k, record] of group.records.entries()) {
      const reports = answer?.details?.transactions;
      const report = reports?.find((r) => r.signature === record.signature) ?? reports?.[k];
      const outcome = report ? outcomeOf(report.status, report.slot) : null;
      if (outcome !== null) await settle(record, outcome);
      else waiting.push(record);
    }
    await settleAll(client, waiting, options.onSettled);
  }

  async function inTurn(group: RelayGroup): Promise<void> {
    await acquire();
    try {
      // A group not sent because the pool stopped stays `sent` in the state: a resumed run settles it.
      if (!stopped) await relayGroup(group);
    } catch (error) {
      stopped = true;
      throw error;
    } finally {
      release();
    }
  }

  return {
    async relay(groups) {
      const ends = await Promise.allSettled(groups.map(inTurn));
      const failure = ends.find((end) => end.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}
