/**
 * The wallets budget of a stream, charged as it goes (src/http/streamCharge.ts), on the real
 * in-memory window counter with an injected clock: the waits move the clock to the window's reset
 * instead of sleeping through it, so windows of a minute are followed without waiting (and
 * without timing). A stream larger than the budget completes across window resets, never taking
 * more than the budget in one window; a second client is not affected; a client that leaves stops
 * it; a failing store lets it through (fail open), as every budget does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStreamCharge } from '../../src/http/streamCharge.ts';
import { RATE_LIMIT_WINDOW_MS } from '../../src/http/rateLimit.ts';
import { createMemoryWindowCounter } from '../../src/store/windowCounter.ts';

const MAX = 50;

function setUp(options: { chunk?: number } = {}) {
  let now = 1_000_000;
  const counter = createMemoryWindowCounter({ now: () => now });
  /** Units taken per window, by the window's start. */
  const perWindow = new Map<number, number>();
  let windowStart = now;
  const waits: number[] = [];
  const take = (client: string, units: number) => counter.take(`wallets|${client}`, units, MAX, RATE_LIMIT_WINDOW_MS);
  const charge = (client: string, total: number, hooks: { onWait?: () => Promise<void> } = {}) =>
    createStreamCharge({
      take: async (units) => {
        const taken = await take(client, units);
        if (taken.allowed) perWindow.set(windowStart, (perWindow.get(windowStart) ?? 0) + units);
        return taken;
      },
      max: MAX,
      total,
      ...(options.chunk === undefined ? {} : { chunk: options.chunk }),
      wait: async (ms, signal) => {
        waits.push(ms);
        await hooks.onWait?.();
        if (signal?.aborted) throw signal.reason;
        now += ms;
        windowStart = now;
      },
      onStoreError: () => assert.fail('the store works'),
    });
  return { charge, take, waits, perWindow, advance: (ms: number) => (now += ms) };
}

describe('a stream charged as it goes', () => {
  it('budget 50, n = 120 in batches of 10: completes across two window resets, at most 50 per window', async () => {
    const { charge, waits, perWindow } = setUp();
    const pay = charge('A', 120);
    for (let batch = 0; batch < 12; batch++) await pay(10);
    assert.equal(waits.length, 2, 'paused twice: at 50 and at 100 wallets');
    assert.ok(waits.every((ms) => ms > 0 && ms <= RATE_LIMIT_WINDOW_MS), 'each pause lasts until its window resets');
    assert.deepEqual([...perWindow.values()], [50, 50, 20], 'charged 120 in all, never more than the budget in one window');
  });

  it('a batch larger than a chunk or the budget is charged in several takes', async () => {
    const { charge, waits, perWindow } = setUp({ chunk: 15 });
    await charge('A', 120)(120);
    assert.equal(waits.length, 2);
    assert.deepEqual([...perWindow.values()], [50, 50, 20]);
  });

  it('while client A waits for its window, client B is not affected; A\'s JSON request would be refused', async () => {
    const { charge, take, waits } = setUp();
    let duringPause: { b: boolean; aJson: boolean } | undefined;
    const pay = charge('A', 60, {
      onWait: async () => {
        duringPause ??= { b: (await take('B', MAX)).allowed, aJson: (await take('A', 1)).allowed };
      },
    });
    await pay(60);
    assert.equal(waits.length, 1);
    assert.deepEqual(duringPause, { b: true, aJson: false }, 'B takes its whole budget; A has nothing left until the reset');
  });

  it('takes what another request of the same client left in the window, then waits', async () => {
    const { charge, take, perWindow } = setUp();
    assert.equal((await take('A', 45)).allowed, true); // a JSON request of n=45
    await charge('A', 20)(20);
    assert.deepEqual([...perWindow.values()], [5, 15], 'the window\'s last 5, then 15 in the next');
  });

  it('never charges more than the stream\'s n', async () => {
    const { charge, perWindow } = setUp({ chunk: 40 });
    const pay = charge('A', 30);
    await pay(10);
    await pay(20);
    assert.deepEqual([...perWindow.values()], [30], 'one take of 30, not a chunk of 40');
  });

  it('a client that leaves during the pause stops it: the charge rejects, nothing more is taken', async () => {
    const abort = new AbortController();
    const { charge, perWindow } = setUp();
    const pay = charge('A', 120, { onWait: async () => abort.abort(new Error('client closed the connection')) });
    await assert.rejects(pay(120, abort.signal), /client closed the connection/);
    assert.deepEqual([...perWindow.values()], [50]);
  });

  it('fails open when the counter store fails: told once, the rest of the stream is not charged', async () => {
    const errors: unknown[] = [];
    let takes = 0;
    const pay = createStreamCharge({
      take: async () => {
        takes++;
        throw new Error('redis unreachable');
      },
      max: MAX,
      total: 1000,
      wait: () => assert.fail('no wait'),
      onStoreError: (error) => errors.push(error),
    });
    for (let i = 0; i < 10; i++) await pay(100);
    assert.equal(errors.length, 1);
    assert.equal(takes, 1);
  });
});
