/**
 * The fleet part of `npm run bench:any-size`: `cinder reclaim --keys-file F --fee-payer K
 * --destination A --yes` (the real binary, as a person runs it) with 1,000 wallets of 0 SOL, each
 * holding one empty SPL Token account and one empty Token-2022 account, against the real app whose
 * RPC has a real cluster's timing (test/chain/rpcProxy.ts: a sent transaction reads as unknown for
 * 0.4 s and as processed until 1.2 s after it was sent). The time is from the command's start to its
 * exit, which comes once the last transaction has landed (it follows every one to its end).
 *
 * Measured twice in the same process, each on a fresh chain and fleet (FLEET_VARIANTS): the command
 * as it is (the wallets prepared in parts of PART_OWNERS, each part relayed as soon as it is signed
 * while the next is prepared), and the baseline, CINDER_FLEET_PART_OWNERS=1000 (one prepare request
 * for all 1,000 wallets, then its relays, RELAYS_AT_ONCE at a time as in the command): the same
 * command and relays, so that the difference is what preparing in parts and relaying while
 * preparing saves.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createFundedSigner, createTestApp, createTestKey, getLamports, startTestChain, writeEmptyTokenAccounts } from '@cinder/testkit';
import { startRpcProxy } from '../test/chain/rpcProxy.ts';

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

/** The rows of the fleet's figures: a name, and the environment the command runs with. */
export const FLEET_VARIANTS: readonly (readonly [string, Readonly<Record<string, string>>])[] = [
  ['in parts (the command)', {}],
  ['baseline: one prepare', { CINDER_FLEET_PART_OWNERS: '1000' }],
];

export async function runFleet(wallets: number, timing: { unknownMs: number; processedUntilMs: number }, extraEnv: Readonly<Record<string, string>> = {}): Promise<FleetRun> {
  const chain = await startTestChain();
  const proxy = await startRpcProxy(chain.localnet.rpcUrl, { confirmation: timing });
  const t = await createTestApp({ logLevel: 'warn' }, { chain, chainAdapter: { rpcUrl: proxy.url } });
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
    const env = { PATH: process.env.PATH!, HOME: dir, CINDER_URL: url, ...extraEnv };

    const started = performance.now();
    const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(CINDER, ['reclaim', '--keys-file', 'fleet.keys', '--fee-payer', 'payer.json', '--destination', destination, '--yes'], { cwd: dir, env, maxBuffer: 64 << 20 }, (error, _stdout, stderr) =>
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
    await proxy.close();
    await chain.close();
    await rm(dir, { recursive: true, force: true });
  }
}
