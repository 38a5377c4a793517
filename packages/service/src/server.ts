/**
 * Entry point: read the configuration, start the embedded local chain when no RPC URL is given,
 * build the app and listen. Everything else receives its dependencies from here.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { buildApp } from './app.ts';
import { createChainAdapter } from './chain/chainAdapter.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import type { Localnet } from '@cinder/localnet';
import { createLogger } from './logger.ts';
import { createWalletGenerator, walletGeneratorOptions } from './wallets/index.ts';
import { loadSponsor } from './keys/sponsor.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;
/**
 * In a checkout with its development dependencies, where `npm run demo:token` exists (the script and
 * tsx, which runs it); not in a production install. The same path from src/ and from dist/.
 */
function canRunDemoToken(): boolean {
  if (!existsSync(new URL('../../../scripts/demoToken.ts', import.meta.url))) return false;
  try {
    createRequire(import.meta.url).resolve('tsx');
    return true;
  } catch {
    return false;
  }
}

declare global {
  interface ImportMeta {
    /** True in the service's bundle (packages/service/bin/bundle.js defines it), absent elsewhere. */
    readonly cinderBundled?: true;
  }
}

/**
 * The local chain's package, in the same form as this module: its TypeScript sources beside these
 * sources (a test's TypeScript loader), its build (dist/) beside this build, and in the bundle a
 * chunk of it (the bundler resolves the name to the chain's build). Named by path in the build
 * because Node picks a package's "production" export only with a --conditions flag, and the
 * alternative, a module-resolution hook, runs every import of the process through a second thread
 * (a third of the service's start-up CPU).
 */
async function importLocalnet(): Promise<typeof import('@cinder/localnet')> {
  if (import.meta.url.endsWith('.ts') || import.meta.cinderBundled) return import('@cinder/localnet');
  const manifest = createRequire(import.meta.url).resolve('@cinder/localnet/package.json');
  return (await import(new URL('dist/index.js', pathToFileURL(manifest)).href)) as typeof import('@cinder/localnet');
}

/** The `npm run demo:token` command line for this server and chain: only the variables that differ from its defaults. */
function demoTokenCommand(serverUrl: string, localnet: Localnet): string {
  const rpcPort = Number(new URL(localnet.rpcUrl).port);
  const vars = [
    serverUrl === 'http://127.0.0.1:8080' ? '' : `CINDER_URL=${serverUrl} `,
    localnet.rpcUrl === 'http://127.0.0.1:8899' ? '' : `LOCALNET_RPC_URL=${localnet.rpcUrl} `,
    // demo:token expects the WebSocket on the next port, which LOCALNET_PORT=0 does not promise.
    Number(new URL(localnet.wsUrl).port) === rpcPort + 1 ? '' : `LOCALNET_WS_URL=${localnet.wsUrl} `,
  ];
  return `${vars.join('')}npm run demo:token`;
}

async function main(config: Config): Promise<void> {
  // One readable line per event for a person at a terminal; JSON lines for supervisors and pipes.
  const logger = createLogger(config.logLevel, undefined, {
    pretty: config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true),
  });
  // Before anything starts: a bad SPONSOR_KEYPAIR file stops the start (its message names the
  // path and the problem, never the content).
  const sponsor = config.sponsorKeypairPath ? await loadSponsor(config.sponsorKeypairPath) : null;
  if (sponsor) logger.info({ sponsor: sponsor.signer.address }, 'fee sponsor loaded (SPONSOR_KEYPAIR)');
  let localnet: Localnet | undefined;
  if (!config.solanaRpcUrl) {
    // Loaded only here: with an RPC URL the service never pays for LiteSVM and its programs.
    const { startLocalnet } = await importLocalnet();
    localnet = await startLocalnet({ port: config.localnetPort, logger, token2022NativeMint: true });
    logger.info({ rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl }, 'embedded local Solana chain started (no SOLANA_RPC_URL set)');
  }
  const rpcUrl = config.solanaRpcUrl ?? localnet!.rpcUrl;
  const chain = createChainAdapter({
    rpcUrl,
    commitment: config.commitment,
    maxRequestsPerSecond: config.solanaRpcMaxRps,
    // Only with an RPC URL: a WebSocket URL is meaningless without the node it belongs to.
    wsUrl: config.solanaRpcUrl ? config.solanaWsUrl : undefined,
  });
  // Its worker threads start on the first request that needs them (docs/wallets.md), not here.
  const wallets = createWalletGenerator(walletGeneratorOptions(config));
  const app = await buildApp({ config, logger, chain, wallets, sponsor });

  if (!LOOPBACK.test(config.host) && config.apiKeys.length === 0) {
    logger.warn(
      { host: config.host },
      'WARNING: listening on a non-loopback address without API_KEYS: anyone who can reach this port can use the service',
    );
    // Also on stderr, so that a quiet LOG_LEVEL (error, silent) cannot hide it.
    process.stderr.write(
      `cinder: WARNING: listening on ${config.host} (not loopback) without API_KEYS: anyone who can reach this port can use the service. Set API_KEYS, or HOST=127.0.0.1.\n`,
    );
  }
  const url = await app.listen({ host: config.host, port: config.port });
  process.stdout.write(
    `Cinder listening on ${url}\n` +
      `Web app (reclaim and burn with a browser wallet): ${url}/\n` +
      `API documentation (with "Try it out"): ${url}/docs\n` +
      `Guide (every route, the money rules, deployment): ${url}/guide\n` +
      (localnet ? `Local Solana chain: RPC ${localnet.rpcUrl}  WebSocket ${localnet.wsUrl}\n` : `Solana RPC: ${rpcUrl}\n`) +
      (localnet && canRunDemoToken() ? `A wallet with tokens to burn on it, in another terminal: ${demoTokenCommand(url, localnet)}\n` : ''),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // A burn in flight answers within BURN_DEADLINE_MS; a shutdown that outlasts it is stuck.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.operationDeadlineMs + 10_000).unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await wallets.close();
      await localnet?.close();
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

let config: Config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`cinder: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
main(config).catch((error: unknown) => {
  process.stderr.write(`cinder: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
