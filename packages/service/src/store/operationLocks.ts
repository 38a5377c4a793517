/**
 * One money operation per key at a time, the one lock of a signing operation (docs/money.md:
 * one burn per owner and mint at a time, across instances): different operations of one
 * owner (a burn and a reclaim, burns of two mints) must not plan from the same chain state at
 * once, or one closes an account the other's transaction also closes, and that one fails on chain
 * at its fee payer's cost; and two identical burns a moment apart must not both sign and send: the
 * second could only fail on chain, and its owner would pay its fee.
 *
 * - Turns: callers with one key take turns, in this process and across instances; a caller that
 *   cannot get its turn within `maxWaitMs` is answered 409 with `busyCode` and sends nothing.
 * - Joins (`joinAs`): a caller whose `joinAs` names the operation that has the turn (a duplicate)
 *   JOINS it instead of waiting: it gets the same result or the same error, and its `fn` is not
 *   called. Without `joinAs`, every caller runs its own `fn` and no outcome is handed over.
 * - Across instances (Redis configured), the holder holds a Redis lock (SET NX PX with a random
 *   token that starts with its `joinAs`, extended while `fn` runs, released by a compare-and-delete
 *   script, so an instance never frees a lock that expired and was taken by another). A joining
 *   holder leaves its outcome (the result, or a CinderError) under its token for a minute before
 *   releasing. A caller of another instance that finds the lock held by the same operation polls
 *   until it is free, then answers with that outcome; when the holder left none (it died, or failed
 *   unexpectedly), the caller takes the lock and runs `fn` itself.
 * - Redis unreachable: 503 SERVICE_UNAVAILABLE before `fn` runs (fail closed: nothing is sent).
 * - Sent but not landed: `fn` calls `lock.holdForLanding()` right before it sends; from then on the
 *   lock is kept for `landingHoldMs` (a blockhash lives about 150 slots, ~60 s), even if the
 *   process dies, and, when `fn` ends with a result that `keepWhile` says is not final (a burn
 *   still `pending`), it is not released: until the transaction can no longer land, a duplicate
 *   answers with that result and any other operation of the key waits (409 after `maxWaitMs`)
 *   instead of signing a second transaction that could only fail on chain (and cost its fee).
 *
 * Written here rather than taken from a library: Redlock-style libraries give mutual exclusion
 * but neither the in-process join nor the hand-over of the holder's answer to the waiters, which
 * is what turns a duplicate into "the same answer" instead of a second transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CinderError, ERROR_CODES, type CinderErrorCode, type CinderErrorContext, type FieldProblem } from '../errors.ts';

export type BusyCode = 'BURN_IN_PROGRESS' | 'RECLAIM_IN_PROGRESS' | 'SPONSORED_OPERATION_IN_PROGRESS';

/** How long an operation waits for its turn: half of what is left before its deadline (the other half is for its own work). */
export const turnWaitMs = (deadline: number): number => Math.max(0, Math.floor((deadline - Date.now()) / 2));


export interface RunOptions<T = unknown> {
  busyCode: BusyCode;
  /** How long a caller waits for a lock held by another instance before answering 409. */
  maxWaitMs: number;
  /**
   * After `holdForLanding`: whether this result leaves transactions that may still land (then the
   * lock and the result stay until the hold ends). Default: every result is final.
   */
  keepWhile?: (result: T) => boolean;
}

export interface HeldLock {
  /**
   * Call right before sending: keeps the lock for `landingHoldMs` from now, across a crash too.
   * Rejects (503) when Redis cannot be reached: then nothing may be sent.
   */
  holdForLanding(): Promise<void>;
}

export interface TurnOptions<T = unknown> extends RunOptions<T> {
  /** The wallet the 409 names when the turn does not come in time: `this wallet` (the default), or an owner's address where a request names several. */
  busyWallet?: string;
  /**
   * The operation this caller runs (no `|`): while the same operation has the key's turn, or holds
   * it for landing, this caller joins it (same answer) instead of running its own `fn`.
   */
  joinAs?: string;
}

export interface OperationLocks {
  /** One at a time per key: a second caller waits its turn, then runs its own `fn`, or joins the same operation (`joinAs`). */
  withLock<T>(key: string, fn: (lock: HeldLock) => Promise<T>, options: TurnOptions<T>): Promise<T>;
}

export interface OperationLocksOptions {
  redis: Redis | null;
  logger: Logger;
  /** Lock lifetime in Redis without a heartbeat (an instance that dies frees the key after it); default 10 s. */
  lockTtlMs?: number;
  /** Between two looks at a lock held by another instance; default 100 ms. */
  pollIntervalMs?: number;
  /** Redis key prefix; default `cinder:lock:`. */
  prefix?: string;
  /** How long `holdForLanding` keeps the lock; default 90 s (a blockhash's ~60 s, and a margin). */
  landingHoldMs?: number;
}

/** How long the holder's outcome stays readable for its waiters. */
const OUTCOME_TTL_MS = 60_000;

/**
 * Acquire or look: takes the lock when it is free, unless the last holder we saw (of the same
 * operation) left its outcome (then that outcome is the answer); a lock still held (for landing)
 * by the same operation, whose holder left an outcome, answers with it too. Returns {1} acquired,
 * {0, holderToken} held, {2, outcome}.
 * KEYS: lock, outcome of the last holder seen; ARGV: token, ttl, last holder seen, outcome prefix,
 * the operation's token prefix ('' for a caller that never joins).
 */
const ACQUIRE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then
  if ARGV[5] ~= '' and string.sub(current, 1, string.len(ARGV[5])) == ARGV[5] then
    local outcome = redis.call('GET', ARGV[4] .. current)
    if outcome then return {2, outcome} end
  end
  return {0, current}
end
if ARGV[3] ~= '' then
  local outcome = redis.call('GET', KEYS[2])
  if outcome then return {2, outcome} end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1}
`;

/** Extends the lock to at least ARGV[2] ms, never shortens it (a hold for landing is longer). */
const EXTEND_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

/**
 * Leaves the outcome for the waiters (for ARGV[3] ms), then deletes the lock if it is still ours,
 * unless ARGV[4] is '1': then it stays until its hold for landing ends.
 */
const RELEASE_SCRIPT = `
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
if ARGV[4] ~= '1' and redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

interface LockCommands {
  cinderLockAcquire(
    lockKey: string,
    outcomeKey: string,
    token: string,
    ttlMs: number,
    lastHolder: string,
    outcomePrefix: string,
    operationPrefix: string,
  ): Promise<[number, string?]>;
  cinderLockExtend(lockKey: string, token: string, ttlMs: number): Promise<number>;
  cinderLockRelease(lockKey: string, outcomeKey: string, token: string, outcome: string, outcomeTtlMs: number, keep: string): Promise<number>;
}

/**
 * An outcome as JSON: bigints and Dates tagged (burn results hold lamports, error contexts amounts
 * and instants), errors only when they are CinderErrors, kept as their code and context so that a
 * waiter of another instance words them with the catalogue, as the holder did.
 */
type Outcome =
  | { ok: true; value: unknown }
  | { ok: false; error: { code: string; context: unknown; headers: Record<string, string>; errors?: FieldProblem[] } };

export function encodeOutcome(outcome: Outcome): string {
  // `this[key]` is the value before its toJSON: a Date must be tagged before it becomes a string.
  return JSON.stringify(outcome, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    return typeof value === 'bigint' ? { $bigint: value.toString() } : value;
  });
}

export function decodeOutcome(text: string): Outcome {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1) {
      const tagged = value as { $bigint?: unknown; $date?: unknown };
      if (typeof tagged.$bigint === 'string') return BigInt(tagged.$bigint);
      if (typeof tagged.$date === 'string') return new Date(tagged.$date);
    }
    return value;
  }) as Outcome;
}

const encodeError = (error: CinderError): Extract<Outcome, { ok: false }>['error'] => ({
  code: error.code,
  context: error.context,
  headers: error.headers,
  ...(error.errors ? { errors: error.errors } : {}),
});

/**
 * The holder's error, worded again by the catalogue. A record this version cannot word (a code it
 * does not know, or a context of another shape, left by an instance of another version) is a 500:
 * its words are never taken from the store.
 */
export function outcomeError(error: Extract<Outcome, { ok: false }>['error']): CinderError {
  const options = { headers: error.headers, ...(error.errors ? { errors: error.errors } : {}) };
  if ((ERROR_CODES as string[]).includes(error.code)) {
    try {
      return new CinderError(error.code as CinderErrorCode, error.context as CinderErrorContext<CinderErrorCode>, options);
    } catch {
      // falls through to the 500 below
    }
  }
  return new CinderError('INTERNAL_ERROR', {}, options);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function unavailable(cause: unknown): CinderError {
  return new CinderError('SERVICE_UNAVAILABLE', { reason: 'lockStore' }, { headers: { 'retry-after': '5' }, cause });
}

export function createOperationLocks(options: OperationLocksOptions): OperationLocks {
  const { redis, logger } = options;
  const lockTtlMs = options.lockTtlMs ?? 10_000;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const prefix = options.prefix ?? 'cinder:lock:';
  const landingHoldMs = options.landingHoldMs ?? 90_000;
  const running = new Map<string, Promise<unknown>>();

  if (redis && !(redis as unknown as Partial<LockCommands>).cinderLockAcquire) {
    redis.defineCommand('cinderLockAcquire', { numberOfKeys: 2, lua: ACQUIRE_SCRIPT });
    redis.defineCommand('cinderLockExtend', { numberOfKeys: 1, lua: EXTEND_SCRIPT });
    redis.defineCommand('cinderLockRelease', { numberOfKeys: 2, lua: RELEASE_SCRIPT });
  }
  const client = redis as unknown as LockCommands | null;
  const outcomePrefix = `${prefix}outcome:`;
  const outcomeKey = (token: string) => outcomePrefix + token;

  /** Runs fn under the Redis lock, leaving its outcome for waiters of other instances when leaveOutcome (an operation others may join). */
  async function runLocked<T>(
    lockKey: string,
    token: string,
    fn: (lock: HeldLock) => Promise<T>,
    runOptions: RunOptions<T>,
    leaveOutcome: boolean,
  ): Promise<T> {
    const commands = client!;
    let lost = false;
    let heldUntil = 0;
    const lock: HeldLock = {
      async holdForLanding() {
        try {
          await commands.cinderLockExtend(lockKey, token, landingHoldMs);
        } catch (error) {
          throw unavailable(error);
        }
        heldUntil = Date.now() + landingHoldMs;
      },
    };
    const heartbeat = setInterval(() => {
      commands.cinderLockExtend(lockKey, token, lockTtlMs).then(
        (extended) => {
          if (extended === 0 && !lost) {
            lost = true;
            logger.error({ lock: lockKey }, 'operation lock expired while its operation ran (another instance may run the same operation)');
          }
        },
        (error: unknown) => logger.warn({ lock: lockKey, err: error }, 'could not extend an operation lock (Redis); it expires on its own'),
      );
    }, Math.max(10, Math.floor(lockTtlMs / 3)));
    heartbeat.unref(); // the operation's own work keeps the process alive, not its lock
    let outcome: Outcome | null = null;
    let keep = false;
    try {
      const value = await fn(lock);
      outcome = { ok: true, value };
      keep = heldUntil > Date.now() && (runOptions.keepWhile?.(value) ?? false);
      return value;
    } catch (error) {
      if (error instanceof CinderError) {
        outcome = { ok: false, error: encodeError(error) };
      }
      throw error;
    } finally {
      clearInterval(heartbeat);
      // A release that fails (Redis down) is logged, not thrown: the answer is what matters, and the
      // lock expires on its own within lockTtlMs.
      // An error after sending (heldUntil set) keeps the hold too: what was sent may still land.
      keep ||= outcome?.ok !== true && heldUntil > Date.now();
      const outcomeTtlMs = Math.max(OUTCOME_TTL_MS, heldUntil - Date.now());
      await commands
        .cinderLockRelease(lockKey, outcomeKey(token), token, outcome && leaveOutcome ? encodeOutcome(outcome) : '', outcomeTtlMs, keep ? '1' : '0')
        .catch((error: unknown) => logger.warn({ lock: lockKey, err: error }, 'could not release an operation lock (Redis); it expires on its own'));
    }
  }

  /** joinAs: the outcome of a holder of the same operation answers this caller too; without it each caller waits and runs its own fn. */
  async function acquireAcrossInstances<T>(
    key: string,
    fn: (lock: HeldLock) => Promise<T>,
    runOptions: RunOptions<T>,
    joinAs: string | undefined,
    busy: () => CinderError,
  ): Promise<T> {
    const commands = client!;
    const lockKey = prefix + key;
    const operationPrefix = joinAs === undefined ? '' : `${joinAs}|`;
    const token = operationPrefix + randomUUID();
    const giveUpAt = Date.now() + runOptions.maxWaitMs;
    let holder = '';
    for (;;) {
      let reply: [number, string?];
      try {
        reply = await commands.cinderLockAcquire(lockKey, outcomeKey(holder || 'none'), token, lockTtlMs, holder, outcomePrefix, operationPrefix);
      } catch (error) {
        throw unavailable(error);
      }
      const [state, value] = reply;
      if (state === 1) return runLocked(lockKey, token, fn, runOptions, joinAs !== undefined);
      if (state === 2) {
        // The holder of the same operation finished, or holds for landing: its answer is ours (a duplicate joins the first).
        const outcome = decodeOutcome(value!);
        if (outcome.ok) return outcome.value as T;
        throw outcomeError(outcome.error);
      }
      // Only the outcome of the same operation answers this caller; another operation's is not looked for.
      if (operationPrefix !== '' && value!.startsWith(operationPrefix)) holder = value!;
      const now = Date.now();
      if (now >= giveUpAt) throw busy();
      // A little jitter, so that waiters of several instances do not poll in step.
      await sleep(Math.min(giveUpAt - now, pollIntervalMs / 2 + Math.random() * pollIntervalMs));
    }
  }

  /** Without Redis: the hold for landing is a deadline in this process. */
  async function runInProcess<T>(fn: (lock: HeldLock) => Promise<T>, runOptions: RunOptions<T>, hold: { until: number }): Promise<T> {
    const lock: HeldLock = {
      async holdForLanding() {
        hold.until = Date.now() + landingHoldMs;
      },
    };
    // An error after sending keeps the hold, as with Redis: what was sent may still land.
    const value = await fn(lock);
    if (!(runOptions.keepWhile?.(value) ?? false)) hold.until = 0;
    return value;
  }

  const busyError = (code: BusyCode, wallet = 'this wallet') => () =>
    new CinderError(code, { reason: 'busy', wallet, holder: code === 'SPONSORED_OPERATION_IN_PROGRESS' ? 'sponsored transaction' : 'burn or reclaim' }, { headers: { 'retry-after': '2' } });

  /** In this process: whose turn it is per key, and a promise that settles when it ends. */
  const turns = new Map<string, Promise<void>>();

  /** Waits until no one in this process has the key's turn (or gives up), then takes it; returns its release. */
  async function waitForTurnInProcess(key: string, giveUpAt: number, busy: () => CinderError): Promise<() => void> {
    for (let current = turns.get(key); current; current = turns.get(key)) {
      const remaining = giveUpAt - Date.now();
      if (remaining <= 0) throw busy();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([current, new Promise<void>((resolve) => (timer = setTimeout(resolve, remaining)))]);
      clearTimeout(timer);
    }
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    turns.set(key, mine);
    return () => {
      if (turns.get(key) === mine) turns.delete(key);
      end();
    };
  }

  /** The turn itself: wait in this process, then (with Redis) across instances, run, and keep the turn while held for landing. */
  async function turn<T>(key: string, fn: (lock: HeldLock) => Promise<T>, turnOptions: TurnOptions<T>, hold: { until: number }): Promise<T> {
    const giveUpAt = Date.now() + turnOptions.maxWaitMs;
    const busy = busyError(turnOptions.busyCode, turnOptions.busyWallet);
    // This process's callers queue here first, so only one of them at a time asks Redis.
    const release = await waitForTurnInProcess(key, giveUpAt, busy);
    try {
      return await (client
        ? acquireAcrossInstances(key, fn, { ...turnOptions, maxWaitMs: Math.max(0, giveUpAt - Date.now()) }, turnOptions.joinAs, busy)
        : runInProcess(fn, turnOptions, hold));
    } finally {
      // Held for landing (without Redis; with it, Redis keeps the key): the next turn waits for the hold to end.
      const remaining = hold.until - Date.now();
      if (remaining > 0) setTimeout(release, remaining).unref();
      else release();
    }
  }

  return {
    withLock<T>(key: string, fn: (lock: HeldLock) => Promise<T>, turnOptions: TurnOptions<T>): Promise<T> {
      const hold = { until: 0 };
      if (turnOptions.joinAs === undefined) return turn(key, fn, turnOptions, hold);
      const operation = `${key}\n${turnOptions.joinAs}`;
      const joined = running.get(operation);
      if (joined) return joined as Promise<T>;
      const started = turn(key, fn, turnOptions, hold).finally(() => {
        const forget = () => {
          if (running.get(operation) === started) running.delete(operation);
        };
        // Held for landing: later callers of the operation in this process join the settled result until the hold ends.
        const remaining = hold.until - Date.now();
        if (remaining > 0) setTimeout(forget, remaining).unref();
        else forget();
      });
      // The settled promise stays in `running` while held; nobody may see it reject unhandled.
      started.catch(() => undefined);
      running.set(operation, started);
      return started;
    },
  };
}
