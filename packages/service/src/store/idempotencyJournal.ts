/**
 * The on-disk journal of the in-memory idempotency store (no REDIS_URL), so that a burn sent just
 * before a crash is still answered with its signature after a restart, instead of running again
 * and answering NO_TOKEN_ACCOUNT (its accounts are gone: the burn landed).
 *
 * What is written (one JSON line each, never a body or a key: record names and fingerprints are
 * HMACs, responses of burns hold no key):
 *   - `sent`: the signatures a request is about to send; written and fsync'd BEFORE the send;
 *   - `done`: the final answer (so a replay after a restart is the first answer again);
 *   - `drop`: a record dropped after all (nothing was sent after all).
 *
 * Layout: `<STATE_DIR>/idempotency/<cluster>/<pid>-<start ms>.ndjson`, where `<cluster>` is the
 * genesis hash of the chain the instance talks to: a record is only ever read by an instance of
 * the same cluster (one STATE_DIR may serve a devnet and a mainnet instance, or several checkouts;
 * a devnet record must never answer for mainnet). One file per running instance, so a file has
 * one writer and appends never interleave. When it opens, an instance reads its own earlier files
 * of that cluster and those of instances that no longer run (their pid is gone), keeps the entries
 * that have not expired, writes them into its own new file (fsync'd), then deletes the old files.
 * Files of instances that still run, and of other clusters, are left alone (without Redis,
 * instances do not share records). Files directly in `idempotency/` (no cluster: written before
 * records were scoped by cluster) are never read. The store rewrites the file with only its live
 * records when it has grown well past them (`compact`).
 *
 * Written by hand: no maintained library offers an fsync'd append-only journal with this
 * ownership rule; it is a few calls of node:fs.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { join } from 'node:path';

export interface JournalEntry {
  /** Record name (an HMAC). */
  k: string;
  fp?: string;
  sent?: { signatures: string[]; lastValidBlockHeight: string };
  response?: { status: number; contentType: string; body: string };
  drop?: true;
  /** Expiry, epoch ms. */
  exp: number;
}

export interface IdempotencyJournal {
  /** The live entries found at start, oldest first (later entries of a key win). */
  readonly recovered: readonly JournalEntry[];
  /** Appends one entry and waits until it is on disk (fdatasync). */
  append(entry: JournalEntry): Promise<void>;
  /** Replaces the journal with these entries (the store's live records). */
  compact(entries: JournalEntry[]): Promise<void>;
  /** Lines appended since the last compaction. */
  readonly linesSinceCompaction: number;
  close(): Promise<void>;
}

const FILE = /^(\d+)-(\d+)\.ndjson$/;

function isRunning(pid: number): boolean {
  if (pid === process.pid) return false; // an earlier life of this pid (a container's pid 1), not us
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseLines(text: string, now: number): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const entry = JSON.parse(line) as JournalEntry;
      if (typeof entry.k === 'string' && typeof entry.exp === 'number' && entry.exp > now) entries.push(entry);
    } catch {
      // A line torn by a crash mid-write: it was never acknowledged, so nothing relied on it.
    }
  }
  return entries;
}

async function writeDurably(path: string, text: string): Promise<void> {
  const handle = await fs.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A genesis hash is base58 of 32 bytes: a safe directory name (checked: it comes from the RPC). */
const CLUSTER = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** Makes `<STATE_DIR>/idempotency` (mode 0700), so that a STATE_DIR that cannot be written stops the start. */
export async function prepareJournalDirectory(stateDir: string): Promise<void> {
  await fs.mkdir(join(stateDir, 'idempotency'), { recursive: true, mode: 0o700 });
}

/** Opens this instance's journal of `cluster` (its genesis hash), taking over what dead instances of that cluster left. */
export async function openIdempotencyJournal(stateDir: string, cluster: string): Promise<IdempotencyJournal> {
  if (!CLUSTER.test(cluster)) throw new Error('the cluster\'s genesis hash is not base58 of 32 bytes');
  const dir = join(stateDir, 'idempotency', cluster);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  const taken: string[] = [];
  let recovered: JournalEntry[] = [];
  for (const name of (await fs.readdir(dir)).sort((a, b) => Number(FILE.exec(a)?.[2] ?? 0) - Number(FILE.exec(b)?.[2] ?? 0))) {
    const match = FILE.exec(name);
    if (!match || isRunning(Number(match[1]))) continue;
    const text = await fs.readFile(join(dir, name), 'utf8').catch(() => null);
    if (text === null) continue; // taken over by another instance starting at the same time
    recovered.push(...parseLines(text, now));
    taken.push(name);
  }
  // Keep only the last state of each record, in order.
  const last = new Map<string, JournalEntry>();
  for (const entry of recovered) {
    last.delete(entry.k);
    if (!entry.drop) last.set(entry.k, entry);
  }
  recovered = [...last.values()];

  const path = join(dir, `${process.pid}-${now}.ndjson`);
  await writeDurably(path, recovered.map((e) => JSON.stringify(e) + '\n').join(''));
  await syncDirectory(dir);
  for (const name of taken) await fs.unlink(join(dir, name)).catch(() => undefined);

  let handle = await fs.open(path, constants.O_WRONLY | constants.O_APPEND);
  let lines = 0;
  // One write at a time: appends and compactions never overlap.
  let queue: Promise<unknown> = Promise.resolve();
  const serialize = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    recovered,
    get linesSinceCompaction() {
      return lines;
    },
    append(entry) {
      return serialize(async () => {
        await handle.appendFile(JSON.stringify(entry) + '\n', 'utf8');
        await handle.datasync();
        lines++;
      });
    },
    compact(entries) {
      return serialize(async () => {
        const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
        await writeDurably(temporary, entries.map((e) => JSON.stringify(e) + '\n').join(''));
        await fs.rename(temporary, path);
        await syncDirectory(dir);
        await handle.close();
        handle = await fs.open(path, constants.O_WRONLY | constants.O_APPEND);
        lines = 0;
      });
    },
    close() {
      return serialize(() => handle.close());
    },
  };
}

/**
 * The HMAC key of the in-memory store when SERVER_SECRET is unset: random, made once and kept in
 * STATE_DIR (mode 0600), so record names written before a crash are found again after it.
 */
export async function loadOrCreateStateSecret(stateDir: string): Promise<string> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, 'server-secret');
  try {
    const existing = (await fs.readFile(path, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('base64url');
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeDurably(temporary, secret + '\n');
  try {
    // link() fails when the file exists: two instances starting at once end with the same secret.
    await fs.link(temporary, path);
    await syncDirectory(stateDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await fs.unlink(temporary).catch(() => undefined);
  }
  return (await fs.readFile(path, 'utf8')).trim();
}
