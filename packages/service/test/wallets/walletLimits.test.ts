/**
 * Who a client is (an IPv4 address, or an IPv6 /64) and the caps counted per client: the
 * variables that set them, their checks, and the caps' own accounting.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { isCinderError } from '../../src/errors.ts';
import { clientKeyOf } from '../../src/http/clientKey.ts';
import { createRunningCaps } from '../../src/wallets/admission.ts';

describe('clientKeyOf: one client per IPv4 address or IPv6 /64', () => {
  it('groups the addresses of one IPv6 /64, and only those', () => {
    const a = clientKeyOf('2001:db8:1:2::1');
    assert.equal(a, '2001:db8:1:2::');
    assert.equal(clientKeyOf('2001:db8:1:2:ffff:ffff:ffff:ffff'), a);
    assert.equal(clientKeyOf('2001:0DB8:0001:0002:abcd:0:0:7'), a, 'any spelling of the same /64');
    assert.notEqual(clientKeyOf('2001:db8:1:3::1'), a, 'the next /64 is another client');
    assert.notEqual(clientKeyOf('2001:db8:1:2:1::'), clientKeyOf('2001:db8:1:3:1::'));
  });

  it('keeps each IPv4 address apart, and an IPv4-mapped IPv6 address is the IPv4 address', () => {
    assert.equal(clientKeyOf('203.0.113.7'), '203.0.113.7');
    assert.notEqual(clientKeyOf('203.0.113.7'), clientKeyOf('203.0.113.8'));
    assert.equal(clientKeyOf('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(clientKeyOf('127.0.0.21'), '127.0.0.21');
  });
});

describe('the wallet limits in the configuration', () => {
  it('defaults', () => {
    assert.deepEqual(loadConfig({}).walletLimits, {
      streamReadTimeoutMs: 30_000,
      maxStreams: 64,
      maxStreamsPerClient: 4,
      maxVanitySearches: 16,
      maxVanitySearchesPerClient: 2,
      maxQueuedWallets: 200_000,
      maxQueuedWalletsPerClient: 50_000,
    });
  });

  it('reads every variable; a client\'s queue share defaults to a quarter of the queue', () => {
    const limits = loadConfig({
      WALLET_STREAM_READ_TIMEOUT_MS: '5000',
      MAX_WALLET_STREAMS: '10',
      MAX_WALLET_STREAMS_PER_CLIENT: '3',
      MAX_VANITY_SEARCHES: '6',
      MAX_VANITY_SEARCHES_PER_CLIENT: '1',
      MAX_QUEUED_WALLETS: '1000',
    }).walletLimits;
    assert.deepEqual(limits, {
      streamReadTimeoutMs: 5000,
      maxStreams: 10,
      maxStreamsPerClient: 3,
      maxVanitySearches: 6,
      maxVanitySearchesPerClient: 1,
      maxQueuedWallets: 1000,
      maxQueuedWalletsPerClient: 250,
    });
  });

  for (const [env, message] of [
    [{ WALLET_STREAM_READ_TIMEOUT_MS: '0' }, /WALLET_STREAM_READ_TIMEOUT_MS must match pattern/],
    [{ WALLET_STREAM_READ_TIMEOUT_MS: '30s' }, /WALLET_STREAM_READ_TIMEOUT_MS must match pattern/],
    [{ MAX_VANITY_SEARCHES_PER_CLIENT: '-1' }, /MAX_VANITY_SEARCHES_PER_CLIENT must match pattern/],
    [{ MAX_WALLET_STREAMS: '4', MAX_WALLET_STREAMS_PER_CLIENT: '5' }, /MAX_WALLET_STREAMS_PER_CLIENT \(5\) must not be more than MAX_WALLET_STREAMS \(4\)/],
    [{ MAX_VANITY_SEARCHES: '1' }, /MAX_VANITY_SEARCHES_PER_CLIENT \(2\) must not be more than MAX_VANITY_SEARCHES \(1\)/],
    [{ MAX_QUEUED_WALLETS_PER_CLIENT: '300000' }, /MAX_QUEUED_WALLETS_PER_CLIENT \(300000\) must not be more than MAX_QUEUED_WALLETS \(200000\)/],
  ] as const) {
    it(`stops with a clear message for ${JSON.stringify(env)}`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));
    });
  }
});

describe('createRunningCaps', () => {
  const caps = () => createRunningCaps({ perClient: 2, total: 3, what: 'things', perClientName: 'PER', totalName: 'ALL' });

  it('429 beyond a client\'s cap, 503 beyond the total, each with Retry-After; a refusal takes nothing', () => {
    const c = caps();
    c.acquire('ip:a');
    c.acquire('ip:a');
    assert.throws(() => c.acquire('ip:a'), (e: unknown) => isCinderError(e, 'RATE_LIMITED') && e.headers['retry-after'] === '5' && /at most 2 at once per client \(PER\)/.test(e.message));
    assert.equal(c.running('ip:a'), 2);
    c.acquire('ip:b');
    assert.throws(() => c.acquire('ip:c'), (e: unknown) => isCinderError(e, 'SERVICE_UNAVAILABLE') && e.headers['retry-after'] === '5' && /3 things open, its limit \(ALL\)/.test(e.message));
    assert.equal(c.running(), 3);
    assert.equal(c.running('ip:c'), 0);
  });

  it('a place given back (once, however often released) is free for anyone', () => {
    const c = caps();
    const release = c.acquire('ip:a');
    c.acquire('ip:a');
    c.acquire('ip:b');
    release();
    release();
    assert.equal(c.running(), 2);
    assert.equal(c.running('ip:a'), 1);
    c.acquire('ip:c');
    assert.throws(() => c.acquire('ip:d'), (e: unknown) => isCinderError(e, 'SERVICE_UNAVAILABLE'));
  });
});
