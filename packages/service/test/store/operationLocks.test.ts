/**
 * createOperationLocks: one operation per key at a time. In one process a duplicate joins the
 * running one; across instances (two locks on two Redis connections, as two servers would have)
 * a duplicate waits for the holder and answers with its outcome, gives up with 409 after
 * maxWaitMs, or runs itself when the holder died; Redis down → 503 before anything runs.
 * Turns: different operations of one key (other `joinAs`, or none) wait for each other and each
 * runs its own fn, in one process and across instances; a turn held for landing makes the next
 * other operation 409, while a duplicate gets the held result.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Redis } from 'ioredis';
import { CinderError, messageOf, toProblem } from '../../src/errors.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createOperationLocks, decodeOutcome, encodeOutcome, outcomeError } from '../../src/store/operationLocks.ts';
import { closeRedis, createRedisClient } from '../../src/store/redis.ts';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

const logger = pino({ level: 'silent' });
const burn = { busyCode: 'BURN_IN_PROGRESS' as const, maxWaitMs: 10_000, joinAs: 'burn:mint' };
const BUSY_WALLET = 'Own1111111111111111111111111111111111111111';
const turn = { busyCode: 'RECLAIM_IN_PROGRESS' as const, maxWaitMs: 10_000, busyWallet: BUSY_WALLET };
/** The 409 of `turn` when its turn does not come: the catalogue's words, naming the wallet. */
const turnBusy = messageOf('RECLAIM_IN_PROGRESS', { reason: 'busy', wallet: BUSY_WALLET, holder: 'burn or reclaim' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise and the functions that settle it, so a test decides when an operation ends. */
function gate<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

let counter = 0;
const newKey = () => `burn:test-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`;

describe('operation locks in one process (no Redis)', () => {
  const locks = createOperationLocks({ redis: null, logger });

  it('a second run with the same key joins the first: fn runs once, both get the same result', async () => {
    const key = newKey();
    const release = gate<{ lamports: bigint }>();
    let calls = 0;
    const fn = () => {
      calls++;
      return release.promise;
    };
    const first = locks.withLock(key, fn, burn);
    const second = locks.withLock(key, fn, burn);
    release.resolve({ lamports: 2_039_280n });
    const [a, b] = await Promise.all([first, second]);
    assert.equal(calls, 1);
    assert.equal(a, b, 'the very same result object');
    // Once finished, the key is free: a later run runs again.
    assert.deepEqual(await locks.withLock(key, async () => ({ lamports: 1n }), burn), { lamports: 1n });
  });

  it('a joined run gets the same error', async () => {
    const key = newKey();
    const release = gate<never>();
    let calls = 0;
    const fn = () => {
      calls++;
      return release.promise;
    };
    const first = locks.withLock(key, fn, burn);
    const second = locks.withLock(key, fn, burn);
    const error = new CinderError('NO_TOKEN_ACCOUNT', { reason: 'none', owner: 'Own1', mint: 'Mint1' });
    release.reject(error);
    await assert.rejects(first, (e) => e === error);
    await assert.rejects(second, (e) => e === error);
    assert.equal(calls, 1);
  });

  it('held for landing with a result that is not final: later runs get that result until the hold ends', async () => {
    const held = createOperationLocks({ redis: null, logger, landingHoldMs: 300 });
    const key = newKey();
    const keepWhile = (r: { status: string }) => r.status === 'pending';
    const pending = { status: 'pending', signature: 'sig-1' };
    assert.equal(
      await held.withLock(key, async (lock) => {
        await lock.holdForLanding();
        return pending;
      }, { ...burn, keepWhile }),
      pending,
    );
    let calls = 0;
    const again = () => held.withLock(key, async () => ({ status: `ran ${++calls}`, signature: 'sig-2' }), { ...burn, keepWhile });
    assert.equal(await again(), pending, 'the pending burn answers, no second transaction');
    assert.equal(calls, 0);
    await sleep(400);
    assert.deepEqual(await again(), { status: 'ran 1', signature: 'sig-2' }, 'once it can no longer land, a new run runs');
  });

  it('a final result (or no send) releases at once', async () => {
    const held = createOperationLocks({ redis: null, logger, landingHoldMs: 60_000 });
    const key = newKey();
    const keepWhile = (r: string) => r === 'pending';
    await held.withLock(key, async (lock) => {
      await lock.holdForLanding();
      return 'success';
    }, { ...burn, keepWhile });
    assert.equal(await held.withLock(key, async () => 'ran', { ...burn, keepWhile }), 'ran');
  });

  it('turns: a second caller with the key waits for the first to end, then runs its own fn', async () => {
    const key = newKey();
    const events: string[] = [];
    const first = gate<string>();
    const a = locks.withLock(key, async () => {
      events.push('a starts');
      const value = await first.promise;
      events.push('a ends');
      return value;
    }, turn);
    const b = locks.withLock(key, async () => {
      events.push('b starts');
      return 'b';
    }, turn);
    await sleep(50);
    assert.deepEqual(events, ['a starts'], 'b waits while a has the turn');
    first.resolve('a');
    assert.deepEqual(await Promise.all([a, b]), ['a', 'b'], 'each ran its own fn (no join)');
    assert.deepEqual(events, ['a starts', 'a ends', 'b starts']);
  });

  it('turns: one that ends pending after holdForLanding is kept, and the next caller gets 409 after maxWaitMs without running', async () => {
    const held = createOperationLocks({ redis: null, logger, landingHoldMs: 60_000 });
    const key = newKey();
    const keepWhile = (r: string) => r === 'pending';
    assert.equal(await held.withLock(key, async (lock) => {
      await lock.holdForLanding();
      return 'pending';
    }, { ...turn, keepWhile }), 'pending');
    let calls = 0;
    await assert.rejects(
      held.withLock(key, async () => String(++calls), { ...turn, maxWaitMs: 100, keepWhile }),
      (e: unknown) => e instanceof CinderError && e.code === 'RECLAIM_IN_PROGRESS' && e.status === 409 && e.message === turnBusy && e.message.includes(BUSY_WALLET) && e.headers['retry-after'] === '2',
    );
    assert.equal(calls, 0);
    // A final result frees the turn at once.
    const other = newKey();
    await held.withLock(other, async (lock) => {
      await lock.holdForLanding();
      return 'success';
    }, { ...turn, keepWhile });
    assert.equal(await held.withLock(other, async () => 'ran', { ...turn, maxWaitMs: 0, keepWhile }), 'ran');
  });

  it('different keys do not wait for each other', async () => {
    const blocked = gate<string>();
    const slow = locks.withLock(newKey(), () => blocked.promise, burn);
    assert.equal(await locks.withLock(newKey(), async () => 'other mint', burn), 'other mint');
    blocked.resolve('first');
    assert.equal(await slow, 'first');
  });

  it('one lock per key: a duplicate joins the running operation, another operation waits its turn and runs its own fn', async () => {
    const key = newKey();
    const release = gate<string>();
    const events: string[] = [];
    const first = locks.withLock(key, () => {
      events.push('burn runs');
      return release.promise;
    }, burn);
    const duplicate = locks.withLock(key, async () => {
      events.push('duplicate runs');
      return 'duplicate';
    }, burn);
    const other = locks.withLock(key, async () => {
      events.push('other runs');
      return 'other';
    }, { ...burn, joinAs: 'reclaim' });
    await sleep(50);
    assert.deepEqual(events, ['burn runs'], 'the other operation waits for the turn');
    release.resolve('burned');
    assert.deepEqual(await Promise.all([first, duplicate, other]), ['burned', 'burned', 'other']);
    assert.deepEqual(events, ['burn runs', 'other runs']);
  });
});

describe('outcome encoding', () => {
  it('keeps bigints and nested values exactly', () => {
    const value = { reclaimed: 18_446_744_073_709_551_615n, list: [1n, 'x', null, { fee: 5000n }], n: 3, literal: { $bigint: 'not alone', other: 1 } };
    assert.deepEqual(decodeOutcome(encodeOutcome({ ok: true, value })), { ok: true, value });
  });

  it('keeps an error as its code and context, Dates and bigints included, never its words', () => {
    const expiresAt = new Date('2026-01-02T03:04:05.006Z');
    const error = { code: 'SPONSORED_OPERATION_IN_PROGRESS', context: { reason: 'inFlight', owner: 'Own1', signatures: ['sig1'], expiresAt }, headers: { 'retry-after': '9' } };
    const text = encodeOutcome({ ok: false, error });
    assert.ok(!text.includes('in flight'), text);
    const decoded = decodeOutcome(text);
    assert.deepEqual(decoded, { ok: false, error });
    assert.ok(!decoded.ok && (decoded.error.context as { expiresAt: unknown }).expiresAt instanceof Date);
    const fee = { code: 'FEE_EXCEEDS_RECLAIM', context: { reason: 'net', fees: 2_039_281n, returns: 2_039_280n }, headers: {} };
    assert.deepEqual(decodeOutcome(encodeOutcome({ ok: false, error: fee })), { ok: false, error: fee });
  });

  it('words a stored error with the catalogue; a record it cannot word is a 500 with its headers, never its stored words', () => {
    const fee = outcomeError({ code: 'FEE_EXCEEDS_RECLAIM', context: { reason: 'net', fees: 2_039_281n, returns: 2_039_280n }, headers: {} });
    assert.equal(fee.code, 'FEE_EXCEEDS_RECLAIM');
    assert.match(fee.message, /net −0\.000000001 SOL/);
    assert.equal(fee.extensions.netLamports, '-1');
    const unknown = outcomeError({ code: 'NO_SUCH_CODE', context: {}, headers: { 'retry-after': '2' } });
    assert.deepEqual([unknown.code, unknown.status, unknown.headers], ['INTERNAL_ERROR', 500, { 'retry-after': '2' }]);
    // A context of another shape (an instant stored as a string by another version): the catalogue cannot word it.
    const reshaped = outcomeError({ code: 'SPONSOR_DECLINED', context: { owner: 'Own1', until: '2026-01-02T03:04:05.000Z', why: 'failed twice' }, headers: {} });
    assert.equal(reshaped.code, 'INTERNAL_ERROR');
    assert.equal(reshaped.message, new CinderError('INTERNAL_ERROR').message);
  });
});

describe('operation locks across instances (one real Redis)', () => {
  let redis: TestRedis;
  const clients: Redis[] = [];
  const metrics = createMetrics({ defaultMetrics: false });

  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    await Promise.all(clients.map((c) => closeRedis(c)));
    await redis.stop();
  });

  async function instance(options: { lockTtlMs?: number } = {}) {
    const client = await createRedisClient({ url: redis.url, logger, metrics });
    clients.push(client);
    return createOperationLocks({ redis: client, logger, pollIntervalMs: 20, ...options });
  }

  const lockValue = async (key: string) => (await redis.command(`GET cinder:lock:${key}`)).trim();

  it('a duplicate on another instance waits and answers with the holder\'s result; its fn never runs', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const key = newKey();
    const release = gate<{ signatures: string[]; feeLamports: bigint }>();
    const first = a.withLock(key, () => release.promise, burn);
    await sleep(50); // A holds the lock
    assert.notEqual(await lockValue(key), '$-1', 'A holds the lock in Redis');
    let bCalls = 0;
    const second = b.withLock(
      key,
      async () => {
        bCalls++;
        return { signatures: ['second'], feeLamports: 1n };
      },
      burn,
    );
    await sleep(100);
    assert.equal(bCalls, 0, 'B waits while A holds the lock');
    release.resolve({ signatures: ['first'], feeLamports: 5000n });
    assert.deepEqual(await first, { signatures: ['first'], feeLamports: 5000n });
    assert.deepEqual(await second, { signatures: ['first'], feeLamports: 5000n });
    assert.equal(bCalls, 0);
    assert.equal(await lockValue(key), '$-1', 'released');
  });

  it('the holder\'s CinderError reaches the waiter with its code, context, detail, members, errors and headers', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const key = newKey();
    const release = gate<never>();
    const first = a.withLock(key, () => release.promise, burn);
    await sleep(50);
    const second = b.withLock(key, async () => 'ran', burn);
    // A context with amounts (bigint) and an instant (Date): the record keeps both exactly.
    const context = { reason: 'lossBudget', budget: 1_000_000n, lost: 1_000_001n, atRisk: 5000n, until: new Date('2026-01-02T03:04:05.678Z') } as const;
    const errors = [{ field: 'feePayer', message: 'the sponsor is out of budget' }];
    const holderError = new CinderError('SPONSOR_UNAVAILABLE', context, { headers: { 'retry-after': '5' }, errors });
    release.reject(holderError);
    // Both handlers at once: the waiter may learn the outcome before the holder's rejection is seen
    // here, and a rejection with no handler yet fails the test run.
    await Promise.all([
      assert.rejects(first, { code: 'SPONSOR_UNAVAILABLE' }),
      assert.rejects(second, (e: unknown) => {
        assert.ok(e instanceof CinderError);
        assert.notEqual(e, holderError);
        assert.equal(e.code, 'SPONSOR_UNAVAILABLE');
        assert.equal(e.status, 503);
        assert.deepEqual(e.context, context);
        assert.equal(e.message, holderError.message);
        assert.match(e.message, /loss budget of 0\.001 SOL .* 0\.001000001 SOL was lost .* 0\.000005 SOL is at risk .* from 2026-01-02T03:04:05\.678Z/);
        assert.deepEqual(toProblem(e), toProblem(holderError));
        assert.deepEqual(e.errors, errors);
        assert.deepEqual(e.headers, { 'retry-after': '5' });
        return true;
      }),
    ]);
  });

  it('a waiter gives up after maxWaitMs with 409 and the busy code; its fn never runs', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const key = newKey();
    const release = gate<string>();
    const first = a.withLock(key, () => release.promise, burn);
    await sleep(50);
    let bCalls = 0;
    await assert.rejects(
      b.withLock(key, async () => String(++bCalls), { ...burn, busyCode: 'RECLAIM_IN_PROGRESS', maxWaitMs: 150 }),
      (e: unknown) => {
        assert.ok(e instanceof CinderError);
        assert.equal(e.code, 'RECLAIM_IN_PROGRESS');
        assert.equal(e.status, 409);
        assert.match(e.headers['retry-after']!, /^[1-9][0-9]*$/);
        assert.match(e.message, /Nothing was sent by this request/);
        return true;
      },
    );
    assert.equal(bCalls, 0);
    release.resolve('done');
    assert.equal(await first, 'done');
  });

  it('the lock is extended while fn runs past its TTL, so no other instance runs meanwhile', async () => {
    const [a, b] = await Promise.all([instance({ lockTtlMs: 300 }), instance({ lockTtlMs: 300 })]);
    const key = newKey();
    const release = gate<string>();
    const first = a.withLock(key, () => release.promise, burn);
    await sleep(1000); // more than three TTLs
    const ttl = Number((await redis.command(`PTTL cinder:lock:${key}`)).replace(/^:/, ''));
    assert.ok(ttl > 0, `the lock is still held (PTTL ${ttl})`);
    let bCalls = 0;
    await assert.rejects(b.withLock(key, async () => String(++bCalls), { ...burn, maxWaitMs: 100 }), { code: 'BURN_IN_PROGRESS' });
    assert.equal(bCalls, 0);
    release.resolve('done');
    assert.equal(await first, 'done');
  });

  it('a holder that died (its lock expires, no outcome) lets the waiter run fn itself', async () => {
    const b = await instance();
    const key = newKey();
    await redis.command(`SET cinder:lock:${key} dead-instance-token PX 200`);
    let bCalls = 0;
    assert.equal(await b.withLock(key, async () => `ran ${++bCalls}`, burn), 'ran 1');
  });

  it('held for landing with a pending result: the lock stays and other instances get that result', async () => {
    const [a, b] = await Promise.all([instance({ lockTtlMs: 300 }), instance({ lockTtlMs: 300 })]);
    const key = newKey();
    const keepWhile = (r: { status: string; fee: bigint }) => r.status === 'pending';
    const pending = { status: 'pending', fee: 5000n };
    assert.deepEqual(
      await a.withLock(key, async (lock) => {
        await lock.holdForLanding();
        return pending;
      }, { ...burn, keepWhile }),
      pending,
    );
    await sleep(600); // two lock TTLs: without the hold the lock would be gone
    const ttl = Number((await redis.command(`PTTL cinder:lock:${key}`)).replace(/^:/, ''));
    assert.ok(ttl > 1000, `held for landing (PTTL ${ttl})`);
    let bCalls = 0;
    assert.deepEqual(await b.withLock(key, async () => ({ status: `ran ${++bCalls}`, fee: 1n }), { ...burn, keepWhile }), pending);
    assert.equal(bCalls, 0);
    // A final result is released at once.
    const other = newKey();
    await a.withLock(other, async (lock) => {
      await lock.holdForLanding();
      return { status: 'success', fee: 5000n };
    }, { ...burn, keepWhile });
    assert.equal(await lockValue(other), '$-1');
  });

  it('held for landing: only the same operation gets the pending result; another operation of the key answers 409 without running', async () => {
    const [a, b] = await Promise.all([instance({ lockTtlMs: 300 }), instance({ lockTtlMs: 300 })]);
    const key = newKey();
    const keepWhile = (r: string) => r === 'pending';
    assert.equal(await a.withLock(key, async (lock) => {
      await lock.holdForLanding();
      return 'pending';
    }, { ...burn, keepWhile }), 'pending');
    let bCalls = 0;
    await assert.rejects(
      b.withLock(key, async () => String(++bCalls), { ...burn, joinAs: 'reclaim', busyCode: 'RECLAIM_IN_PROGRESS', maxWaitMs: 300, keepWhile }),
      { code: 'RECLAIM_IN_PROGRESS' },
    );
    assert.equal(bCalls, 0);
    assert.equal(await b.withLock(key, async () => String(++bCalls), { ...burn, keepWhile }), 'pending', 'the same operation joins it');
    assert.equal(bCalls, 0);
  });

  it('a holder that dies after holdForLanding keeps the key locked: a waiter answers 409 and sends nothing', async () => {
    const holderClient = await createRedisClient({ url: redis.url, logger, metrics });
    const a = createOperationLocks({ redis: holderClient, logger, pollIntervalMs: 20, lockTtlMs: 300, landingHoldMs: 5_000 });
    const b = await instance({ lockTtlMs: 300 });
    const key = newKey();
    const sent = gate<void>();
    void a.withLock(key, async (lock) => {
      await lock.holdForLanding();
      sent.resolve();
      return new Promise<never>(() => {}); // never finishes: the instance dies here
    }, burn).catch(() => undefined);
    await sent.promise;
    holderClient.disconnect(); // no heartbeat, no release: as after kill -9
    await sleep(600);
    let bCalls = 0;
    await assert.rejects(b.withLock(key, async () => String(++bCalls), { ...burn, maxWaitMs: 300 }), { code: 'BURN_IN_PROGRESS' });
    assert.equal(bCalls, 0);
  });

  it('turns across instances: B waits while A has the turn, then runs its own fn; no outcome is handed over', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const key = newKey();
    const release = gate<string>();
    const first = a.withLock(key, () => release.promise, turn);
    await sleep(50);
    assert.notEqual(await lockValue(key), '$-1', 'A holds the turn in Redis');
    let bRan = false;
    const second = b.withLock(key, async () => {
      bRan = true;
      return 'b';
    }, turn);
    await sleep(100);
    assert.equal(bRan, false, 'B waits');
    release.resolve('a');
    assert.deepEqual(await Promise.all([first, second]), ['a', 'b']);
    assert.equal(await lockValue(key), '$-1', 'released');
  });

  it('turns across instances: a turn that ends pending keeps the key, so another instance answers 409 and runs nothing', async () => {
    const [a, b] = await Promise.all([instance({ lockTtlMs: 300 }), instance({ lockTtlMs: 300 })]);
    const key = newKey();
    const keepWhile = (r: string) => r === 'pending';
    assert.equal(await a.withLock(key, async (lock) => {
      await lock.holdForLanding();
      return 'pending';
    }, { ...turn, keepWhile }), 'pending');
    await sleep(600); // two lock TTLs: without the hold the turn would be free
    let bCalls = 0;
    await assert.rejects(b.withLock(key, async () => String(++bCalls), { ...turn, maxWaitMs: 200, keepWhile }), { code: 'RECLAIM_IN_PROGRESS', message: turnBusy });
    assert.equal(bCalls, 0);
  });

  it('release deletes only its own lock (compare-and-delete)', async () => {
    const a = await instance();
    const key = newKey();
    await a.withLock(
      key,
      async () => {
        // As if A's lock had expired and another instance had taken it.
        await redis.command(`SET cinder:lock:${key} other-token PX 10000`);
        return 'done';
      },
      burn,
    );
    assert.equal(await lockValue(key), '$11\r\nother-token');
  });

  it('Redis unreachable: 503 SERVICE_UNAVAILABLE before fn runs (fail closed)', async () => {
    const a = await instance();
    await redis.kill();
    try {
      let calls = 0;
      await assert.rejects(
        a.withLock(newKey(), async () => String(++calls), burn),
        (e: unknown) => {
          assert.ok(e instanceof CinderError);
          assert.equal(e.code, 'SERVICE_UNAVAILABLE');
          assert.equal(e.status, 503);
          assert.equal(e.headers['retry-after'], '5');
          assert.match(e.message, /nothing was sent/);
          return true;
        },
      );
      assert.equal(calls, 0);
    } finally {
      await redis.restart();
    }
  });
});
