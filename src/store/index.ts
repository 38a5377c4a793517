/**
 * The shared state of an app: the wallets budget counters, the idempotency records and the
 * operation locks (the request counters of @fastify/rate-limit use the same Redis connection). In
 * Redis when REDIS_URL is set, so every instance behind a load balancer sees the same state; in
 * process memory otherwise (one instance only), where the idempotency records that must outlive a
 * crash are journaled under STATE_DIR.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { loadOrCreateStateSecret, openIdempotencyJournal } from './idempotencyJournal.ts';
import { createMemoryIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStore } from './idempotencyStore.ts';
import { createOperationLocks, type OperationLocks } from './operationLocks.ts';
import { closeRedis, createRedisClient } from './redis.ts';
import { createMemorySentTransactionLog, createRedisSentTransactionLog, type SentTransactionLog } from './sentTransactions.ts';
import { createMemoryWindowCounter, createRedisWindowCounter, type WindowCounter } from './windowCounter.ts';

export interface Stores {
  /** null: no REDIS_URL, everything is in this process's memory. */
  redis: Redis | null;
  walletBudget: WindowCounter;
  idempotency: IdempotencyStore;
  /** The HMAC key of idempotency record names and fingerprints (SERVER_SECRET, or STATE_DIR's own). */
  idempotencySecret: string;
  /** One money operation per key at a time (`burn:<owner>:<mint>`, `reclaim:<owner>`). */
  locks: OperationLocks;
  sentTransactions: SentTransactionLog;
  close(): Promise<void>;
}

export async function createStores({
  config,
  logger,
  metrics,
}: {
  config: Pick<Config, 'redisUrl' | 'serverSecret' | 'stateDir'>;
  logger: Logger;
  metrics: Metrics;
}): Promise<Stores> {
  if (!config.redisUrl) {
    let journal: Awaited<ReturnType<typeof openIdempotencyJournal>>;
    let secret: string;
    try {
      journal = await openIdempotencyJournal(config.stateDir);
      secret = config.serverSecret ?? (await loadOrCreateStateSecret(config.stateDir));
    } catch (error) {
      throw new Error(
        `cannot use STATE_DIR ${config.stateDir} for the idempotency journal (${error instanceof Error ? error.message : String(error)}); set STATE_DIR to a writable directory, or use REDIS_URL`,
        { cause: error },
      );
    }
    if (journal.recovered.length > 0) logger.info({ records: journal.recovered.length }, 'idempotency records recovered from the journal');
    return {
      redis: null,
      walletBudget: createMemoryWindowCounter(),
      idempotency: createMemoryIdempotencyStore({ journal }),
      idempotencySecret: secret,
      locks: createOperationLocks({ redis: null, logger }),
      sentTransactions: createMemorySentTransactionLog(),
      close: () => journal.close(),
    };
  }
  if (!config.serverSecret) {
    // loadConfig refuses this; a hand-made Config must not give instances record names that differ.
    throw new Error('SERVER_SECRET is required with REDIS_URL (every instance must share it)');
  }
  const redis = await createRedisClient({ url: config.redisUrl, logger, metrics });
  return {
    redis,
    walletBudget: createRedisWindowCounter(redis),
    idempotency: createRedisIdempotencyStore(redis),
    idempotencySecret: config.serverSecret,
    locks: createOperationLocks({ redis, logger }),
    sentTransactions: createRedisSentTransactionLog(redis),
    close: () => closeRedis(redis),
  };
}
