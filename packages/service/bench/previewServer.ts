/**
 * The server side of `npm run bench:preview` (bench/preview.ts forks this file, so the client's
 * work never runs on the server's event loop): the real app on a real socket, on the embedded
 * local chain (in test mode, for `localnet_setAccount`). PREVIEW_CHAIN=embedded (the default): the
 * chain in this same process, as `npm start` builds it without SOLANA_RPC_URL. PREVIEW_CHAIN=separate:
 * the chain in a child process of its own (bench/chainServer.ts), as a real cluster's RPC node is
 * another machine. Builds the large wallet, then answers the parent's IPC requests for memory,
 * event-loop and CPU figures.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ChainServerReady, ChainServerStats } from './chainServer.ts';
import { ask, forkServer } from './childServer.ts';
import { generateKeyPairSigner, getBase64Decoder, type Address } from '@solana/kit';
import { AccountState, getMintEncoder, getTokenEncoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  getMintEncoder as getMint2022Encoder,
  getTokenEncoder as getToken2022Encoder,
  TOKEN_2022_PROGRAM_ADDRESS,
} from '@solana-program/token-2022';
import { buildApp } from '../src/app.ts';
import { createChainAdapter } from '../src/chain/chainAdapter.ts';
import { loadConfig } from '../src/config.ts';
import { startLocalnet } from '@cinder/localnet';
import { createLogger } from '../src/logger.ts';
import { createWalletGenerator } from '../src/wallets/index.ts';

export type ChainPlacement = 'embedded' | 'separate';

export interface PreviewServerReady {
  type: 'ready';
  url: string;
  chain: ChainPlacement;
  /** The local chain's JSON-RPC: in this same process (embedded), or in its child (separate). */
  rpcUrl: string;
  owner: Address;
  accounts: number;
  mints: number;
}

export interface PreviewServerStats {
  type: 'stats';
  rss: number;
  heapUsed: number;
  /** Peak resident set size of this process so far, bytes. */
  maxRss: number;
  /** Event-loop delay since the last reset, ms. */
  loopP99: number;
  loopMax: number;
  /** CPU time (user + system) of this process so far, ms: the service, and the chain when embedded. */
  cpuMs: number;
  /** CPU time of the chain's own process so far, ms (separate only). */
  chainCpuMs: number | null;
}

const base64 = getBase64Decoder();

async function rpc(url: string, calls: { method: string; params: unknown[] }[]): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
  });
  const answers = (await response.json()) as { error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`localnet_setAccount: ${failed.error!.message}`);
}

/**
 * A wallet of `count` empty token accounts, half of each token program, each of its own mint (the
 * worst case: one mint read per account), written straight into the chain's state.
 */
async function buildWallet(rpcUrl: string, count: number): Promise<Address> {
  const owner = (await generateKeyPairSigner()).address;
  const authority = (await generateKeyPairSigner()).address;
  const mintRent = 1_461_600; // rent-exempt minimum of an 82-byte mint
  const accountRent = 2_039_280; // of a 165-byte token account
  const calls: { method: string; params: unknown[] }[] = [
    { method: 'localnet_setAccount', params: [owner, { lamports: 1_000_000_000 }] },
  ];
  for (let i = 0; i < count; i++) {
    const classic = i % 2 === 0;
    const [mint, account] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const program = classic ? TOKEN_PROGRAM_ADDRESS : TOKEN_2022_PROGRAM_ADDRESS;
    const mintFields = { mintAuthority: authority, supply: 0n, decimals: 6, isInitialized: true, freezeAuthority: null };
    const mintData = classic ? getMintEncoder().encode(mintFields) : getMint2022Encoder().encode({ ...mintFields, extensions: null });
    const tokenFields = {
      mint: mint.address,
      owner,
      amount: 0n,
      delegate: null,
      state: AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    };
    const tokenData = classic ? getTokenEncoder().encode(tokenFields) : getToken2022Encoder().encode({ ...tokenFields, extensions: null });
    calls.push(
      { method: 'localnet_setAccount', params: [mint.address, { lamports: mintRent, data: base64.decode(mintData), owner: program }] },
      { method: 'localnet_setAccount', params: [account.address, { lamports: accountRent, data: base64.decode(tokenData), owner: program }] },
    );
  }
  for (let i = 0; i < calls.length; i += 500) await rpc(rpcUrl, calls.slice(i, i + 500));
  return owner;
}

async function main(): Promise<void> {
  const accounts = Number(process.env.BENCH_ACCOUNTS ?? 3000);
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    // The figures are about the work, not about the limits: none is met here.
    RATE_LIMIT_BURN_PER_MIN: '1000000',
    RATE_LIMIT_PREVIEW_PER_MIN: '1000000',
    RATE_LIMIT_STATUS_PER_MIN: '1000000',
    PREVIEWS_PER_CLIENT: '1000',
  });
  const logger = createLogger(config.logLevel);
  const placement: ChainPlacement = process.env.PREVIEW_CHAIN === 'separate' ? 'separate' : 'embedded';
  const localnet = placement === 'embedded' ? await startLocalnet({ port: 0, testMode: true, logger }) : null;
  const chainServer = placement === 'separate' ? await forkServer<ChainServerReady>(new URL('./chainServer.ts', import.meta.url), ['--import', 'tsx']) : null;
  const rpcUrl = localnet?.rpcUrl ?? chainServer!.ready.rpcUrl;
  const chain = createChainAdapter({ rpcUrl, commitment: config.commitment });
  const wallets = createWalletGenerator({ vanityTimeoutMs: config.vanityTimeoutMs });
  const app = await buildApp({ config, logger, chain, wallets });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const owner = await buildWallet(rpcUrl, accounts);

  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'reset') {
      loop.reset();
      process.send!({ type: 'reset' });
    } else if (message.type === 'stats') {
      void sendStats();
    } else if (message.type === 'stop') {
      void (async () => {
        loop.disable();
        await app.close();
        await wallets.close();
        await localnet?.close();
        chainServer?.child.send({ type: 'stop' });
        process.exit(0);
      })();
    }
  });
  async function sendStats(): Promise<void> {
    const memory = process.memoryUsage();
    const cpu = process.cpuUsage();
    const chainCpuMs = chainServer ? (await ask<ChainServerStats>(chainServer.child, 'stats')).cpuMs : null;
    const stats: PreviewServerStats = {
      type: 'stats',
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      maxRss: process.resourceUsage().maxRSS * 1024,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      cpuMs: (cpu.user + cpu.system) / 1000,
      chainCpuMs,
    };
    process.send!(stats);
  }
  const ready: PreviewServerReady = { type: 'ready', url, chain: placement, rpcUrl, owner, accounts, mints: accounts };
  process.send!(ready);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
