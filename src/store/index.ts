/**
 * The shared state of an app: the wallets budget counters and the idempotency records (the
 * request counters of @fastify/rate-limit use the same Redis connection). In Redis when REDIS_URL
 * is set, so every instance behind a load balancer sees the same state; in process memory
 * otherwise (one instance only).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { createMemoryIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStore } from './idempotencyStore.ts';
import { closeRedis, createRedisClient } from './redis.ts';
import { createMemorySentTransactionLog, createRedisSentTransactionLog, type SentTransactionLog } from './sentTransactions.ts';
import { createMemoryWindowCounter, createRedisWindowCounter, type WindowCounter } from './windowCounter.ts';

export interface Stores {
  /** null: no REDIS_URL, everything is in this process's memory. */
  redis: Redis | null;
  walletBudget: WindowCounter;
  idempotency: IdempotencyStore;
  sentTransactions: SentTransactionLog;
  close(): Promise<void>;
}

export async function createStores({ config, logger, metrics }: { config: Pick<Config, 'redisUrl'>; logger: Logger; metrics: Metrics }): Promise<Stores> {
  if (!config.redisUrl) {
    return {
      redis: null,
      walletBudget: createMemoryWindowCounter(),
      idempotency: createMemoryIdempotencyStore(),
      sentTransactions: createMemorySentTransactionLog(),
      close: async () => {},
    };
  }
  const redis = await createRedisClient({ url: config.redisUrl, logger, metrics });
  return {
    redis,
    walletBudget: createRedisWindowCounter(redis),
    idempotency: createRedisIdempotencyStore(redis),
    sentTransactions: createRedisSentTransactionLog(redis),
    close: () => closeRedis(redis),
  };
}
