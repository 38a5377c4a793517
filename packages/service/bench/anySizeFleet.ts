/**
 * The fleet part of `npm run bench:any-size`: `cinder reclaim --keys-file F --fee-payer K
 * --destination A --yes` (the real binary, as a person runs it) with 1,000 wallets of 0 SOL, each
 * holding one empty SPL Token account and one empty Token-2022 account, against the real app whose
 * RPC has a real cluster's timing (test/chain/rpcProxy.ts: a sent transaction reads as unknown for
 * 0.4 s and as processed until 1.2 s after it was sent). The time is from the command's start to its
 * exit, which comes once the last transaction has landed (it follows every one to its end).
 *
 * Measured in the same process, each on a fresh chain and fleet (FLEET_VARIANTS):
 * - the command as it is (the wallets prepared in parts of PART_OWNERS, each part relayed as soon as
 *   it is signed while the next is prepared), with the chain and its timing proxy in a process of
 *   their own (bench/chainServer.ts), as a cluster's RPC node is another machine;
 * - the baseline, CINDER_FLEET_PART_OWNERS=1000 (one prepare request for all 1,000 wallets, then its
 *   relays, RELAYS_AT_ONCE at a time as in the command): the same command and relays, so that the
 *   difference is what preparing in parts and relaying while preparing saves;
 * - the command on a busy cluster (the chain's busyCluster fault) with `--priority-fee auto`;
 * - the command with the chain in the service's own process, as `npm start` runs it without an RPC
 *   URL: the chain's work (simulations, executions, JSON) then shares the service's thread.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createSolanaRpc, createSolanaRpcSubscriptions } from '@solana/kit';
import { createFundedSigner, createTestApp, createTestKey, getLamports, rpcResult, startTestChain, writeEmptyTokenAccounts, type TestChain } from '@cinder/testkit';
import { startRpcProxy } from '../test/chain/rpcProxy.ts';
import type { ChainServerReady } from './chainServer.ts';
import { forkServer } from './childServer.ts';

const CINDER = fileURLToPath(new URL('../../client/bin/cinder.js', import.meta.url));
const RENT = 2_039_280n;

export interface FleetRun {
  wallets: number;
  landed: number;
  dropped: number;
  closed: number;
  feeLamports: bigint;
  ms: number;
}

/** Writes in `width` at a time: the chain's RPC answers one request at a time anyway. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

export interface FleetVariant {
  name: string;
  /** The environment the command runs with. */
  env: Readonly<Record<string, string>>;
  /** Where the chain (and its timing proxy) runs: a process of its own, or the service's. */
  chain: 'own process' | 'service process';
  /** The busyCluster fault, the command asking for `--priority-fee auto`. */
  busy: boolean;
}

/** A congested cluster's median price and what paying less costs: 20 slots (8 s) of waiting (as the wallet's rows). */
const BUSY_CLUSTER = { medianMicroLamports: 2_000, waitSlots: 20 };

/** The rows of the fleet's figures. */
export const FLEET_VARIANTS: readonly FleetVariant[] = [
  { name: 'in parts (the command)', env: {}, chain: 'own process', busy: false },
  { name: 'baseline: one prepare', env: { CINDER_FLEET_PART_OWNERS: '1000' }, chain: 'own process', busy: false },
  { name: 'in parts, busy, fee auto', env: {}, chain: 'own process', busy: true },
  { name: "in parts, chain in service's", env: {}, chain: 'service process', busy: false },
];

/**
 * The chain of bench/chainServer.ts, in a process of its own, as the TestChain the testkit's
 * helpers take: they reach it over JSON-RPC only. Its LiteSVM is in the other process.
 */
async function chainInOwnProcess(timing: { unknownMs: number; processedUntilMs: number }): Promise<{ chain: TestChain; serviceRpcUrl: string }> {
  const server = await forkServer<ChainServerReady>(new URL('./chainServer.ts', import.meta.url), ['--import', 'tsx'], {
    CHAIN_CONFIRMATION: `${timing.unknownMs},${timing.processedUntilMs}`,
  });
  const { rpcUrl, wsUrl, proxyUrl } = server.ready;
  const close = () =>
    new Promise<void>((resolve) => {
      server.child.once('exit', () => resolve());
      server.child.send({ type: 'stop' });
    });
  const localnet = {
    rpcUrl,
    wsUrl,
    get svm(): never {
      throw new Error('the chain runs in a process of its own: its LiteSVM is not in this one');
    },
    close,
  };
  return { chain: { localnet, rpc: createSolanaRpc(rpcUrl), rpcSubscriptions: createSolanaRpcSubscriptions(wsUrl), close }, serviceRpcUrl: proxyUrl! };
}

async function chainInServiceProcess(timing: { unknownMs: number; processedUntilMs: number }): Promise<{ chain: TestChain; serviceRpcUrl: string }> {
  const chain = await startTestChain();
  const proxy = await startRpcProxy(chain.localnet.rpcUrl, { confirmation: timing });
  const close = async () => {
    await proxy.close();
    await chain.close();
  };
  return { chain: { ...chain, close }, serviceRpcUrl: proxy.url };
}

export async function runFleet(wallets: number, timing: { unknownMs: number; processedUntilMs: number }, variant: FleetVariant): Promise<FleetRun> {
  const { chain, serviceRpcUrl } = variant.chain === 'own process' ? await chainInOwnProcess(timing) : await chainInServiceProcess(timing);
  if (variant.busy) {
    // A full window of recent slots, as a cluster always has: the fault's fees are read over 150 slots.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [200]);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ busyCluster: BUSY_CLUSTER }]);
  }
  const t = await createTestApp({ logLevel: 'warn' }, { chain, chainAdapter: { rpcUrl: serviceRpcUrl } });
  const dir = await mkdtemp(join(tmpdir(), 'cinder-bench-fleet-'));
  try {
    const owners = await Promise.all(Array.from({ length: wallets }, () => createTestKey()));
    await inBatches(owners, 25, async (owner) => {
      await writeEmptyTokenAccounts(chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
      await writeEmptyTokenAccounts(chain, owner.address, 1, TOKEN_2022_PROGRAM_ADDRESS);
    });
    const { signer: feePayer, secretKey } = await createFundedSigner(chain, 10_000_000_000n);
    const destination = (await createTestKey()).address;
    await writeFile(join(dir, 'fleet.keys'), owners.map((o) => o.base58SecretKey).join('\n') + '\n', { mode: 0o600 });
    await writeFile(join(dir, 'payer.json'), JSON.stringify([...secretKey]), { mode: 0o600 });
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const payerBefore = await getLamports(chain, feePayer.address);
    const env = { PATH: process.env.PATH!, HOME: dir, CINDER_URL: url, ...variant.env };

    const started = performance.now();
    const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const args = ['reclaim', '--keys-file', 'fleet.keys', '--fee-payer', 'payer.json', '--destination', destination, '--yes', ...(variant.busy ? ['--priority-fee', 'auto'] : [])];
      execFile(CINDER, args, { cwd: dir, env, maxBuffer: 64 << 20 }, (error, _stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
    const ms = performance.now() - started;
    if (run.code !== 0) throw new Error(`cinder reclaim exited ${run.code}: ${run.stderr.slice(-1000)}`);

    // Checked, so that a figure is never printed for a job that did not do what it says.
    const state = JSON.parse(await readFile(join(dir, 'fleet.keys.reclaim-state.json'), 'utf8')) as { transactions: { closedAccounts: string[]; feeLamports: string; status: string }[] };
    const landed = state.transactions.filter((tx) => tx.status === 'success');
    const closed = landed.reduce((n, tx) => n + tx.closedAccounts.length, 0);
    const feeLamports = landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n);
    if (closed !== 2 * wallets) throw new Error(`${closed} accounts closed of ${2 * wallets}`);
    if ((await getLamports(chain, destination)) !== BigInt(2 * wallets) * RENT) throw new Error('the destination did not receive every rent');
    if (payerBefore - (await getLamports(chain, feePayer.address)) !== feeLamports) throw new Error('the fee payer did not pay exactly the stated fees');
    return { wallets, landed: landed.length, dropped: state.transactions.length - landed.length, closed, feeLamports, ms };
  } finally {
    await t.close();
    await chain.close();
    await rm(dir, { recursive: true, force: true });
  }
}
