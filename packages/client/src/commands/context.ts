/**
 * What cli.ts hands to the commands that live in this directory (reclaim, relay, burn --unsigned):
 * its io, parsed options, client, key reader and retry loop, and the two error kinds its main()
 * knows how to report (a usage error: exit 2; a failure: exit 1 or the code given). Passing them
 * in, rather than importing them from cli.ts, keeps the modules free of an import cycle.
 *
 * Also the small formatting and checking helpers those commands share.
 */
import { createKeyPairSignerFromBytes, createKeyPairSignerFromPrivateKeyBytes, getBase58Encoder, isAddress } from '@solana/kit';
import type { CinderClient } from '../index.js';

export interface CommandIo {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  cwd: string;
}

export interface CommandContext {
  io: CommandIo;
  values: Record<string, unknown>;
  positionals: string[];
  client(): CinderClient;
  /** The key of --key-file / --key-env, as the SDK takes it (never printed). */
  readKey(): Promise<string | number[]>;
  /** Runs a call, waiting out 429 / 503 / 409 REQUEST_IN_PROGRESS as the CLI does, saying so on stderr. */
  patiently<T>(call: () => Promise<T>): Promise<T>;
  /** An error main() reports as a usage error (exit 2). */
  usage(message: string): Error;
  /** An error main() reports as a failure (exit 1, or the code given). */
  fail(message: string, exitCode?: number): Error;
  /** A progress bar of `total` `what` on standard error when it is a terminal (else nothing); stop() may be called more than once. */
  progress(total: number, what: string): Promise<Progress>;
}

export interface Progress {
  update(done: number): void;
  stop(): void;
}

export const EXIT_CODES = { OK: 0, FAILED: 1, USAGE: 2, PENDING: 3 } as const;

export function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((done, fail) => stream.write(text, (error) => (error ? fail(error) : done())));
}

export function stringOption(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** 0: done; 1: a transaction failed; 3: one is still pending (check again with cinder status). */
export function exitForStatus(status: string): number {
  return status === 'failed' ? EXIT_CODES.FAILED : status === 'pending' ? EXIT_CODES.PENDING : EXIT_CODES.OK;
}

/** "--priority-fee 0.000005": an amount of SOL with at most 9 decimals (lamport precision). */
export function priorityFeeOption(ctx: CommandContext, fallback?: string): number {
  const fee = stringOption(ctx.values, 'priority-fee') ?? fallback;
  if (fee === undefined) throw ctx.usage('--priority-fee is required (the total priority fee in SOL, e.g. 0.000005)');
  if (!/^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/.test(fee)) throw ctx.usage('--priority-fee must be an amount of SOL with at most 9 decimals, e.g. 0.000005');
  return Number(fee);
}

/**
 * A wallet address given as an argument. Checked here, before it is printed or sent: a value that
 * is not a 32-byte address may be a private key pasted in the wrong place, so it is never echoed.
 */
/** The number of bytes `text` decodes to as base58, or null when it is not base58. */
function base58Length(text: string): number | null {
  try {
    return getBase58Encoder().encode(text).length;
  } catch {
    return null; // not base58 at all
  }
}

/**
 * A value given where a name belongs (a file name, a variable's name), to quote in a message: not
 * when it could be the key itself (`--key-file <the key>`, `--key-env $KEY`): 32 or 64 bytes of
 * base58, or a byte array.
 */
export function quotedUnlessKey(text: string): string {
  const length = base58Length(text.trim());
  return length === 32 || length === 64 || text.trim().startsWith('[') ? '(not shown: it looks like a private key)' : text;
}

export function addressOption(ctx: CommandContext, name: string, text: string): string {
  if (isAddress(text)) return text;
  const length = base58Length(text);
  if (length === 64 || length === 32) {
    // 32 bytes that fail isAddress cannot happen (any 32 bytes are an address); 64 is a secret key.
    throw ctx.usage(`${name} must be a wallet address; this value is 64 bytes, the size of a private key. Never give a key as an argument (use --key-file or --key-env).`);
  }
  throw ctx.usage(`${name} must be a base58 wallet address of 32 bytes`);
}

/** "--burn MINT,MINT": mint addresses, each checked (and never echoed when it is not one). */
export function mintListOption(ctx: CommandContext): string[] | undefined {
  const text = stringOption(ctx.values, 'burn');
  if (text === undefined) return undefined;
  const mints = text.split(',').map((m) => m.trim()).filter((m) => m !== '');
  if (mints.length === 0) throw ctx.usage('--burn takes mint addresses separated by commas, e.g. --burn MINT1,MINT2');
  mints.forEach((mint, i) => {
    if (!isAddress(mint)) throw ctx.usage(`--burn: item ${i + 1} is not a base58 mint address of 32 bytes`);
  });
  return mints;
}

export function feePayerOption(ctx: CommandContext): 'owner' | 'sponsor' | undefined {
  const feePayer = stringOption(ctx.values, 'fee-payer');
  if (feePayer === undefined) return undefined;
  if (feePayer !== 'owner' && feePayer !== 'sponsor') throw ctx.usage('--fee-payer must be owner or sponsor');
  return feePayer;
}

/**
 * The wallet address of a key in one of the formats the server accepts (base58 of the 64-byte
 * secret key or of the 32-byte seed, or the 64 numbers of a solana-keygen file), derived here so
 * that a preview can be shown before the key is sent anywhere. null when the text is not such a
 * key (a 64-byte key whose halves do not match included): the caller says so without the key.
 */
export async function addressOfKey(key: string | readonly number[]): Promise<string | null> {
  let bytes: Uint8Array;
  try {
    bytes = typeof key === 'string' ? Uint8Array.from(getBase58Encoder().encode(key.trim())) : Uint8Array.from(key);
  } catch {
    return null;
  }
  try {
    if (typeof key !== 'string' && !key.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return null;
    // kit checks that the public half of a 64-byte key belongs to its seed.
    if (bytes.length === 64) return (await createKeyPairSignerFromBytes(bytes)).address;
    if (bytes.length === 32) return (await createKeyPairSignerFromPrivateKeyBytes(bytes)).address;
    return null;
  } catch {
    return null;
  } finally {
    bytes.fill(0);
  }
}

const LAMPORTS_PER_SOL = 1_000_000_000n;

/** Lamports (a decimal string or bigint) in SOL, exact: 2039280 → "0.00203928"; `signed` adds "+" to a gain. */
export function sol(lamports: string | bigint, signed = false): string {
  const value = BigInt(lamports);
  const magnitude = value < 0n ? -value : value;
  const fraction = (magnitude % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  const sign = value < 0n ? '-' : signed && value > 0n ? '+' : '';
  return `${sign}${magnitude / LAMPORTS_PER_SOL}${fraction ? `.${fraction}` : ''}`;
}

/** A plain text table: columns padded to their widest cell, numbers (`right`) aligned right. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (right.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
