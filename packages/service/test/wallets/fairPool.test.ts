/**
 * The pool's turns (src/wallets/fairPool.ts): tasks are handed to the threads round robin by
 * client, not first come first served. With one thread the tasks run one after another, so the
 * order they finish in is the order the pool chose: no timing involved.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFairPool } from '../../src/wallets/fairPool.ts';
import type { KeysTask } from '../../src/wallets/generate.ts';

const WORKER = new URL('../../src/wallets/workerEntry.mjs', import.meta.url).href;
const task = (): KeysTask => ({ kind: 'keys', count: 1, keygen: false, mnemonic: null, lines: false });

describe('createFairPool', () => {
  it('one thread, A queues 5 tasks then B 2 and C 1: B and C each get the thread before A\'s third task', async () => {
    const pool = createFairPool({ threads: 1, filename: WORKER, niceIncrement: 0 });
    try {
      assert.equal(pool.workers(), 0, 'no thread before the first task');
      const done: string[] = [];
      const run = (client: string, name: string) => pool.run(client, task()).then((batch) => {
        batch.fill(0);
        done.push(name);
      });
      const all = [
        ...['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => run('A', name)),
        ...['b1', 'b2'].map((name) => run('B', name)),
        run('C', 'c1'),
      ];
      // a1 took the thread at once; then the clients in turn, A first (it was waiting first).
      assert.equal(pool.waiting(), 7);
      await Promise.all(all);
      assert.deepEqual(done, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4', 'a5']);
      assert.equal(pool.workers(), 1);
      assert.equal(pool.waiting(), 0);
    } finally {
      await pool.close();
    }
  });

  it('close() refuses what waits and anything new with 503 SERVICE_UNAVAILABLE', async () => {
    const pool = createFairPool({ threads: 1, filename: WORKER, niceIncrement: 0 });
    const first = pool.run('A', task());
    const waiting = assert.rejects(pool.run('A', task()), { code: 'SERVICE_UNAVAILABLE' });
    const ran = first.then((b) => b.fill(0), () => {});
    await pool.close();
    await ran;
    await waiting;
    await assert.rejects(pool.run('B', task()), { code: 'SERVICE_UNAVAILABLE' });
  });
});
