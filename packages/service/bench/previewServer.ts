/**
 * The server side of `npm run bench:preview` (bench/preview.ts forks this file, so the client's
 * work never runs on the server's event loop). In this one process, as `npm start` builds it: the
 * embedded local chain (in test mode, for `localnet_setAccount`) and the real app on a real socket.
 * Builds the large wallet, then answers the parent's IPC requests for memory and event-loop figures.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
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
import { startLocalnet, type Localnet } from '@cinder/localnet';
import { createLogger } from '../src/logger.ts';
import { createWalletGenerator } from '../src/wallets/index.ts';

export interface PreviewServerReady {
  type: 'ready';
  url: string;
  /** The embedded chain's JSON-RPC, in this same process (as `npm start` runs it). */
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
async function buildWallet(localnet: Localnet, count: number): Promise<Address> {
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
  for (let i = 0; i < calls.length; i += 500) await rpc(localnet.rpcUrl, calls.slice(i, i + 500));
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
  const localnet = await startLocalnet({ port: 0, testMode: true, logger });
  const chain = createChainAdapter({ rpcUrl: localnet.rpcUrl, commitment: config.commitment });
  const wallets = createWalletGenerator({ vanityTimeoutMs: config.vanityTimeoutMs });
  const app = await buildApp({ config, logger, chain, wallets });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const owner = await buildWallet(localnet, accounts);

  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'reset') {
      loop.reset();
      process.send!({ type: 'reset' });
    } else if (message.type === 'stats') {
      const memory = process.memoryUsage();
      const stats: PreviewServerStats = {
        type: 'stats',
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        maxRss: process.resourceUsage().maxRSS * 1024,
        loopP99: loop.percentile(99) / 1e6,
        loopMax: loop.max / 1e6,
      };
      process.send!(stats);
    } else if (message.type === 'stop') {
      void (async () => {
        loop.disable();
        await app.close();
        await wallets.close();
        await localnet.close();
        process.exit(0);
      })();
    }
  });
  const ready: PreviewServerReady = { type: 'ready', url, rpcUrl: localnet.rpcUrl, owner, accounts, mints: accounts };
  process.send!(ready);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
