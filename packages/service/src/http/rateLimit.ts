/**
 * Rate limits (docs/api-keys-and-limits.md, "Rate limits (429)"), per client and per route, fixed one-minute windows.
 *
 * - Request counts come from @fastify/rate-limit (`createRateLimit`, one limiter per budget): its
 *   Redis store (one Lua script, INCR + PEXPIRE) when REDIS_URL is set, its in-memory LRU store
 *   otherwise. The key is `<bucket>|<client>`, the client being the API key's id when a valid key
 *   was presented, else the IP address (`request.ip`: TRUST_PROXY decides whether X-Forwarded-For
 *   counts), an IPv6 address counting as its /64 (`clientKeyOf`, ./clientKey.ts: the one rule of
 *   who a client is, which the caps of generate_wallets and the connection limits use too).
 * - Every request of the /api plugin context (./apiContext.ts: its routes, 404s and 405s, by the
 *   context's own hooks, `limitApi`), and every request the edge refuses (a key in the URL, a target
 *   that cannot be normalised, a missing Host: src/http/edge.ts), counts first against the general
 *   budget (`status`), before anything else runs: probing costs what any request costs. A refused
 *   request is then answered with its refusal. A route's own budget is its route `config.budget`
 *   (./routeConfig.ts), the general one when it declares none.
 * - The burn pipeline's routes count against their own budget only once their input has passed
 *   validation (`preHandler`), just before any chain work: a 401, 413, 415 or 400 of a malformed
 *   body costs one request of the general budget and nothing of the burn budget. Read-only
 *   previews (GET /api/reclaim_rent) have a budget of their own, and at most `previewsPerClient`
 *   of one client run at once (`createPreviewSlots`): a preview of thousands of accounts is
 *   seconds of work, and one client must not take every core.
 * - A prepared operation counts once: the messages of a prepare answer are recorded
 *   (`recordPrepared`) for as long as their blockhash lives, and a relay whose transactions are
 *   all such messages is not counted again (each message at most twice, a retry included), so a
 *   wallet of thousands of accounts can be relayed before its blockhash expires.
 * - generate_wallets also has a budget of wallets per minute that counts `n`, not requests
 *   (src/store/windowCounter.ts, same store choice). A request whose `n` does not fit what is left
 *   is refused and uses nothing. A streamed request of plain or hd wallets is charged as its
 *   wallets are made instead, and waits out a spent window (./streamCharge.ts).
 *
 * Every /api response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds)
 * of the last budget it counted against; on generate_wallets they describe whichever limit is
 * closer to running out. A 429 is problem+json RATE_LIMITED with Retry-After. If the counter
 * store fails (Redis unreachable) the request goes through without a check and without
 * RateLimit-* headers: an error log (at most one line per 10 s),
 * `cinder_redis_errors_total{operation="rate_limit"}` and `cinder_rate_limit_fail_open_total`.
 */
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { getTransactionDecoder } from '@solana/kit';
import rateLimitPlugin from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CinderApp } from './types.ts';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { preparedIdentityOfBytes } from '../plan/messageIdentity.ts';
import { throttledLog } from '../store/redis.ts';
import type { WindowCounter } from '../store/windowCounter.ts';
import { isApiSpelledOutsideApi } from './auth.ts';
import type { Budget } from './routeConfig.ts';
import { isStreamable, maxWalletsOf } from './routes/generateWallets.ts';
import { createStreamCharge, type StreamCharge } from './streamCharge.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** A budget, as the counters' keys and the metrics name it. */
export type Bucket = Budget;

declare module 'fastify' {
  interface FastifyRequest {
    /** The state of the last request budget counted, read by the wallets budget. */
    cinderRateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
    /** Set by the edge (src/http/edge.ts) for a request it refuses: answered once the request is counted. */
    cinderRefusal: CinderError | null;
    /** A streamed generate_wallets request's wallets budget, charged as it goes (null: charged up front, or no budget). */
    cinderStreamCharge: StreamCharge | null;
  }
}

export interface RateLimitDeps {
  config: Pick<Config, 'rateLimit' | 'rateLimitStatusPerMin' | 'rateLimitPreviewPerMin' | 'rateLimitOwnersPerMin' | 'maxWalletsPerRequest' | 'maxWalletsStreamed'>;
  logger: Logger;
  metrics: Metrics;
  /** Shared counters; null: this process's memory. */
  redis: Redis | null;
  /** Window counters (memory, or Redis): the wallets budget, and the messages of prepared operations. */
  counters: WindowCounter;
}

/**
 * The budget a request of the /api context counts against once its input is valid: its route's
 * `budget` (src/http/routeConfig.ts), else the general one (a 404 or 405 included).
 */
export function bucketOf(request: FastifyRequest): Bucket {
  return request.routeOptions.config.budget ?? 'status';
}

/** Budgets counted only once the input is valid, just before the chain work (the general budget counts them first). */
const BUDGETS_AFTER_VALIDATION: ReadonlySet<Bucket> = new Set(['burn', 'preview']);

const BUCKET_NAMES: Record<Bucket, string> = {
  burn: 'burn requests',
  preview: 'reclaim previews',
  generate: 'generate_wallets requests',
  status: 'requests',
};

function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  reply.header('ratelimit-limit', limit).header('ratelimit-remaining', Math.max(0, remaining)).header('ratelimit-reset', resetSeconds);
}

const toSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * How long the messages of a prepare answer are known: a blockhash lives 150 blocks (60–90 s on a
 * cluster), and a relay token is honoured for 2 minutes.
 */
const PREPARED_TTL_MS = 3 * 60_000;
/** Relays of one prepared message that are not counted: the first, and one retry (a lost answer). */
const FREE_RELAYS_PER_MESSAGE = 2;

/** A prepared message is known by what Cinder prepared, so a relay of it after a wallet's additions is still not counted again. */
const messageId = (bytes: Uint8Array) => preparedIdentityOfBytes(bytes) ?? createHash('sha256').update(bytes).digest('base64url');

const transactionDecoder = getTransactionDecoder();

/** The message bytes of base64 wire transactions, or null when one does not decode (the relay refuses it). */
function relayedMessages(body: unknown): Uint8Array[] | null {
  const wires = (body as { transactions?: unknown } | undefined)?.transactions;
  if (!Array.isArray(wires) || wires.length === 0) return null;
  try {
    return wires.map((wire) => new Uint8Array(transactionDecoder.decode(Buffer.from(String(wire), 'base64')).messageBytes));
  } catch {
    return null;
  }
}

/** Owners a request body names in its route's `ownersField` (docs/many-wallets.md); 0 for a single-owner body. */
function ownersNamed(body: unknown, field: 'owners' | 'userPrivateKeys'): number {
  const named = (body as Record<string, unknown> | null | undefined)?.[field];
  return Array.isArray(named) ? named.length : 0;
}

export interface RateLimits {
  /** Records the compiled messages of a prepare answer: their relays count once (see the top of the file). */
  recordPrepared(messages: readonly Uint8Array[]): Promise<void>;
  /** Adds the limits to the /api context: every route and 404 in it counts, whatever it declares. */
  limitApi(api: CinderApp): void;
}

export async function registerRateLimits(app: CinderApp, deps: RateLimitDeps): Promise<RateLimits> {
  const { config, metrics, counters } = deps;
  const limits: Record<Bucket, number> = {
    burn: config.rateLimit.burnPerMin,
    preview: config.rateLimitPreviewPerMin,
    generate: config.rateLimit.generatePerMin,
    status: config.rateLimitStatusPerMin,
  };
  const logFailure = throttledLog(deps.logger);

  await app.register(rateLimitPlugin, {
    global: false, // no route gets the plugin's own hooks: the checks below use createRateLimit
    timeWindow: RATE_LIMIT_WINDOW_MS,
    skipOnError: false, // a store failure reaches the hooks below, which log it, count it and let the request through
    cache: 100_000,
    ...(deps.redis ? { redis: deps.redis, nameSpace: 'cinder:rl:' } : {}),
  });
  const limiters = Object.fromEntries(
    (Object.keys(limits) as Bucket[]).map((bucket) => [
      bucket,
      app.createRateLimit({ max: limits[bucket], keyGenerator: (request: FastifyRequest) => `${bucket}|${request.cinderClient}` }),
    ]),
  ) as Record<Bucket, ReturnType<CinderApp['createRateLimit']>>;

  function failOpen(request: FastifyRequest, bucket: Bucket, error: unknown) {
    metrics.redisErrors.inc({ operation: 'rate_limit' });
    metrics.rateLimitFailOpen.inc({ route: bucket });
    const err = error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) };
    logFailure({ err, reqId: request.id }, 'rate-limit store unavailable (Redis): failing open, requests are not rate limited');
  }

  /** One request against `bucket`: the RateLimit-* headers, and 429 beyond the limit. */
  async function count(request: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<void> {
    let result: Awaited<ReturnType<(typeof limiters)[Bucket]>>;
    try {
      result = await limiters[bucket](request);
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
        { reason: 'bucket', max: result.max, what: BUCKET_NAMES[bucket], resetSeconds },
        { headers: { 'retry-after': String(resetSeconds) } },
      );
    }
  }

  /**
   * True when every transaction of a relay request is a message this service prepared, relayed
   * at most FREE_RELAYS_PER_MESSAGE times so far: the prepare was counted, its relays are not.
   */
  async function relaysPreparedOperation(request: FastifyRequest): Promise<boolean> {
    const messages = relayedMessages(request.body);
    if (!messages) return false;
    const ids = messages.map(messageId);
    try {
      // n = 0 reads a marker without setting one.
      const known = await Promise.all(ids.map((id) => counters.take(`prepared|${id}`, 0, 1, PREPARED_TTL_MS)));
      if (known.some((k) => k.used === 0)) return false;
      const relays = await Promise.all(ids.map((id) => counters.take(`relayed|${id}`, 1, FREE_RELAYS_PER_MESSAGE, PREPARED_TTL_MS)));
      return relays.every((r) => r.allowed);
    } catch (error) {
      failOpen(request, 'burn', error);
      return false; // counted as any relay
    }
  }

  app.decorateRequest('cinderRateLimit', null);
  app.decorateRequest('cinderRefusal', null);
  app.decorateRequest('cinderStreamCharge', null);

  // Any path: a request the edge refused counts against the general budget, and is answered with
  // its refusal (a key in the URL must be told, whatever the budget says). So does an /api path the
  // router did not route into the /api context (another letter case): it is refused there as any.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = request.cinderRefusal;
    if (refusal) {
      await count(request, reply, 'status').catch(() => undefined);
      throw refusal;
    }
    if (isApiSpelledOutsideApi(request)) await count(request, reply, 'status');
  });

  function limitApi(api: CinderApp): void {
    // Every request of the context, first: its route's budget, or the general one for the doors
    // whose own budget waits for valid input (below) and for 404s and 405s.
    api.addHook('onRequest', async (request, reply) => {
      const bucket = bucketOf(request);
      await count(request, reply, BUDGETS_AFTER_VALIDATION.has(bucket) ? 'status' : bucket);
    });

    // The doors' own budgets, once the input is valid: the chain work starts right after this.
    api.addHook('preHandler', async (request, reply) => {
      const bucket = bucketOf(request);
      if (!BUDGETS_AFTER_VALIDATION.has(bucket) || request.validationError) return;
      if (request.routeOptions.config.relaysPrepared && (await relaysPreparedOperation(request))) return;
      await count(request, reply, bucket);
    });

    api.addHook('preHandler', ownersBudget);
    api.addHook('preHandler', walletsBudget);
  }

  // The owners budget: a request that names many owners (preview, prepare or reclaim of many
  // wallets: docs/many-wallets.md) costs one request of its door's budget and one unit per owner
  // of this one, as generate_wallets costs its n wallets.
  async function ownersBudget(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const field = request.routeOptions.config.ownersField;
    if (!field || request.validationError) return;
    const n = ownersNamed(request.body, field);
    if (n === 0) return;
    const max = config.rateLimitOwnersPerMin;
    let taken: Awaited<ReturnType<WindowCounter['take']>>;
    try {
      taken = await counters.take(`owners|${request.cinderClient}`, n, max, RATE_LIMIT_WINDOW_MS);
    } catch (error) {
      failOpen(request, bucketOf(request), error);
      return;
    }
    if (taken.allowed) return;
    const resetSeconds = toSeconds(taken.ttlMs);
    setHeaders(reply, max, max - taken.used, resetSeconds);
    metrics.rateLimitRejections.inc({ route: bucketOf(request), limit: 'owners' });
    throw new CinderError(
      'RATE_LIMITED',
      n > max ? { reason: 'overBudget', what: 'owners', n, max } : { reason: 'budget', what: 'owners', n, max, left: max - taken.used, resetSeconds },
      { headers: { 'retry-after': String(resetSeconds) } },
    );
  }

  // The wallets budget needs `n`, so it runs once the query string is validated. Requests that
  // the route will refuse (bad n) are left to it and use nothing.
  async function walletsBudget(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (bucketOf(request) !== 'generate' || request.validationError) return;
    const query = request.query as { n?: unknown; prefix?: unknown; suffix?: unknown; mnemonic?: unknown };
    const n = Number(query.n);
    if (!Number.isSafeInteger(n) || n < 1 || n > maxWalletsOf(query, request.headers.accept, config)) return;
    const max = config.rateLimit.walletsPerMin;
    if (isStreamable(query, request.headers.accept)) {
      // Streamed plain and hd wallets pay as they are made, waiting out a spent window (streamCharge.ts).
      request.cinderStreamCharge = createStreamCharge({
        take: (units) => counters.take(`wallets|${request.cinderClient}`, units, max, RATE_LIMIT_WINDOW_MS),
        max,
        total: n,
        wait: (ms, signal) => delay(ms, undefined, { signal }),
        onStoreError: (error) => failOpen(request, 'generate', error),
        onPause: (ms) => request.log.debug({ ms }, 'wallets stream paused: the client has spent its wallet budget for this window'),
      });
      return;
    }
    let taken: Awaited<ReturnType<WindowCounter['take']>>;
    try {
      taken = await counters.take(`wallets|${request.cinderClient}`, n, max, RATE_LIMIT_WINDOW_MS);
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
        n > max ? { reason: 'overBudget', what: 'wallets', n, max } : { reason: 'budget', what: 'wallets', n, max, left, resetSeconds },
        { headers: { 'retry-after': String(resetSeconds) } },
      );
    }
    // The headers describe the limit closer to running out.
    const requests = request.cinderRateLimit;
    if (!requests || left / max < requests.remaining / requests.limit) setHeaders(reply, max, left, resetSeconds);
  }

  return {
    limitApi,
    async recordPrepared(messages) {
      try {
        await Promise.all(messages.map((bytes) => counters.take(`prepared|${messageId(bytes)}`, 1, 1, PREPARED_TTL_MS)));
      } catch (error) {
        // Its relays are then counted as any: nothing is lost but the discount.
        metrics.redisErrors.inc({ operation: 'rate_limit' });
        logFailure({ err: error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) } }, 'prepared messages not recorded (Redis): their relays count against the burn budget');
      }
    },
  };
}

/**
 * The per-client cap on previews running at once (in this process: it protects this process's
 * cores). `acquire` answers 429 RATE_LIMITED beyond the cap; the slot is given back by `release`,
 * once the preview's work is done (whether or not the client is still there).
 */
export interface PreviewSlots {
  /** Takes one of the client's preview slots, or throws 429 RATE_LIMITED when all are taken; returns the release (idempotent). */
  acquire(client: string): () => void;
}

export function createPreviewSlots(perClient: number): PreviewSlots {
  const running = new Map<string, number>();
  return {
    acquire(client: string): () => void {
      const now = running.get(client) ?? 0;
      if (now >= perClient) {
        throw new CinderError('RATE_LIMITED', { reason: 'previews', running: now, perClient }, { headers: { 'retry-after': '1' } });
      }
      running.set(client, now + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (running.get(client) ?? 1) - 1;
        if (left === 0) running.delete(client);
        else running.set(client, left);
      };
    },
  };
}
