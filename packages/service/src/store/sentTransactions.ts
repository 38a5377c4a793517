/**
 * Burn transactions that were sent, with the last block height at which each can land. It lets
 * GET /api/transactions/{signature} answer `pending` for a transaction the chain does not know yet
 * (sent, not landed, blockhash still valid) instead of 404, and `failed` once it can no longer land.
 * In Redis when configured, so any instance can answer for a burn another instance sent.
 */
import type { Redis } from 'ioredis';

export interface SentTransactionLog {
  record(signature: string, lastValidBlockHeight: bigint): Promise<void>;
  /** null: not sent by Cinder (or forgotten after the TTL). */
  lastValidBlockHeightOf(signature: string): Promise<bigint | null>;
}

/** Long after any blockhash has expired (~150 blocks ≈ 1 min); the chain answers from then on. */
const TTL_MS = 60 * 60 * 1000;

export function createMemorySentTransactionLog(maxEntries = 100_000): SentTransactionLog {
  const entries = new Map<string, { lastValidBlockHeight: bigint; expiresAt: number }>();
  return {
    async record(signature, lastValidBlockHeight) {
      if (entries.size >= maxEntries) {
        // Oldest first: Map iteration order is insertion order.
        for (const [key, entry] of entries) if (entry.expiresAt <= Date.now() || entries.size >= maxEntries) entries.delete(key);
      }
      entries.set(signature, { lastValidBlockHeight, expiresAt: Date.now() + TTL_MS });
    },
    async lastValidBlockHeightOf(signature) {
      const entry = entries.get(signature);
      if (!entry || entry.expiresAt <= Date.now()) return null;
      return entry.lastValidBlockHeight;
    },
  };
}

export function createRedisSentTransactionLog(redis: Redis): SentTransactionLog {
  const key = (signature: string) => `cinder:sent:${signature}`;
  return {
    async record(signature, lastValidBlockHeight) {
      await redis.set(key(signature), lastValidBlockHeight.toString(), 'PX', TTL_MS);
    },
    async lastValidBlockHeightOf(signature) {
      const value = await redis.get(key(signature));
      return value === null ? null : BigInt(value);
    },
  };
}
