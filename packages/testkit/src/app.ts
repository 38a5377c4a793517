import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { buildApp, type CinderApp } from '@cinder/service';
import { createChainAdapter, type ChainAdapterOptions } from '@cinder/service';
import { loadConfig, type Config } from '@cinder/service';
import type { Sponsor } from '@cinder/service';
import { createLogger } from '@cinder/service';
import { createWalletGenerator, walletGeneratorOptions } from '@cinder/service';
import { startTestChain, type TestChain } from './localChain.ts';
import type { Timing } from '@cinder/localnet';

/** SERVER_SECRET of every app createTestApp builds (spawned servers that share a Redis with them use it too). */

/**
 * The limits a service has by default once it is given an RPC URL (a deployment), in place of the
 * test app's raised ones: for the tests and benches that show a job fits them.
 */
export function deploymentLimits(): Partial<Config> {
  const deployment = loadConfig({ SOLANA_RPC_URL: 'http://127.0.0.1:8899' });
  return {
    rateLimit: deployment.rateLimit,
    rateLimitStatusPerMin: deployment.rateLimitStatusPerMin,
    rateLimitPreviewPerMin: deployment.rateLimitPreviewPerMin,
    rateLimitOwnersPerMin: deployment.rateLimitOwnersPerMin,
    maxOwnersPerRequest: deployment.maxOwnersPerRequest,
  };
}
export const TEST_SERVER_SECRET = 'cinder-test-server-secret-not-for-production';

export interface TestApp {
  app: CinderApp;
  chain: TestChain;
  config: Config;
  /** Everything the app logged so far (pino JSON lines, level debug and up). */
  logs(): string;
  close(): Promise<void>;
}

/**
 * A counter or gauge of the app's /metrics: the sum of its series whose labels include `labels`
 * (say 'method="sendTransaction"', every outcome), 0 before it has any.
 */
export async function metricValue(t: TestApp, name: string, labels = ''): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  return text
    .split('\n')
    .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** The real app over the real JSON-RPC path to a fresh local chain, with its log output captured. */
export async function createTestApp(
  overrides: Partial<Config> = {},
  /** sponsor: a fee sponsor (fund its address on the chain first), as SPONSOR_KEYPAIR would load. */
  /** programs: sBPF programs the fresh chain loads at genesis (a stand-in at Lighthouse's address, say). */
  /** v1Transactions: false starts the fresh chain without the v1 gate (the cluster as before it). */
  /** timing: 'validator' gives the fresh chain a cluster's confirmation timing (see startTestChain). */
  options: {
    chain?: TestChain;
    chainAdapter?: Partial<ChainAdapterOptions>;
    sponsor?: Sponsor;
    programs?: { address: string; bytes: Uint8Array }[];
    v1Transactions?: boolean;
    timing?: Timing;
  } = {},
): Promise<TestApp> {
  const chain =
    options.chain ??
    (await startTestChain({
      ...(options.programs ? { programs: options.programs } : {}),
      ...(options.v1Transactions === false ? { v1Transactions: false } : {}),
      ...(options.timing ? { timing: options.timing } : {}),
    }));
  // Limits high enough that only tests about rate limiting (which override them) ever meet one.
  const defaults = loadConfig({
    LOG_LEVEL: 'debug',
    RATE_LIMIT_BURN_PER_MIN: '100000',
    RATE_LIMIT_GENERATE_PER_MIN: '100000',
    RATE_LIMIT_WALLETS_PER_MIN: '100000000',
    RATE_LIMIT_STATUS_PER_MIN: '100000',
    // One secret for every test app, as every instance on one Redis must share it.
    SERVER_SECRET: TEST_SERVER_SECRET,
  });
  // Each app its own idempotency journal (without Redis), unless the test shares one on purpose.
  const stateDir = overrides.stateDir ?? (await mkdtemp(join(tmpdir(), 'cinder-state-')));
  const config = Object.freeze({ ...defaults, stateDir, ...overrides });
  const chunks: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger(config.logLevel, logStream);
  const chainAdapter = createChainAdapter({
    rpcUrl: chain.localnet.rpcUrl,
    commitment: config.commitment,
    maxRequestsPerSecond: config.solanaRpcMaxRps,
    pollIntervalMs: 50,
    // The test chain makes a slot every 50 ms, 8 times a real cluster's pace: the cached blockhash
    // ages 8 times faster too.
    blockhashRefreshAfterMs: 600,
    blockhashMaxAgeMs: 2500,
    ...options.chainAdapter,
  });
  const wallets = createWalletGenerator(walletGeneratorOptions(config));
  const app = await buildApp({ config, logger, chain: chainAdapter, wallets, sponsor: options.sponsor ?? null });
  return {
    app,
    chain,
    config,
    logs: () => chunks.join(''),
    async close() {
      await app.close();
      await wallets.close();
      if (!options.chain) await chain.close();
      if (!overrides.stateDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
}
