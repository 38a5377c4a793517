/**
 * Prometheus metrics (prom-client). Each app has its own Registry, so several apps in one process
 * (the tests) never share counters. They are recorded and served (`GET /metrics`) by
 * src/http/routes/metrics.ts.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ChainAdapter } from './chain/types.ts';

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly burns: Counter<'outcome'>;
  readonly lamportsReclaimed: Counter;
  readonly walletsGenerated: Counter;
  readonly rpcCalls: Counter<'method'>;
  readonly rpcRequests: Counter<'method' | 'outcome'>;
  readonly rpcErrors: Counter<'method'>;
  readonly rpcDuration: Histogram<'method'>;
  readonly rateLimitRejections: Counter<'route' | 'limit'>;
  readonly rateLimitFailOpen: Counter<'route'>;
  readonly idempotency: Counter<'result'>;
  readonly redisErrors: Counter<'operation'>;
  /** The fee sponsor's balance (SPONSOR_KEYPAIR), as last read; absent from the output without a sponsor. */
  readonly sponsorLamports: Gauge;
  /** Fees the sponsor paid for sponsored transactions that failed on chain (never repaid). */
  readonly sponsorLamportsLost: Counter;
  readonly sponsorFailedTransactions: Counter;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    // prom-client's process and Node.js metrics, from the first scrape on rather than from the
    // start: collecting them starts an event-loop delay monitor (a timer that wakes the process
    // every 10 ms) and a GC observer, work an instance nobody scrapes has no use for. Their
    // counters (GC pauses, event-loop delay) count from that first scrape.
    const scrape = registry.metrics.bind(registry);
    let collecting = false;
    registry.metrics = async () => {
      if (!collecting) {
        collecting = true;
        collectDefaultMetrics({ register: registry, prefix: 'cinder_' });
      }
      return scrape();
    };
  }
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'cinder_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'cinder_http_request_duration_seconds',
      help: 'Time from the request to the response, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    burns: new Counter({
      name: 'cinder_burns_total',
      help: 'Burn requests by outcome: success, failed, pending (sent, fate unknown), rejected (4xx, nothing sent), error (5xx); replays of an Idempotency-Key are not counted',
      labelNames: ['outcome'],
      registers,
    }),
    lamportsReclaimed: new Counter({
      name: 'cinder_lamports_reclaimed_total',
      help: 'Rent lamports returned to owners by burns that landed',
      registers,
    }),
    walletsGenerated: new Counter({
      name: 'cinder_wallets_generated_total',
      help: 'Wallets (keypairs) returned by generate_wallets',
      registers,
    }),
    rpcCalls: new Counter({
      name: 'cinder_rpc_calls_total',
      help: 'Solana JSON-RPC operations by method (one operation includes its retries, polls and rebroadcasts)',
      labelNames: ['method'],
      registers,
    }),
    rpcRequests: new Counter({
      name: 'cinder_rpc_requests_total',
      help: 'JSON-RPC requests that left for the RPC provider (what it bills), by method and outcome: ok, refused (429), error',
      labelNames: ['method', 'outcome'],
      registers,
    }),
    rpcErrors: new Counter({
      name: 'cinder_rpc_errors_total',
      help: 'Solana JSON-RPC operations that failed, by method',
      labelNames: ['method'],
      registers,
    }),
    rpcDuration: new Histogram({
      name: 'cinder_rpc_duration_seconds',
      help: 'Duration of Solana JSON-RPC operations by method',
      labelNames: ['method'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'cinder_rate_limit_rejections_total',
      help: 'Requests answered 429, by route and by the limit that was reached (requests or wallets)',
      labelNames: ['route', 'limit'],
      registers,
    }),
    rateLimitFailOpen: new Counter({
      name: 'cinder_rate_limit_fail_open_total',
      help: 'Requests let through without a rate-limit check because the counter store (Redis) failed',
      labelNames: ['route'],
      registers,
    }),
    idempotency: new Counter({
      name: 'cinder_idempotency_total',
      help: 'Burn requests with an Idempotency-Key by result: executed, replayed, in_progress, reused, unavailable',
      labelNames: ['result'],
      registers,
    }),
    redisErrors: new Counter({
      name: 'cinder_redis_errors_total',
      help: 'Redis failures by operation (connection, rate_limit, idempotency)',
      labelNames: ['operation'],
      registers,
    }),
    // Registered only once a sponsor's balance is known (src/operations/sponsorMonitor.ts).
    sponsorLamports: new Gauge({
      name: 'cinder_sponsor_balance_lamports',
      help: 'Lamports held by the fee sponsor (SPONSOR_KEYPAIR), as last read from the chain',
      registers: [],
    }),
    sponsorLamportsLost: new Counter({
      name: 'cinder_sponsor_lamports_lost_total',
      help: 'Lamports the fee sponsor paid in fees of sponsored transactions that failed on chain (not repaid)',
      registers,
    }),
    sponsorFailedTransactions: new Counter({
      name: 'cinder_sponsor_failed_transactions_total',
      help: 'Sponsored transactions that failed on chain (each cost the fee sponsor its fee)',
      registers,
    }),
  };
}

/** Adapter operations named by the JSON-RPC method they call. */
const RPC_METHOD_OF: Record<string, string> = {
  getAccounts: 'getMultipleAccounts',
  getTokenAccountsByOwner: 'getTokenAccountsByOwner',
  getBalance: 'getBalance',
  getLatestBlockhash: 'getLatestBlockhash',
  simulate: 'simulateTransaction',
  sendAndConfirm: 'sendTransaction',
  getSignatureStatuses: 'getSignatureStatuses',
  isHealthy: 'healthCheck',
};

/**
 * The chain adapter with every operation counted and timed. A Proxy, so operations added to the
 * adapter later are counted too (under their own name). A send whose fate is unknown and a health
 * check that fails count as errors.
 */
export function instrumentChain(chain: ChainAdapter, metrics: Metrics): ChainAdapter {
  // Operations share requests (batched reads, one status query for every signature in flight):
  // the requests themselves are counted where they leave, in the adapter's transport.
  chain.onRpcRequest?.((method, outcome) => metrics.rpcRequests.inc({ method, outcome }));
  return new Proxy(chain, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'onRpcRequest') return value;
      const method = RPC_METHOD_OF[property] ?? property;
      return async (...args: unknown[]) => {
        metrics.rpcCalls.inc({ method });
        const stop = metrics.rpcDuration.startTimer({ method });
        try {
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          const failed =
            (property === 'isHealthy' && result === false) ||
            (property === 'sendAndConfirm' && (result as { kind?: string } | null)?.kind === 'unknown');
          if (failed) metrics.rpcErrors.inc({ method });
          return result;
        } catch (error) {
          metrics.rpcErrors.inc({ method });
          throw error;
        } finally {
          stop();
        }
      };
    },
  });
}
