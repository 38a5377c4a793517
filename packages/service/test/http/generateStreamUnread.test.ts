/**
 * No one holds the wallet queue by not reading (docs/wallets.md, "Sharing the pool"). Streams of a
 * million wallets from 5 addresses, each client reading the response head and nothing more, fill
 * the pool's queue (its size set here to exactly what they hold): another client's n=1000 has no
 * room. Past WALLET_STREAM_READ_TIMEOUT_MS (short here) the service closes each of them and gives
 * its place back, and the other client is served. Waits on conditions (the route's log lines,
 * the sockets closing), never on durations.
 */
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '@cinder/service';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { streamReservation } from '../../src/wallets/index.ts';
import { getFrom, occurrences, openUnreadStream, until, type UnreadStream } from './unreadClients.ts';

const ATTACKERS = ['127.0.0.21', '127.0.0.22', '127.0.0.23', '127.0.0.24', '127.0.0.25'];
const STREAMS_EACH = 1;
const OTHER = '127.0.0.30';
const CLOSED_UNREAD = 'wallets stream closed: its client read nothing';

describe('unread wallet streams', () => {
  let t: TestApp;
  let base: string;
  // What one stream holds in the queue (the batches it keeps ahead of its socket, threads × 2).
  const perStream = streamReservation(availableParallelism());
  before(async () => {
    const defaults = loadConfig({}).walletLimits;
    t = await createTestApp({
      walletLimits: {
        ...defaults,
        streamReadTimeoutMs: 3000,
        // The queue holds exactly the attack: each client's share is its one stream.
        maxQueuedWallets: ATTACKERS.length * STREAMS_EACH * perStream,
        maxQueuedWalletsPerClient: STREAMS_EACH * perStream,
        maxStreamsPerClient: STREAMS_EACH,
        maxStreams: 100,
      },
    });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t?.close());

  it('fill the queue from 5 addresses; once their read timeout has passed they are closed and another client gets n=1000', { timeout: 300_000 }, async () => {
    const streams: UnreadStream[] = [];
    try {
      for (const address of ATTACKERS) {
        for (let i = 0; i < STREAMS_EACH; i++) streams.push(await openUnreadStream(base, '?n=1000000', address));
      }
      assert.deepEqual(
        streams.map((s) => s.status),
        streams.map(() => 200),
        'every attacking stream was admitted',
      );

      // While all of them hold their place the queue is full: the other client has no room. (Only
      // asserted when no read timeout fired before the answer: on a slow machine one may have.)
      const during = await getFrom(base, '/api/generate_wallets?n=1000', OTHER);
      if (occurrences(t.logs(), CLOSED_UNREAD) === 0) {
        assert.equal(during.status, 503, 'the unread streams fill the queue');
        assert.equal((JSON.parse(during.body) as { code: string }).code, 'SERVICE_UNAVAILABLE');
      }

      // The client never reads and never hangs up: the service closes every one of them.
      await until(() => occurrences(t.logs(), CLOSED_UNREAD) === streams.length, `${streams.length} unread streams to be closed by the service`);
      await Promise.all(streams.map((s) => s.drainUntilClosed()));

      const served = await getFrom(base, '/api/generate_wallets?n=1000', OTHER);
      assert.equal(served.status, 200, served.body.slice(0, 300));
      assert.equal((JSON.parse(served.body) as { wallets: string[] }).wallets.length, 1000);
      // And the attackers' places are free again: each address may stream again.
      const again = await openUnreadStream(base, '?n=1000000', ATTACKERS[0]!);
      streams.push(again);
      assert.equal(again.status, 200);
    } finally {
      for (const s of streams) s.socket.destroy();
    }
  });
});
