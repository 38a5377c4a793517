/**
 * Idempotency records of POST /api/burn_tokens. A record is keyed by a hash of (client scope,
 * Idempotency-Key) and holds a fingerprint (a hash of the key and the request body, never the
 * body: it carries a private key) and, once the request finished, the response to replay.
 *
 *   begin    → no record: a `pending` record is written atomically (this request owns the key);
 *              a record with another fingerprint: mismatch; `pending`: in progress; `done`: replay.
 *   complete → the owner turns its `pending` record into `done` with the response (24 h).
 *   release  → the owner drops its `pending` record (an answer not worth replaying).
 *
 * A `pending` record expires after `lockMs` (longer than a burn can take), so a crashed instance
 * cannot hold a key forever. Two implementations with the same behaviour: process memory (one
 * instance) and Redis (atomic Lua scripts; every instance sees the same records).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

export type BeginResult =
  | { kind: 'started'; token: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

export interface IdempotencyStore {
  begin(key: string, fingerprint: string, lockMs: number): Promise<BeginResult>;
  complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlMs: number): Promise<void>;
  release(key: string, token: string): Promise<void>;
}

type IdempotencyRecord =
  | { state: 'pending'; fp: string; token: string }
  | { state: 'done'; fp: string; response: StoredResponse };

function interpret(record: IdempotencyRecord, fingerprint: string): BeginResult {
  if (record.fp !== fingerprint) return { kind: 'mismatch' };
  if (record.state === 'pending') return { kind: 'in_progress' };
  return { kind: 'replay', response: record.response };
}

export function createMemoryIdempotencyStore(options: { maxRecords?: number } = {}): IdempotencyStore {
  const maxRecords = options.maxRecords ?? 100_000;
  const records = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();
  let lastSweep = 0;

  function get(key: string, now: number) {
    const entry = records.get(key);
    if (entry && entry.expiresAt <= now) {
      records.delete(key);
      return undefined;
    }
    return entry;
  }

  function set(key: string, record: IdempotencyRecord, ttlMs: number, now: number) {
    if (now - lastSweep >= 10_000) {
      lastSweep = now;
      for (const [k, entry] of records) if (entry.expiresAt <= now) records.delete(k);
    }
    records.delete(key); // re-insert at the end: the Map's order is the eviction order
    // Full: the oldest records go first.
    for (const k of records.keys()) {
      if (records.size < maxRecords) break;
      records.delete(k);
    }
    records.set(key, { record, expiresAt: now + ttlMs });
  }

  return {
    async begin(key, fingerprint, lockMs) {
      const now = Date.now();
      const entry = get(key, now);
      if (entry) return interpret(entry.record, fingerprint);
      const token = randomUUID();
      set(key, { state: 'pending', fp: fingerprint, token }, lockMs, now);
      return { kind: 'started', token };
    },
    async complete(key, token, fingerprint, response, ttlMs) {
      const now = Date.now();
      const entry = get(key, now);
      if (entry && (entry.record.state !== 'pending' || entry.record.token !== token)) return;
      set(key, { state: 'done', fp: fingerprint, response }, ttlMs, now);
    },
    async release(key, token) {
      const entry = get(key, Date.now());
      if (entry && entry.record.state === 'pending' && entry.record.token === token) records.delete(key);
    },
  };
}

const BEGIN_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

/** Writes the final record only while the caller still owns the key (or the record expired). */
const COMPLETE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, record = pcall(cjson.decode, current)
  if not ok or record.state ~= 'pending' or record.token ~= ARGV[1] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

const RELEASE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, record = pcall(cjson.decode, current)
if ok and record.state == 'pending' and record.token == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

interface IdempotencyCommands {
  cinderIdemBegin(key: string, pending: string, lockMs: number): Promise<string | null>;
  cinderIdemComplete(key: string, token: string, done: string, ttlMs: number): Promise<number>;
  cinderIdemRelease(key: string, token: string): Promise<number>;
}

export function createRedisIdempotencyStore(redis: Redis, options: { prefix?: string } = {}): IdempotencyStore {
  const prefix = options.prefix ?? 'cinder:idem:';
  if (!(redis as unknown as Partial<IdempotencyCommands>).cinderIdemBegin) {
    redis.defineCommand('cinderIdemBegin', { numberOfKeys: 1, lua: BEGIN_SCRIPT });
    redis.defineCommand('cinderIdemComplete', { numberOfKeys: 1, lua: COMPLETE_SCRIPT });
    redis.defineCommand('cinderIdemRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
  }
  const client = redis as unknown as IdempotencyCommands;
  return {
    async begin(key, fingerprint, lockMs) {
      const token = randomUUID();
      const pending: IdempotencyRecord = { state: 'pending', fp: fingerprint, token };
      const current = await client.cinderIdemBegin(prefix + key, JSON.stringify(pending), lockMs);
      if (current === null) return { kind: 'started', token };
      return interpret(JSON.parse(current) as IdempotencyRecord, fingerprint);
    },
    async complete(key, token, fingerprint, response, ttlMs) {
      const done: IdempotencyRecord = { state: 'done', fp: fingerprint, response };
      await client.cinderIdemComplete(prefix + key, token, JSON.stringify(done), ttlMs);
    },
    async release(key, token) {
      await client.cinderIdemRelease(prefix + key, token);
    },
  };
}
