/**
 * What cli.ts hands to the commands that live in this directory (every command: wallets, derive,
 * burn, status, reclaim, relay): its io, parsed options, client (with the CLI's retry limits: the
 * SDK's one retry policy, which says on standard error when it waits), and the two error kinds its main()
 * knows how to report (a usage error: exit 2; a failure: exit 1 or the code given). Passing them
 * in, rather than importing them from cli.ts, keeps the modules free of an import cycle.
 *
 * Also the small formatting and checking helpers every command shares, among them the one status →
 * exit-code rule and the one status block.
 */
import { getBase58Encoder, isAddress } from '@solana/kit';
import type { CinderClient, OperationResult, RetryOptions } from '../index.ts';

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
  /**
   * The SDK's client for --url / --api-key; its retries (429, 503, 409 REQUEST_IN_PROGRESS) are said
   * on standard error. `limits`: the retry policy's, when the command's calls need others than a
   * single call's (the SDK's defaults).
   */
  client(limits?: RetryOptions): CinderClient;
  /** An error main() reports as a usage error (exit 2). */
  usage(message: string): Error;
  /** An error main() reports as a failure (exit 1, or the code given). */
  fail(message: string, exitCode?: number): Error;
  /** A progress bar of `total` `what` on standard error when it is a terminal (else nothing); stop() may be called more than once. */
  progress(total: number, what: string): Promise<Progress>;
}

export interface Progress {
  /** `extra`: what else the bar says from now on (a vanity search: the keys tried). */
  update(done: number, extra?: string): void;
  stop(): void;
}

export const EXIT_CODES = { OK: 0, FAILED: 1, USAGE: 2, PENDING: 3 } as const;

/** Writes and waits until the stream takes more (backpressure). */
export function write(stream: NodeJS.WritableStream, data: string | Uint8Array): Promise<void> {
  return new Promise((done, fail) => stream.write(data, (error) => (error ? fail(error) : done())));
}

export function stringOption(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A whole number of 1 or more given as `name` (e.g. "-n 10"); `text` undefined: the option is missing. */
export function positiveIntegerOption(ctx: CommandContext, text: string | undefined, name: string): number {
  if (text === undefined) throw ctx.usage(`${name} is required`);
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw ctx.usage(`${name} must be a positive whole number, e.g. ${name} 10`);
  }
  return Number(text);
}

/** The environment variable `name`, a whole number from 1 to `max`; unset or empty: `fallback`. */
export function wholeNumberFromEnv(ctx: CommandContext, name: string, max: number, fallback: number): number {
  const text = ctx.io.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || n > max) throw ctx.usage(`${name} must be a whole number from 1 to ${max}`);
  return n;
}

/**
 * The one status → exit-code rule, for one result or many (a row of a summary, a wallet of a keys
 * file): 1 when any failed (or met an error), else 3 when any is still pending (check again with
 * cinder status), else 0 (done, or nothing to do).
 */
export function exitCodeFor(statuses: Iterable<string>): number {
  const all = [...statuses];
  if (all.some((s) => s === 'failed' || s === 'error')) return EXIT_CODES.FAILED;
  if (all.some((s) => s === 'pending')) return EXIT_CODES.PENDING;
  return EXIT_CODES.OK;
}

/**
 * The one status block of an answer that sent transactions (burn, reclaim, relay): its status, first
 * signature, every signature when there are several, what `extra` says, the server's message, and
 * how to look again when it is pending.
 */
export function statusBlock(result: Pick<OperationResult<unknown>, 'status' | 'transactionId' | 'signatures' | 'message'>, extra: readonly string[] = []): string {
  const lines = [`status: ${result.status}`, `transaction: ${result.transactionId}`];
  if (result.signatures.length > 1) lines.push(`all transactions: ${result.signatures.join(' ')}`);
  lines.push(...extra);
  if (result.message) lines.push(result.message);
  if (result.status === 'pending') lines.push(`Check it with: cinder status ${result.transactionId}`);
  return `${lines.join('\n')}\n`;
}

/** "--priority-fee 0.000005": an amount of SOL with at most 9 decimals (lamport precision). */
export function priorityFeeOption(ctx: CommandContext, fallback?: string): number {
  const fee = stringOption(ctx.values, 'priority-fee') ?? fallback;
  if (fee === undefined) throw ctx.usage('--priority-fee is required (the total priority fee in SOL, e.g. 0.000005)');
  if (!/^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/.test(fee)) throw ctx.usage('--priority-fee must be an amount of SOL with at most 9 decimals, e.g. 0.000005');
  return Number(fee);
}

/**
 * "--priority-fee auto" or an amount of SOL: the doors of one wallet take "auto" (the service reads
 * the cluster's recent fees and states the number it chose in the preview).
 */
export function priorityFeeOrAutoOption(ctx: CommandContext, fallback?: string): number | 'auto' {
  const fee = stringOption(ctx.values, 'priority-fee') ?? fallback;
  if (fee === 'auto') return 'auto';
  if (fee !== undefined && !/^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/.test(fee)) {
    throw ctx.usage('--priority-fee must be an amount of SOL with at most 9 decimals, e.g. 0.000005, or auto');
  }
  return priorityFeeOption(ctx, fallback);
}

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

/**
 * A wallet address given as an argument. Checked here, before it is printed or sent: a value that
 * is not a 32-byte address may be a private key pasted in the wrong place, so it is never echoed.
 */
export function addressOption(ctx: CommandContext, name: string, text: string): string {
  if (isAddress(text)) return text;
  const length = base58Length(text);
  if (length === 64 || length === 32) {
    // 32 bytes that fail isAddress cannot happen (any 32 bytes are an address); 64 is a secret key.
    throw ctx.usage(`${name} must be a wallet address; this value is 64 bytes, the size of a private key. Never give a key as an argument (use --key-file or --key-env).`);
  }
  throw ctx.usage(`${name} must be a base58 wallet address of 32 bytes`);
}

/** "--burn MINT,MINT" (or --mints): mint addresses, each checked (and never echoed when it is not one). */
export function mintListOption(ctx: CommandContext, name = 'burn'): string[] | undefined {
  const text = stringOption(ctx.values, name);
  if (text === undefined) return undefined;
  const mints = text.split(',').map((m) => m.trim()).filter((m) => m !== '');
  if (mints.length === 0) throw ctx.usage(`--${name} takes mint addresses separated by commas, e.g. --${name} MINT1,MINT2`);
  mints.forEach((mint, i) => {
    if (!isAddress(mint)) throw ctx.usage(`--${name}: item ${i + 1} is not a base58 mint address of 32 bytes`);
  });
  return mints;
}

export function feePayerOption(ctx: CommandContext): 'owner' | 'sponsor' | undefined {
  const feePayer = stringOption(ctx.values, 'fee-payer');
  if (feePayer === undefined) return undefined;
  if (feePayer !== 'owner' && feePayer !== 'sponsor') throw ctx.usage('--fee-payer must be owner or sponsor');
  return feePayer;
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
