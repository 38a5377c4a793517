// Shared setup of the CLI tests: the real app on a port of its own with a scratch directory, the `cinder` binary run as a program (checked never to print a key), funded token holders, and child commands.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getBase58Decoder, type Address } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { createTestApp, createTestKey, type TestApp, type TestKey } from '@cinder/testkit';
import type { Config } from '@cinder/service';
import { createAta, createFundedSigner, createTestMint, mintTokens } from '@cinder/testkit';

export const BIN = fileURLToPath(new URL('../../bin/cinder.js', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The file's app, its address and its scratch directory, set once the hooks of useCliApp() have run. */
export let t: TestApp;
export let url: string;
export let dir: string;
/** Keys that no output of cinder() may contain. */
export const secrets: string[] = [];

const runner = { cinderUrl: false, timeoutMs: 60_000 };

/**
 * Registers the calling file's hooks: the real app (t) listening on a free port (url) and a fresh
 * directory under the system's temporary one (dir) before its tests; both closed and removed after.
 * cinderUrl: cinder() points the binary at this app (CINDER_URL) unless told another URL.
 * setUp: the file's own setup, run once app and dir are ready, in the same hook (top-level before
 * hooks do not wait for each other).
 * createApp: the file's own app (a chain behind a proxy of its own, say) instead of createTestApp(appConfig).
 */
export function useCliApp(
  dirPrefix: string,
  options: { cinderUrl?: boolean; timeoutMs?: number; setUp?: () => Promise<void>; appConfig?: Partial<Config>; createApp?: () => Promise<TestApp> } = {},
): void {
  const { setUp, appConfig, createApp, ...runnerOptions } = options;
  Object.assign(runner, runnerOptions);
  before(async () => {
    t = await (createApp ? createApp() : createTestApp(appConfig));
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    dir = await mkdtemp(join(tmpdir(), dirPrefix));
    await setUp?.();
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });
}

/** Runs the real binary (through its shebang), in dir with HOME=dir, with only the environment given. */
export function cinder(args: string[], options: { env?: Record<string, string>; cwd?: string; url?: string } = {}): Promise<Run> {
  const target = options.url ?? (runner.cinderUrl ? url : undefined);
  const env = { PATH: process.env.PATH!, HOME: dir, ...(target === undefined ? {} : { CINDER_URL: target }), ...options.env };
  return new Promise((resolve) => {
    execFile(BIN, args, { cwd: options.cwd ?? dir, env, timeout: runner.timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      for (const secret of secrets) assert.ok(!stdout.includes(secret) && !stderr.includes(secret), `cinder ${args[0]} never prints a key`);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * A fleet job's files in the file's directory: NAME.keys (the owners' keys, one per line) and
 * NAME.payer.json (a fee payer funded with `lamports`, as a solana-keygen array), with a destination
 * of its own. Every key is added to `secrets`, which no output of cinder() may contain.
 */
export async function writeFleetFiles(name: string, owners: readonly TestKey[], lamports: bigint) {
  const { signer: feePayer, secretKey } = await createFundedSigner(t.chain, lamports);
  const destination = (await createTestKey()).address;
  secrets.push(...owners.map((o) => o.base58SecretKey), JSON.stringify([...secretKey]));
  const keysFile = `${name}.keys`;
  const payerFile = `${name}.payer.json`;
  await writeFile(join(dir, keysFile), owners.map((o) => o.base58SecretKey).join('\n') + '\n', { mode: 0o600 });
  await writeFile(join(dir, payerFile), JSON.stringify([...secretKey]), { mode: 0o600 });
  return { feePayer, destination, keysFile, payerFile };
}

/** A funded owner of a fresh mint (6 decimals) holding `amount` of it; its key joins `secrets`. */
export async function holder(amount = 5_000_000n) {
  const { signer, secretKey } = await createFundedSigner(t.chain);
  const mint = await createTestMint(t.chain, signer, { decimals: 6 });
  const ata = await createAta(t.chain, signer, signer.address, mint);
  await mintTokens(t.chain, signer, mint, ata, amount);
  const base58 = getBase58Decoder().decode(secretKey);
  secrets.push(base58);
  return { address: signer.address, signer, mint, secretKey, base58, keygen: JSON.stringify([...secretKey]) };
}

export async function supplyOf(mint: Address) {
  return (await fetchMint(t.chain.rpc, mint)).data.supply;
}

/** Runs a command in `cwd` with only the environment given; any failure is a non-zero code. */
export function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 120_000) {
  return new Promise<Run>((resolve) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
