/**
 * The pool's queue is shared out per client (src/wallets/index.ts): one client's vanity searches
 * can take at most its share (429 beyond), so they never make another client's request a 503.
 * Real worker threads; the searches that cannot succeed are abandoned at the end.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isCinderError } from '../../src/errors.ts';
import { createWalletGenerator, type WalletGenerator } from '../../src/wallets/index.ts';

let generator: WalletGenerator;
before(() => {
  // A queue of 40 wallets: each client's share is a quarter of it, 10.
  generator = createWalletGenerator({ vanityTimeoutMs: 120_000, threads: 1, maxQueuedWallets: 40 });
});
after(() => generator.close());

/** A search no address can match in the test's lifetime (ten 1s: one address in 58^10). */
const HOPELESS = { prefix: '1111111111', suffix: '', ignoreCase: false };

describe('per-client share of the wallet queue', () => {
  it('client A fills its share with vanity searches and gets 429; client B is still served', async () => {
    const stop = new AbortController();
    const searches = [0, 1].map(() => generator.generate({ n: 5, vanity: HOPELESS, signal: stop.signal, client: 'ip:A' }));
    try {
      // Its share (10) is taken: more from A is a 429 that says why, and uses nothing.
      await assert.rejects(generator.generate({ n: 1, vanity: HOPELESS, signal: stop.signal, client: 'ip:A' }), (error: unknown) => {
        assert.ok(isCinderError(error, 'RATE_LIMITED'));
        assert.equal(error.headers['retry-after'], '1');
        assert.match(error.message, /already has 10 wallets being generated or searched for; its share is 10 at once/);
        return true;
      });
      await assert.rejects(generator.generate({ n: 9, client: 'ip:A' }), (error: unknown) => isCinderError(error, 'RATE_LIMITED'));
      // B: its full share on the pool (more than the inline size), served while A's searches run.
      const wallets = await generator.generate({ n: 10, client: 'ip:B' });
      assert.equal(wallets.count, 10);
      wallets.wipe();
    } finally {
      stop.abort(new Error('test over'));
      await Promise.allSettled(searches);
    }
    // A's searches ended: its share is free again.
    const again = await generator.generate({ n: 10, client: 'ip:A' });
    assert.equal(again.count, 10);
    again.wipe();
  });

  it('the whole queue still has its bound: 503 once clients together fill it', async () => {
    const stop = new AbortController();
    const searches = ['C', 'D', 'E', 'F'].map((c) => generator.generate({ n: 10, vanity: HOPELESS, signal: stop.signal, client: `ip:${c}` }));
    try {
      await assert.rejects(generator.generate({ n: 9, client: 'ip:G' }).then((w) => w.wipe()), (error: unknown) => isCinderError(error, 'SERVICE_UNAVAILABLE'));
    } finally {
      stop.abort(new Error('test over'));
      await Promise.allSettled(searches);
    }
  });
});
