/**
 * Rate limits (contract, "Rate limits (429)"), per client and per route, fixed one-minute windows.
 *
 * - Request counts come from @fastify/rate-limit (`createRateLimit`): its Redis store (one Lua
 *   script, INCR + PEXPIRE) when REDIS_URL is set, its in-memory LRU store otherwise. The key is
 *   `<bucket>|<client>`, the client being the API key's id when a valid key was presented, else
 *   the IP address (`request.ip`: TRUST_PROXY decides whether X-Forwarded-For counts).
 * - generate_wallets also has a budget of wallets per minute that counts `n`, not requests
 *   (src/store/windowCounter.ts, same store choice). A request whose `n` does not fit what is left
 *   is refused and uses nothing.
 *
 * Every /api response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds);
 * on generate_wallets they describe whichever limit is closer to running out. A 429 is problem+json
 * RATE_LIMITED with Retry-After. If the counter store fails (Redis unreachable) the request goes
 * through without a check and without RateLimit-* headers: an error log (at most one line per 10 s),
 * `cinder_redis_errors_total{operation="rate_limit"}` and `cinder_rate_limit_fail_open_total`.
 */
import rateLimitPlugin from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CinderApp } from './types.ts';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { throttledLog } from '../store/redis.ts';
import type { WindowCounter } from '../store/windowCounter.ts';
import { isApiRequest } from './auth.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export type Bucket = 'burn' | 'generate' | 'status';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request-count state, set by the onRequest check, read by the wallets budget. */
    cinderRateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
  }
}

export interface RateLimitDeps {
  config: Pick<Config, 'rateLimit' | 'rateLimitStatusPerMin' | 'maxWalletsPerRequest'>;
  logger: Logger;
  metrics: Metrics;
  /** Shared counters; null: this process's memory. */
  redis: Redis | null;
  walletBudget: WindowCounter;
}

/** Which limit a request counts against; null for paths outside /api. */
export function bucketOf(request: FastifyRequest): Bucket | null {
  if (!isApiRequest(request)) return null;
  switch (request.routeOptions.url) {
    // Every door of the burn pipeline reads the chain and simulates (and most send): one budget.
    case '/api/burn_tokens':
    case '/api/reclaim_rent':
    case '/api/burn_tokens/prepare':
    case '/api/reclaim_rent/prepare':
    case '/api/transactions':
      return 'burn';
    case '/api/generate_wallets':
      return 'generate';
    default:
      // GET /api/transactions/{signature} and anything else under /api (404s included)
      return 'status';
  }
}

const BUCKET_NAMES: Record<Bucket, string> = {
  burn: 'burn requests',
  generate: 'generate_wallets requests',
  status: 'requests',
};

function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  reply.header('ratelimit-limit', limit).header('ratelimit-remaining', Math.max(0, remaining)).header('ratelimit-reset', resetSeconds);
}

const toSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export async function registerRateLimits(app: CinderApp, deps: RateLimitDeps): Promise<void> {
  const { config, metrics } = deps;
  const limits: Record<Bucket, number> = {
    burn: config.rateLimit.burnPerMin,
    generate: config.rateLimit.generatePerMin,
    status: config.rateLimitStatusPerMin,
  };
  const logFailure = throttledLog(deps.logger);

  await app.register(rateLimitPlugin, {
    global: false, // no route gets the plugin's own hooks: the checks below use createRateLimit
    timeWindow: RATE_LIMIT_WINDOW_MS,
    max: (request: FastifyRequest) => limits[bucketOf(request) ?? 'status'],
    keyGenerator: (request: FastifyRequest) => `${bucketOf(request) ?? 'status'}|${request.cinderClient}`,
    skipOnError: false, // a store failure reaches the hook below, which logs it, counts it and lets the request through
    cache: 100_000,
    ...(deps.redis ? { redis: deps.redis, nameSpace: 'cinder:rl:' } : {}),
  });
  const countRequest = app.createRateLimit();

  function failOpen(request: FastifyRequest, bucket: Bucket, error: unknown) {
    metrics.redisErrors.inc({ operation: 'rate_limit' });
    metrics.rateLimitFailOpen.inc({ route: bucket });
    const err = error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) };
    logFailure({ err, reqId: request.id }, 'rate-limit store unavailable (Redis): failing open, requests are not rate limited');
  }

  app.decorateRequest('cinderRateLimit', null);

  app.addHook('onRequest', async (request, reply) => {
    const bucket = bucketOf(request);
    if (!bucket) return;
    let result: Awaited<ReturnType<typeof countRequest>>;
    try {
      result = await countRequest(request);
    } catch (error) {
      failOpen(request, bucket, error);
      return;
    }
    if (result.isAllowed) return; // no allow list is configured
    const resetSeconds = toSeconds(result.ttl);
    request.cinderRateLimit = { limit: result.max, remaining: result.remaining, resetSeconds };
    setHeaders(reply, result.max, result.remaining, resetSeconds);
    if (result.isExceeded) {
      metrics.rateLimitRejections.inc({ route: bucket, limit: 'requests' });
      throw new CinderError(
        'RATE_LIMITED',
        `Rate limit reached: ${result.max} ${BUCKET_NAMES[bucket]} per minute for this client. Retry in ${resetSeconds} s.`,
        { headers: { 'retry-after': String(resetSeconds) } },
      );
    }
  });

  // The wallets budget needs `n`, so it runs once the query string is validated. Requests that
  // the route will refuse (bad n) are left to it and use nothing.
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url !== '/api/generate_wallets' || request.validationError) return;
    const n = Number((request.query as { n?: unknown }).n);
    if (!Number.isSafeInteger(n) || n < 1 || n > config.maxWalletsPerRequest) return;
    const max = config.rateLimit.walletsPerMin;
    let taken: Awaited<ReturnType<WindowCounter['take']>>;
    try {
      taken = await deps.walletBudget.take(`wallets|${request.cinderClient}`, n, max, RATE_LIMIT_WINDOW_MS);
    } catch (error) {
      failOpen(request, 'generate', error);
      return;
    }
    const resetSeconds = toSeconds(taken.ttlMs);
    const left = max - taken.used;
    if (!taken.allowed) {
      setHeaders(reply, max, left, resetSeconds);
      metrics.rateLimitRejections.inc({ route: 'generate', limit: 'wallets' });
      throw new CinderError(
        'RATE_LIMITED',
        n > max
          ? `n=${n} is more than the budget of ${max} wallets per minute per client. Ask for fewer wallets.`
          : `Wallet budget reached: ${max} wallets per minute for this client, ${left} left in this window and n=${n} asked. Retry in ${resetSeconds} s.`,
        { headers: { 'retry-after': String(resetSeconds) } },
      );
    }
    // The headers describe the limit closer to running out.
    const requests = request.cinderRateLimit;
    if (!requests || left / max < requests.remaining / requests.limit) setHeaders(reply, max, left, resetSeconds);
  });
}
