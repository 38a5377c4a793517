/**
 * The blockhash cache on its own (pure: the fetch is a function of the test). What it must do for
 * the requests that share it: one fetch for concurrent callers, and a shared fetch that runs out of
 * the time of the caller that started it never fails a caller that still has time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Blockhash } from '@solana/kit';
import { createBlockhashCache } from '../../src/chain/blockhashCache.ts';

const lifetime = (n: number) => ({ blockhash: `hash${n}` as Blockhash, lastValidBlockHeight: 1_000n });

describe('blockhash cache', () => {
  it('concurrent callers share one fetch, and later callers get the cached hash', async () => {
    const deadlines: number[] = [];
    const cache = createBlockhashCache({
      fetch: async (deadline) => {
        deadlines.push(deadline);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { lifetime: lifetime(deadlines.length), slot: 1n };
      },
    });
    const now = Date.now();
    const answers = await Promise.all([cache.get(now + 1000), cache.get(now + 2000), cache.get(now + 3000)]);
    assert.deepEqual(answers, [lifetime(1), lifetime(1), lifetime(1)]);
    assert.deepEqual(await cache.get(now + 1000), lifetime(1));
    assert.equal(deadlines.length, 1);
  });

  it('a caller that joined a fetch started on a shorter deadline, which gave up, fetches again on its own time', async () => {
    const deadlines: number[] = [];
    const cache = createBlockhashCache({
      fetch: async (deadline) => {
        deadlines.push(deadline);
        // Like the chain adapter's reads: it gives up when the deadline it was given passes.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())));
        if (deadlines.length === 1) throw new Error('RPC_UNAVAILABLE: the first caller ran out of time');
        return { lifetime: lifetime(deadlines.length), slot: 1n };
      },
    });
    const now = Date.now();
    const first = cache.get(now + 30);
    const second = cache.get(now + 200);
    await assert.rejects(first, /first caller ran out of time/);
    assert.deepEqual(await second, lifetime(2));
    assert.deepEqual(deadlines, [now + 30, now + 200], 'the second fetch runs on the second caller\'s deadline');
  });

  it('a caller whose own deadline is no later than the failed fetch gets its failure', async () => {
    let fetches = 0;
    const cache = createBlockhashCache({
      fetch: async () => {
        fetches++;
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error('RPC down');
      },
    });
    const now = Date.now();
    const results = await Promise.allSettled([cache.get(now + 500), cache.get(now + 400)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(fetches, 1, 'one fetch, one failure for both: the second caller had no more time than the first');
  });
});
