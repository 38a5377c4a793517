/**
 * Vanity searches take turns on the worker pool with other clients' work, and their number is
 * capped (docs/wallets.md, "Sharing the pool"). Over real sockets, each client from an address of
 * its own (127.0.0.x). The searches are for `zzzz` (about one address in 190 million: none is
 * found while the tests run). Outcomes and orderings only: which requests are answered while
 * which searches still run, and the refusals' codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type Config } from '@cinder/service';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { getFrom, occurrences, openReadStream, openUnreadStream, until, type ReadStream, type UnreadStream } from '../http/unreadClients.ts';

const HOPELESS = '?n=1&prefix=zzzz';
const ADMITTED = 'wallets request admitted';

function limits(overrides: Partial<Config['walletLimits']>): Config['walletLimits'] {
  return { ...loadConfig({}).walletLimits, ...overrides };
}

function problemOf(response: { status: number; headers: Record<string, unknown>; body: string }): { code: string; status: number; detail: string } {
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.ok(Number(response.headers['retry-after']) >= 1, 'Retry-After');
  return JSON.parse(response.body) as { code: string; status: number; detail: string };
}

describe('vanity searches take turns with other clients', () => {
  let t: TestApp;
  let base: string;
  const PER_ADDRESS = 55;
  before(async () => {
    // Caps high enough to admit the whole attack: what is tested here is the turns, not the caps.
    // VANITY_MAX_MS is shorter than one round of the searches' slices (110 searches, each a 100 ms
    // slice per thread, ≈ 11 s): served first come first served, the last searches would end
    // before another client's request got a thread.
    t = await createTestApp({ vanityMaxMs: 8000, walletLimits: limits({ maxVanitySearchesPerClient: PER_ADDRESS, maxVanitySearches: 2 * PER_ADDRESS, maxStreamsPerClient: PER_ADDRESS, maxStreams: 2 * PER_ADDRESS }) });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t?.close());

  it('2 addresses × 55 streamed searches for zzzz: another client\'s n=9 is served while every one of them still runs', { timeout: 300_000 }, async () => {
    const searches: ReadStream[] = [];
    try {
      for (const address of ['127.0.0.41', '127.0.0.42']) {
        for (let i = 0; i < PER_ADDRESS; i++) searches.push(openReadStream(base, HOPELESS, address));
      }
      await until(() => occurrences(t.logs(), ADMITTED) === searches.length, 'every search to be admitted');
      const other = await getFrom(base, '/api/generate_wallets?n=9', '127.0.0.43');
      const endedBefore = searches.filter((s) => s.ended).length;
      assert.equal(other.status, 200, other.body.slice(0, 300));
      assert.equal((JSON.parse(other.body) as { wallets: string[] }).wallets.length, 9);
      assert.equal(endedBefore, 0, 'no search had ended when the other client was answered');
    } finally {
      for (const s of searches) s.close();
    }
  });
});

describe('caps on vanity searches and wallet streams', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({
      vanityMaxMs: 300_000,
      vanityTimeoutMs: 300_000,
      trustProxy: true,
      walletLimits: limits({ maxVanitySearchesPerClient: 2, maxVanitySearches: 3, maxStreamsPerClient: 2, maxStreams: 3 }),
    });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t?.close());

  /** Waits for the service to see `n` more clients leave (each gives back its places before it logs so). */
  let left = 0;
  const untilClosed = async (n: number) => {
    left += n;
    await until(() => occurrences(t.logs(), 'client closed the connection during its wallets stream') >= left, `${left} streams to be seen closed`);
  };
  const closeAll = async (all: { close(): void }[]) => {
    for (const s of all) s.close();
    await untilClosed(all.length);
  };

  it('vanity searches: a client beyond its 2 gets 429, anyone beyond the 3 in all gets 503, streamed or not; a search that ends frees its place', { timeout: 300_000 }, async () => {
    const searches: ReadStream[] = [];
    try {
      const admitted = occurrences(t.logs(), ADMITTED);
      searches.push(openReadStream(base, HOPELESS, '127.0.0.51'), openReadStream(base, HOPELESS, '127.0.0.51'));
      await until(() => occurrences(t.logs(), ADMITTED) === admitted + 2, 'the first client\'s two searches to be admitted');
      const own = await getFrom(base, `/api/generate_wallets${HOPELESS}`, '127.0.0.51');
      assert.equal(own.status, 429);
      const ownProblem = problemOf(own);
      assert.equal(ownProblem.code, 'RATE_LIMITED');
      assert.match(ownProblem.detail, /This client has 2 vanity searches open; at most 2 at once per client \(MAX_VANITY_SEARCHES_PER_CLIENT\)/);

      searches.push(openReadStream(base, HOPELESS, '127.0.0.52'));
      await until(() => occurrences(t.logs(), ADMITTED) === admitted + 3, 'the second client\'s search to be admitted');
      for (const accept of ['application/x-ndjson', 'application/json']) {
        const full = await getFrom(base, `/api/generate_wallets${HOPELESS}`, '127.0.0.53', { accept });
        assert.equal(full.status, 503, accept);
        const problem = problemOf(full);
        assert.equal(problem.code, 'SERVICE_UNAVAILABLE');
        assert.match(problem.detail, /3 vanity searches open, its limit \(MAX_VANITY_SEARCHES\)/);
      }
      // Plain wallets are not searches: the third client is served.
      assert.equal((await getFrom(base, '/api/generate_wallets?n=9', '127.0.0.53')).status, 200);

      // One search ends (its client leaves): its place is free, and the third client's search runs.
      searches.shift()!.close();
      await untilClosed(1);
      // suffix=1: one address in 58, found at once.
      const third = await getFrom(base, '/api/generate_wallets?n=1&suffix=1', '127.0.0.53');
      assert.equal(third.status, 200, third.body.slice(0, 300));
    } finally {
      await closeAll(searches);
    }
  });

  it('wallet streams: a client beyond its 2 open streams gets 429, anyone beyond the 3 in all gets 503', { timeout: 300_000 }, async () => {
    const streams: UnreadStream[] = [];
    try {
      streams.push(await openUnreadStream(base, '?n=1000000', '127.0.0.61'), await openUnreadStream(base, '?n=1000000', '127.0.0.61'));
      const own = await getFrom(base, '/api/generate_wallets?n=1000', '127.0.0.61', { accept: 'application/x-ndjson' });
      assert.equal(own.status, 429);
      const ownProblem = problemOf(own);
      assert.equal(ownProblem.code, 'RATE_LIMITED');
      assert.match(ownProblem.detail, /This client has 2 wallet streams open; at most 2 at once per client \(MAX_WALLET_STREAMS_PER_CLIENT\)/);
      // A JSON answer is not a stream: the same client still gets one.
      assert.equal((await getFrom(base, '/api/generate_wallets?n=1000', '127.0.0.61')).status, 200);

      streams.push(await openUnreadStream(base, '?n=1000000', '127.0.0.62'));
      assert.deepEqual(streams.map((s) => s.status), [200, 200, 200]);
      const full = await getFrom(base, '/api/generate_wallets?n=1000', '127.0.0.63', { accept: 'application/x-ndjson' });
      assert.equal(full.status, 503);
      const problem = problemOf(full);
      assert.equal(problem.code, 'SERVICE_UNAVAILABLE');
      assert.match(problem.detail, /3 wallet streams open, its limit \(MAX_WALLET_STREAMS\)/);
    } finally {
      await closeAll(streams.map((s) => ({ close: () => s.socket.destroy() })));
    }
  });

  it('a client is an IPv6 /64: two addresses of one /64 share the cap, another /64 has its own', { timeout: 300_000 }, async () => {
    const searches: ReadStream[] = [];
    const from = (address: string) => ({ 'x-forwarded-for': address });
    try {
      const admitted = occurrences(t.logs(), ADMITTED);
      searches.push(openReadStream(base, HOPELESS, '127.0.0.71', from('2001:db8:1:2::1')), openReadStream(base, HOPELESS, '127.0.0.71', from('2001:db8:1:2:ffff:ffff:ffff:fffe')));
      await until(() => occurrences(t.logs(), ADMITTED) === admitted + 2, 'two searches of one /64 to be admitted');
      const sameSubnet = await getFrom(base, `/api/generate_wallets${HOPELESS}`, '127.0.0.71', { accept: 'application/x-ndjson', ...from('2001:db8:1:2:abcd::7') });
      assert.equal(sameSubnet.status, 429, 'a third address of the same /64 is the same client');
      assert.equal(problemOf(sameSubnet).code, 'RATE_LIMITED');
      // Another /64 is another client (the total cap of 3 still has one place).
      const otherSubnet = await getFrom(base, '/api/generate_wallets?n=1&suffix=1', '127.0.0.71', from('2001:db8:1:3::1'));
      assert.equal(otherSubnet.status, 200, otherSubnet.body.slice(0, 300));
    } finally {
      await closeAll(searches);
    }
  });
});
