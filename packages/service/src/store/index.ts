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
import type { ChainAdapter } from '../chain/types.ts';
import { loadOrCreateStateSecret, openIdempotencyJournal, prepareJournalDirectory, type IdempotencyJournal } from './idempotencyJournal.ts';
import {
  createDeferredIdempotencyStore,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  type IdempotencyStore,
} from './idempotencyStore.ts';
import { createOperationLocks, type OperationLocks } from './operationLocks.ts';
import { closeRedis, createRedisClient } from './redis.ts';
import { createMemorySentTransactionLog, createRedisSentTransactionLog, type SentTransactionLog } from './sentTransactions.ts';
import { createMemorySponsorLedger, createRedisSponsorLedger, type SponsorLedger } from './sponsorLedger.ts';
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
  /** The fee sponsor's turns, strikes and losses (src/operations/sponsorPolicy.ts). */
  sponsorLedger: SponsorLedger;
  close(): Promise<void>;
}

export async function createStores({
  config,
  logger,
  metrics,
  chain,
}: {
  config: Pick<Config, 'redisUrl' | 'serverSecret' | 'stateDir'>;
  logger: Logger;
  metrics: Metrics;
  /** The journal is the cluster's: a record of another cluster (devnet, mainnet) is never read. */
  chain: Pick<ChainAdapter, 'getGenesisHash'>;
}): Promise<Stores> {
  if (!config.redisUrl) {
    let secret: string;
    try {
      await prepareJournalDirectory(config.stateDir);
      secret = config.serverSecret ?? (await loadOrCreateStateSecret(config.stateDir));
    } catch (error) {
      throw new Error(
        `cannot use STATE_DIR ${config.stateDir} for the idempotency journal (${error instanceof Error ? error.message : String(error)}); set STATE_DIR to a writable directory, or use REDIS_URL`,
        { cause: error },
      );
    }
    let journal: IdempotencyJournal | undefined;
    let closed = false;
    const idempotency = createDeferredIdempotencyStore(async () => {
      const cluster = await chain.getGenesisHash(Date.now() + 10_000);
      const opened = await openIdempotencyJournal(config.stateDir, cluster);
      if (closed) {
        await opened.close();
        throw new Error('the stores are closed');
      }
      journal = opened;
      if (opened.recovered.length > 0) logger.info({ records: opened.recovered.length, cluster }, 'idempotency records of this cluster recovered from the journal');
      return createMemoryIdempotencyStore({ journal: opened });
    });
    return {
      redis: null,
      walletBudget: createMemoryWindowCounter(),
      idempotency,
      idempotencySecret: secret,
      locks: createOperationLocks({ redis: null, logger }),
      sentTransactions: createMemorySentTransactionLog(),
      sponsorLedger: createMemorySponsorLedger(),
      close: async () => {
        closed = true;
        await journal?.close();
      },
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
    sponsorLedger: createRedisSponsorLedger(redis),
    close: () => closeRedis(redis),
  };
}
