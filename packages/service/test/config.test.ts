import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('loadConfig', () => {
  it('has the contract defaults (a deployment: an RPC URL is set)', () => {
    const config = loadConfig({ SOLANA_RPC_URL: 'https://api.devnet.solana.com' });
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.solanaRpcUrl, 'https://api.devnet.solana.com');
    assert.equal(config.commitment, 'confirmed');
    assert.equal(config.maxPriorityFeeLamports, 10_000_000n);
    assert.equal(config.maxWalletsPerRequest, 10_000);
    assert.deepEqual(config.rateLimit, { burnPerMin: 10, generatePerMin: 60, walletsPerMin: 100_000 });
    assert.equal(config.operationDeadlineMs, 60_000);
    assert.equal(config.vanityTimeoutMs, 30_000);
    assert.equal(config.localnetPort, 8899);
    assert.equal(config.trustProxy, false);
    assert.deepEqual(config.apiKeys, []);
    assert.equal(config.rateLimitStatusPerMin, 300);
    assert.equal(config.rateLimitPreviewPerMin, 60);
    assert.equal(config.rateLimitOwnersPerMin, 10_000);
    assert.ok(Object.isFrozen(config));
  });

  it('without an RPC URL (the embedded chain, one person trying Cinder) the request budgets fit what the docs show; fairness caps stay', () => {
    const tryIt = loadConfig({});
    const deployment = loadConfig({ SOLANA_RPC_URL: 'http://127.0.0.1:8899' });
    assert.equal(tryIt.solanaRpcUrl, undefined);
    assert.deepEqual(tryIt.rateLimit, { burnPerMin: 1_000, generatePerMin: 1_000, walletsPerMin: 100_000_000 });
    assert.equal(tryIt.rateLimitStatusPerMin, 10_000);
    assert.equal(tryIt.rateLimitPreviewPerMin, 1_000);
    assert.equal(tryIt.rateLimitOwnersPerMin, 1_000_000);
    // A million streamed wallets (MAX_WALLETS_STREAMED) within one window: a stream never pauses.
    assert.ok(tryIt.rateLimit.walletsPerMin >= tryIt.maxWalletsStreamed * 10);
    for (const cap of ['previewsPerClient', 'maxConnections', 'maxConnectionsPerClient', 'maxWalletsPerRequest', 'maxOwnersPerRequest'] as const) {
      assert.equal(tryIt[cap], deployment[cap], cap);
    }
    // A loopback RPC URL is a deployment too: the mode follows the URL, never the address of a peer.
    assert.deepEqual(deployment.rateLimit, { burnPerMin: 10, generatePerMin: 60, walletsPerMin: 100_000 });
    // A variable set wins in both modes.
    assert.equal(loadConfig({ RATE_LIMIT_BURN_PER_MIN: '7' }).rateLimit.burnPerMin, 7);
    assert.equal(loadConfig({ RATE_LIMIT_WALLETS_PER_MIN: '9' }).rateLimit.walletsPerMin, 9);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0', PORT: '0', SOLANA_RPC_URL: 'https://api.devnet.solana.com', COMMITMENT: 'finalized', MAX_PRIORITY_FEE_SOL: '0.5',
      MAX_WALLETS_PER_REQUEST: '50', API_KEYS: 'a, b ,sha256:' + 'ab'.repeat(32), RATE_LIMIT_BURN_PER_MIN: '3', TRUST_PROXY: '2',
      LOG_LEVEL: 'warn', LOCALNET_PORT: '0', BURN_DEADLINE_MS: '1000',
    });
    assert.equal(config.port, 0);
    assert.equal(config.solanaRpcUrl, 'https://api.devnet.solana.com');
    assert.equal(config.commitment, 'finalized');
    assert.equal(config.maxPriorityFeeLamports, 500_000_000n);
    assert.equal(config.maxWalletsPerRequest, 50);
    assert.deepEqual(config.apiKeys, ['a', 'b', 'sha256:' + 'ab'.repeat(32)]);
    assert.equal(config.rateLimit.burnPerMin, 3);
    assert.equal(config.trustProxy, 2);
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.operationDeadlineMs, 1000);
  });

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ SOLANA_RPC_URL: '', PORT: '' }).port, 8080);
  });

  for (const [env, message] of [
    [{ PORT: 'eighty' }, /PORT must match pattern/],
    [{ PORT: '70000' }, /PORT must be a port number/],
    [{ SOLANA_RPC_URL: 'ftp://x' }, /SOLANA_RPC_URL must match pattern/],
    [{ COMMITMENT: 'final' }, /COMMITMENT/],
    [{ MAX_PRIORITY_FEE_SOL: '0.0000000001' }, /MAX_PRIORITY_FEE_SOL/],
    [{ MAX_WALLETS_PER_REQUEST: '0' }, /MAX_WALLETS_PER_REQUEST/],
    [{ API_KEYS: 'sha256:xyz' }, /sha256: entry/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
  ] as const) {
    it(`stops with a clear message for ${JSON.stringify(env)}`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));
    });
  }
});
