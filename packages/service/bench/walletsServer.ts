/**
 * The server side of `npm run bench` (bench/wallets.ts forks this file, so the load generator's
 * work never runs on the server's event loop). In this one process, on real sockets:
 *   - cinder:   the real app (buildApp) on the embedded local chain, as `npm start` builds it;
 *   - inline:   the same app with a generator that never uses the pool (crossover measurement);
 *   - pool:     the same app with a generator that always uses the pool (crossover measurement);
 *   - baseline: the typical implementation, web3.js v1 Keypair.generate + bs58 + Fastify's JSON.
 * Answers the parent's IPC requests for memory and event-loop figures.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildApp, type CinderApp } from '../src/app.ts';
import { createChainAdapter } from '../src/chain/chainAdapter.ts';
import { loadConfig } from '../src/config.ts';
import { startLocalnet } from '@cinder/localnet';
import { createLogger } from '../src/logger.ts';
import { createWalletGenerator, type WalletGenerator } from '../src/wallets/index.ts';

export interface ServerReady {
  type: 'ready';
  cinder: string;
  inline: string;
  pool: string;
  baseline: string;
  threads: number;
  vanityTimeoutMs: number;
}

export interface ServerStats {
  type: 'stats';
  rss: number;
  /** Peak resident set size of this process so far, bytes. */
  maxRss: number;
  /** Event-loop delay since the last reset, ms. */
  loopP99: number;
  loopMax: number;
}

const BENCH_VANITY_TIMEOUT_MS = 3000;

async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    VANITY_TIMEOUT_MS: String(BENCH_VANITY_TIMEOUT_MS),
    RATE_LIMIT_GENERATE_PER_MIN: '1000000000',
    RATE_LIMIT_WALLETS_PER_MIN: '1000000000000',
    API_KEYS: '',
    REDIS_URL: '',
  });
  const logger = createLogger(config.logLevel);
  const localnet = await startLocalnet({ port: 0, logger });
  const chain = createChainAdapter({ rpcUrl: localnet.rpcUrl, commitment: config.commitment });

  const generators: WalletGenerator[] = [];
  const apps: CinderApp[] = [];
  async function start(inlineMaxWallets?: number): Promise<string> {
    const wallets = createWalletGenerator({ vanityTimeoutMs: config.vanityTimeoutMs, ...(inlineMaxWallets === undefined ? {} : { inlineMaxWallets }) });
    generators.push(wallets);
    const app = await buildApp({ config, logger, chain, wallets });
    apps.push(app);
    return app.listen({ host: '127.0.0.1', port: 0 });
  }
  const cinder = await start();
  const inline = await start(Number.MAX_SAFE_INTEGER);
  const pool = await start(0);
  await Promise.all([generators[0]!.warmUp(), generators[2]!.warmUp()]);

  const baselineApp = Fastify({ logger: false });
  baselineApp.get('/api/generate_wallets', async (request) => {
    const n = Number((request.query as { n?: string }).n);
    const wallets: string[] = [];
    const keypairs: { address: string; privateKey: string }[] = [];
    for (let i = 0; i < n; i++) {
      const keypair = Keypair.generate();
      const address = keypair.publicKey.toBase58();
      wallets.push(address);
      keypairs.push({ address, privateKey: bs58.encode(keypair.secretKey) });
    }
    return { wallets, keypairs };
  });
  const baseline = await baselineApp.listen({ host: '127.0.0.1', port: 0 });

  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'reset') {
      loop.reset();
      process.send!({ type: 'reset' });
    } else if (message.type === 'stats') {
      const stats: ServerStats = {
        type: 'stats',
        rss: process.memoryUsage.rss(),
        maxRss: process.resourceUsage().maxRSS * 1024,
        loopP99: loop.percentile(99) / 1e6,
        loopMax: loop.max / 1e6,
      };
      process.send!(stats);
    } else if (message.type === 'stop') {
      void (async () => {
        loop.disable();
        await baselineApp.close();
        for (const app of apps) await app.close();
        for (const g of generators) await g.close();
        await localnet.close();
        process.exit(0);
      })();
    }
  });
  const ready: ServerReady = { type: 'ready', cinder, inline, pool, baseline, threads: generators[0]!.threads, vanityTimeoutMs: config.vanityTimeoutMs };
  process.send!(ready);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
