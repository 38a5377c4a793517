/**
 * The one Redis connection of an app (ioredis). Set up to fail fast rather than queue: while Redis
 * is unreachable every command is rejected at once (no offline queue, one attempt, a short
 * command timeout), so a request never waits on a dead Redis; the rate limiter then fails open and
 * the idempotency store fails closed. The client reconnects in the background forever, so the
 * service is back to normal as soon as Redis is.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.ts';

export interface RedisClientOptions {
  url: string;
  logger: Logger;
  metrics: Metrics;
  /** Per command; default 1000 ms. */
  commandTimeoutMs?: number;
  /** How long `createRedisClient` waits for the first connection before going on; default 3000 ms. */
  connectWaitMs?: number;
}

/** Logs at most one line per `intervalMs` for a repeating failure, with the count of the ones skipped. */
export function throttledLog(logger: Logger, intervalMs = 10_000) {
  let last = 0;
  let skipped = 0;
  return (fields: Record<string, unknown>, message: string) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      skipped++;
      return;
    }
    logger.error({ ...fields, ...(skipped > 0 ? { similarErrorsSkipped: skipped } : {}) }, message);
    last = now;
    skipped = 0;
  };
}

/** The URL without its password, for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(unparsable URL)';
  }
}

export async function createRedisClient(options: RedisClientOptions): Promise<Redis> {
  const { logger, metrics } = options;
  const where = redactRedisUrl(options.url);
  // ioredis is loaded here, not with this module (whose throttledLog every app uses): an instance
  // without REDIS_URL never pays for it.
  const { Redis } = await import('ioredis');
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    connectTimeout: 2000,
    // Reconnect forever, quickly at first, then every second.
    retryStrategy: (times) => Math.min(50 * times, 1000),
    lazyConnect: false,
    connectionName: 'cinder',
  });
  const logConnectionError = throttledLog(logger);
  let wasReady = false;
  redis.on('error', (error: Error) => {
    metrics.redisErrors.inc({ operation: 'connection' });
    logConnectionError({ redis: where, err: { type: error.name, message: error.message } }, 'Redis connection error');
  });
  redis.on('ready', () => {
    logger[wasReady ? 'warn' : 'info']({ redis: where }, wasReady ? 'Redis connection restored' : 'Redis connected');
    wasReady = true;
  });
  redis.on('close', () => {
    if (wasReady) logger.debug({ redis: where }, 'Redis connection closed');
  });

  const waitMs = options.connectWaitMs ?? 3000;
  if (redis.status !== 'ready') {
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        redis.off('ready', onReady);
        resolve(false);
      }, waitMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      redis.once('ready', onReady);
    });
    if (!ready) {
      logger.error(
        { redis: where },
        `Redis is not reachable after ${waitMs} ms; starting anyway: rate limits fail open and burns with an Idempotency-Key answer 503 until it is`,
      );
    }
  }
  return redis;
}

/** Closes the connection without waiting on a Redis that is gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } catch {
      // already closing
    }
  }
  redis.disconnect();
}
