/**
 * Idempotency records of POST /api/burn_tokens and /api/reclaim_rent. A record is keyed by an HMAC
 * (SERVER_SECRET) of (cluster, client scope, owner, Idempotency-Key) and holds a fingerprint (an HMAC of the record name and the
 * request body, never the body: it carries a private key) and, once the request finished, the
 * response to replay.
 *
 *   begin    → no record: a `pending` record is written atomically (this request owns the key);
 *              a record with another fingerprint: mismatch; `pending`: in progress; `pending`
 *              with sent signatures: sent (the caller answers from the chain); `done`: replay.
 *   markSent → the owner writes the signatures it is about to send into its `pending` record,
 *              durably, BEFORE sending, and the record then lives 24 h: a retry after a crash
 *              finds the signatures instead of running the burn again.
 *   complete → the owner turns its `pending` record into `done` with the response (24 h).
 *   release  → the owner drops its `pending` record (an answer not worth replaying).
 *
 * A `pending` record without signatures expires after `lockMs` (longer than a burn can take), so a
 * crashed instance cannot hold a key forever. Two implementations with the same behaviour:
 * process memory (one instance; with a journal on disk, see idempotencyJournal.ts, so sent
 * signatures and answers survive a crash) and Redis (atomic Lua scripts; every instance sees the
 * same records, and they survive a restart of Cinder).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { IdempotencyJournal, JournalEntry } from './idempotencyJournal.ts';

export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

/** Transactions a request sent (or was about to send): enough to answer from the chain. */
export interface SentMark {
  signatures: string[];
  /** u64 as a decimal string. */
  lastValidBlockHeight: string;
}

export type BeginResult =
  | { kind: 'started'; token: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'sent'; sent: SentMark }
  | { kind: 'mismatch' };

export interface IdempotencyStore {
  begin(key: string, fingerprint: string, lockMs: number): Promise<BeginResult>;
  /**
   * Resolves once the mark is durable ('marked'), or with 'lost' when another request owns the
   * key now (the caller must not send). Rejects when the store is unreachable (must not send either).
   */
  markSent(key: string, token: string, fingerprint: string, sent: SentMark, ttlMs: number): Promise<'marked' | 'lost'>;
  complete(key: string, token: string, fingerprint: string, response: StoredResponse, ttlMs: number): Promise<void>;
  release(key: string, token: string): Promise<void>;
}

type IdempotencyRecord =
  | { state: 'pending'; fp: string; token: string; sent?: SentMark }
  | { state: 'done'; fp: string; response: StoredResponse };

function interpret(record: IdempotencyRecord, fingerprint: string): BeginResult {
  if (record.fp !== fingerprint) return { kind: 'mismatch' };
  if (record.state === 'pending') return record.sent ? { kind: 'sent', sent: record.sent } : { kind: 'in_progress' };
  return { kind: 'replay', response: record.response };
}

/** Token of records recovered from the journal: their owner died with the previous process. */
const RECOVERED_TOKEN = 'recovered';

export function createMemoryIdempotencyStore(options: { maxRecords?: number; journal?: IdempotencyJournal } = {}): IdempotencyStore {
  const maxRecords = options.maxRecords ?? 100_000;
  const { journal } = options;
  const records = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();
  let lastSweep = 0;

  for (const entry of journal?.recovered ?? []) {
    if (entry.fp === undefined) continue;
    const record: IdempotencyRecord | null = entry.response
      ? { state: 'done', fp: entry.fp, response: entry.response }
      : entry.sent
        ? { state: 'pending', fp: entry.fp, token: RECOVERED_TOKEN, sent: entry.sent }
        : null;
    if (record) records.set(entry.k, { record, expiresAt: entry.exp });
  }

  /** The live records that matter after a crash: answers, and signatures that were sent. */
  function journalEntries(now: number): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (const [k, { record, expiresAt }] of records) {
      if (expiresAt <= now) continue;
      if (record.state === 'done') entries.push({ k, fp: record.fp, response: record.response, exp: expiresAt });
      else if (record.sent) entries.push({ k, fp: record.fp, sent: record.sent, exp: expiresAt });
    }
    return entries;
  }

  async function journalAppend(entry: JournalEntry) {
    if (!journal) return;
    await journal.append(entry);
    // Rewritten once it holds far more lines than live records (each burn adds two lines).
    if (journal.linesSinceCompaction > 10_000 + 4 * records.size) await journal.compact(journalEntries(Date.now()));
  }

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
    async markSent(key, token, fingerprint, sent, ttlMs) {
      const now = Date.now();
      const entry = get(key, now);
      if (entry && (entry.record.state !== 'pending' || entry.record.token !== token)) return 'lost';
      // On disk first: once this resolves, the transactions may be sent.
      await journalAppend({ k: key, fp: fingerprint, sent, exp: now + ttlMs });
      set(key, { state: 'pending', fp: fingerprint, token, sent }, ttlMs, now);
      return 'marked';
    },
    async complete(key, token, fingerprint, response, ttlMs) {
      const now = Date.now();
      const entry = get(key, now);
      if (entry && (entry.record.state !== 'pending' || entry.record.token !== token)) return;
      set(key, { state: 'done', fp: fingerprint, response }, ttlMs, now);
      await journalAppend({ k: key, fp: fingerprint, response, exp: now + ttlMs });
    },
    async release(key, token) {
      const entry = get(key, Date.now());
      if (entry && entry.record.state === 'pending' && entry.record.token === token) {
        records.delete(key);
        if (entry.record.sent) await journalAppend({ k: key, drop: true, exp: entry.expiresAt });
      }
    },
  };
}

/**
 * A store that is made asynchronously: the memory store's journal is opened only once the cluster
 * is known (its genesis hash, read from the RPC, which need not answer at start). Making starts at
 * the first call, so that an instance nobody sends an Idempotency-Key reads neither the RPC nor its
 * journal; while it has not succeeded every call waits for it, and a failed attempt is made again
 * at the next call (that call rejects meanwhile: 503, nothing sent).
 */
export function createDeferredIdempotencyStore(make: () => Promise<IdempotencyStore>): IdempotencyStore {
  let made: Promise<IdempotencyStore> | undefined;
  const store = (): Promise<IdempotencyStore> => {
    if (made) return made;
    const attempt = make();
    made = attempt;
    // Handled here, so that a failed attempt nobody waits for is not an unhandled rejection.
    attempt.catch(() => {
      if (made === attempt) made = undefined;
    });
    return attempt;
  };
  return {
    begin: async (key, fingerprint, lockMs) => (await store()).begin(key, fingerprint, lockMs),
    markSent: async (key, token, fingerprint, sent, ttlMs) => (await store()).markSent(key, token, fingerprint, sent, ttlMs),
    complete: async (key, token, fingerprint, response, ttlMs) => (await store()).complete(key, token, fingerprint, response, ttlMs),
    release: async (key, token) => (await store()).release(key, token),
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
  /** Also used by markSent: replaces the caller's own pending record (or a vanished one); 0 when another owns it. */
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
    async markSent(key, token, fingerprint, sent, ttlMs) {
      const pending: IdempotencyRecord = { state: 'pending', fp: fingerprint, token, sent };
      const written = await client.cinderIdemComplete(prefix + key, token, JSON.stringify(pending), ttlMs);
      return written === 1 ? 'marked' : 'lost';
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
