/**
 * The `cinder` command (bin/cinder.js loads this file through tsx in a checkout, or its build in
 * dist/ in a production install). A thin layer over the SDK (./index.ts), which it imports and
 * nothing else of Cinder: the service runs with `npm start`, not through this command.
 *   cinder wallets -n N [--out FILE] [--format json|csv|keypair-files] [--mnemonic 12|24]
 *                  [--prefix P] [--suffix S] [--ignore-case]   (streamed: SDK streamWallets)
 *   cinder wallets --hd 12|24 -n N      (made on this machine: commands/derive.ts)
 *   cinder derive --mnemonic-file F --count N [--from I] [--scheme phantom|ledger-live|keygen]
 *   cinder burn --mint M --priority-fee SOL (--key-file PATH | --key-env VAR)
 *   cinder status SIGNATURE
 * Exit codes (commands/context.ts exitCodeFor): 0 done, 1 failed (an error, or a burn that failed),
 * 2 usage error, 3 a transaction whose outcome is not known yet (pending).
 *
 * A private key is never taken as an argument (shell history, `ps`), never printed and never put
 * in an error message; arguments are echoed only when they cannot be a key.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { getBase58Decoder } from '@solana/kit';
import { CinderApiError, createCinderClient, type CinderClient, type Keypair, type RetryOptions } from './index.ts';
import { EXIT_CODES as EXIT, exitCodeFor, statusBlock, type CommandContext, type Progress } from './commands/context.ts';
import { readKey } from './commands/keys.ts';
import { DERIVE_HELP, deriveCommand, hdWalletsCommand } from './commands/derive.ts';
import { RECLAIM_HELP, reclaimCommand } from './commands/reclaim.ts';
import { RECLAIM_MANY_HELP } from './commands/reclaimMany.ts';
import { prepareBurnCommand, RELAY_HELP, relayCommand } from './commands/relay.ts';

const DEFAULT_URL = 'http://127.0.0.1:8080';
const DEFAULT_BATCH = 1000;

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  cwd: string;
}

class UsageError extends Error {}
class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.FAILED) {
    super(message);
  }
}

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  json: { type: 'boolean' },
} satisfies OptionSpec;

const COMMAND_OPTIONS = {
  wallets: {
    n: { type: 'string', short: 'n' },
    out: { type: 'string', short: 'o' },
    format: { type: 'string' },
    'batch-size': { type: 'string' },
    mnemonic: { type: 'string' },
    prefix: { type: 'string' },
    suffix: { type: 'string' },
    'ignore-case': { type: 'boolean' },
    hd: { type: 'string' },
  },
  derive: {
    'mnemonic-file': { type: 'string' },
    count: { type: 'string' },
    from: { type: 'string' },
    scheme: { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string', short: 'o' },
  },
  burn: {
    mint: { type: 'string' },
    'priority-fee': { type: 'string' },
    'key-file': { type: 'string' },
    'key-env': { type: 'string' },
    'idempotency-key': { type: 'string' },
    // Accepted only to be refused with the reason (see burn()), rather than as an unknown option.
    amount: { type: 'string' },
    // --owner … --unsigned: the keyless prepare (commands/relay.ts).
    owner: { type: 'string' },
    unsigned: { type: 'boolean' },
    'fee-payer': { type: 'string' },
  },
  status: {},
  reclaim: {
    owner: { type: 'string' },
    'key-file': { type: 'string' },
    'key-env': { type: 'string' },
    'keys-file': { type: 'string' },
    yes: { type: 'boolean' },
    burn: { type: 'string' },
    'withdraw-excess': { type: 'boolean' },
    'priority-fee': { type: 'string' },
    'allow-net-loss': { type: 'boolean' },
    'idempotency-key': { type: 'string' },
    unsigned: { type: 'boolean' },
    'fee-payer': { type: 'string' },
    // --keys-file F --fee-payer KEYFILE --destination A: many wallets in one job (commands/reclaimMany.ts).
    destination: { type: 'string' },
    mints: { type: 'string' },
    state: { type: 'string' },
  },
  relay: {},
} satisfies Record<string, OptionSpec>;

type Command = keyof typeof COMMAND_OPTIONS;

const HELP = `Usage: cinder <command> [options]

Commands:
  wallets -n N               Generate N wallets
      [--out FILE]             write them to FILE (created with mode 0600) instead of standard output;
                               with --format keypair-files, the directory for the key files
      [--format json|csv|keypair-files]
                               json (default): {"wallets":[...],"keypairs":[...]}; csv: address,privateKey lines;
                               keypair-files: one solana-keygen <address>.json file per wallet (mode 0600)
                               Wallets are streamed and written as they are made, with a progress bar on a terminal
                               (vanity: matches found and keys tried); a stream that breaks is an error (exit 1)
                               and leaves no --out file behind
      [--batch-size N]         wallets per request (default: all of them in one stream; ${DEFAULT_BATCH} with
                               --mnemonic or a vanity pattern; halved when the server allows fewer)
      [--mnemonic 12|24]       also a BIP39 phrase per wallet (json: "mnemonic"; csv: a third column)
      [--prefix P] [--suffix S] [--ignore-case]
                               vanity addresses that start / end with these base58 characters
  wallets --hd 12|24 -n N    A new BIP39 phrase and its first N wallets (m/44'/501'/i'/0', as Phantom shows them),
                             made on this machine (no server): {"mnemonic":...,"wallets":[...],"keypairs":[...]}
${DERIVE_HELP}  burn --mint MINT --priority-fee SOL (--key-file PATH | --key-env VAR)
                             Burn the whole balance of MINT held by the key and reclaim the account rent.
                             The key is read from a file (solana-keygen JSON array or base58 text) or from an
                             environment variable, never from an argument (it would land in shell history).
      [--idempotency-key K]    reuse K to retry a burn safely (default: a new one per call)
                             There is no --amount: the whole balance is burned, so the account can be closed and
                             its rent returned. To burn part of a balance: spl-token burn ACCOUNT AMOUNT.
  status SIGNATURE           The status of a burn transaction
${RECLAIM_HELP}${RECLAIM_MANY_HELP}${RELAY_HELP}
Options:
  --url URL                  Cinder's address (default $CINDER_URL, else ${DEFAULT_URL})
  --api-key KEY              API key (default $CINDER_API_KEY; prefer the variable: arguments land in shell history)
  --json                     burn, status, reclaim, relay: print the result as JSON
  -h, --help                 This help
  --version                  The version

Rate limits (429) and a busy server (503) are waited out as the server asks (Retry-After), saying so
on standard error: wallets up to a minute at a time, ten times; other calls up to 30 s, three times.

Exit codes: 0 done, 1 failed (error, or the burn failed), 2 usage error, 3 pending (check again with cinder status).
`;

/** Options that would put a key on the command line: refused before anything else, without echoing the value. */
const KEY_OPTIONS = /^--?(k|key|private-key|privatekey|user-private-key|userprivatekey|secret-key|secret|keypair)(=.*)?$/i;

/** Writes and waits until the stream takes more (backpressure). */
function write(stream: NodeJS.WritableStream, data: string | Uint8Array): Promise<void> {
  return new Promise((done, fail) => stream.write(data, (error) => (error ? fail(error) : done())));
}

function parse(argv: string[]) {
  const keyOption = argv.find((a) => KEY_OPTIONS.test(a));
  if (keyOption) {
    throw new UsageError(
      `${keyOption.split('=')[0]} is not accepted: a key given as an argument lands in shell history and in the process list. ` +
        'Use --key-file PATH (a solana-keygen JSON file, or a file holding the base58 key) or --key-env VAR.',
    );
  }
  const options: OptionSpec = { ...GLOBAL_OPTIONS };
  for (const spec of Object.values(COMMAND_OPTIONS)) Object.assign(options, spec);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages name the option, never a value that is not an option name.
    throw new UsageError((error as Error).message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '.'));
  }
  const [command, ...rest] = parsed.positionals;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (command !== undefined && !(command in COMMAND_OPTIONS)) {
    throw new UsageError(`unknown command "${/^[a-z-]{1,20}$/.test(command) ? command : '…'}" (commands: ${Object.keys(COMMAND_OPTIONS).join(', ')})`);
  }
  if (command !== undefined) {
    const allowed = new Set([...Object.keys(GLOBAL_OPTIONS), ...Object.keys(COMMAND_OPTIONS[command as Command])]);
    for (const name of Object.keys(values)) {
      if (!allowed.has(name)) throw new UsageError(`--${name} is not an option of "cinder ${command}"`);
    }
  }
  return { command: command as Command | undefined, rest, values };
}

function stringOption(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function positiveInteger(text: string | undefined, name: string): number {
  if (text === undefined) throw new UsageError(`${name} is required`);
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${name} must be a positive whole number, e.g. ${name} 10`);
  }
  return Number(text);
}

/** The CLI's limits of the SDK's retry policy: single calls as the SDK's defaults. */
const CALL_RETRIES = { retries: 3, maxDelayMs: 30_000 };
/** Large wallet jobs meet the rate limits: wait as long as the server asks, up to a minute, ten times. */
const WALLET_RETRIES = { retries: 10, maxDelayMs: 60_000 };

/**
 * The SDK's client for --url / --api-key. Its retry policy (the only one) waits out 429, 503 and 409
 * REQUEST_IN_PROGRESS; the CLI says on standard error that it waits, why and for how long: a CLI
 * that goes quiet for a minute looks hung.
 */
function clientFor(values: Record<string, unknown>, io: CliIo, limits: RetryOptions = CALL_RETRIES): CinderClient {
  const url = stringOption(values, 'url') ?? (io.env.CINDER_URL || DEFAULT_URL);
  const apiKey = stringOption(values, 'api-key') ?? (io.env.CINDER_API_KEY || undefined);
  const onRetry: RetryOptions['onRetry'] = ({ error, attempt, retries, delayMs }) => {
    const why = error.status === 429 ? 'rate limited by the server' : error.status === 409 ? 'the same request is still running' : 'the server is busy';
    const seconds = Math.max(1, Math.ceil(delayMs / 1000));
    return write(io.stderr, `cinder: ${why} (${error.code}): waiting ${seconds} s, then retrying (${attempt} of ${retries})\n`);
  };
  try {
    return createCinderClient({ baseUrl: url, apiKey, retry: { ...limits, onRetry } });
  } catch (error) {
    if (error instanceof CinderApiError) throw new UsageError(`--url: ${error.detail}`);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// wallets

type WalletFormat = 'json' | 'csv' | 'keypair-files';

async function progressBar(io: CliIo, total: number, what = 'wallets'): Promise<Progress> {
  const none = { update() {}, stop() {} };
  if (!io.stderr.isTTY) return none;
  // cli-progress (a dependency) is loaded only when there is a terminal to draw on; an install
  // without it still generates wallets, without a bar.
  let cliProgress: typeof import('cli-progress');
  try {
    cliProgress = (await import('cli-progress')).default;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return none;
    throw error;
  }
  const bar = new cliProgress.SingleBar(
    { stream: io.stderr, format: `${what} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}{extra}`, hideCursor: true, fps: 10 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { extra: '' });
  let stopped = false;
  return {
    update: (done, extra) => bar.update(done, extra === undefined ? {} : { extra: ` | ${extra}` }),
    stop: () => {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}

/** The 64-byte array of a solana-keygen file, checked against the address it is saved under. */
function keygenBytes(keypair: Keypair): number[] {
  const bytes = keypair.secretKeyBytes;
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new CliError('the server did not return the key bytes (format=keygen) of a wallet');
  }
  if (getBase58Decoder().decode(Uint8Array.from(bytes.slice(32))) !== keypair.address) throw new CliError('the server returned key bytes that do not match their address');
  return bytes;
}

function csvLines(keypairs: readonly Keypair[], withMnemonic: boolean): string {
  return keypairs.map((k) => `${k.address},${k.privateKey}${withMnemonic ? `,${k.mnemonic ?? ''}` : ''}\n`).join('');
}

async function createPrivateFile(path: string, content: string): Promise<void> {
  try {
    await writeFile(path, content, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${path} already exists; cinder never overwrites a key file`);
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

/** Where wallets go as they arrive, in the format asked for. */
interface WalletSink {
  add(keypair: Keypair): Promise<void>;
  /** Writes what closes the document and the file. */
  finish(): Promise<void>;
  /** After a failure: removes the output file (and the JSON's held keypairs); keypair files are each whole and stay. */
  discard(): Promise<void>;
}

/** Text gathered into parts of about 64 KiB before each write: a million lines are not a million writes. */
function textOutput(stream: NodeJS.WritableStream) {
  let parts: string[] = [];
  let size = 0;
  const flush = async () => {
    if (parts.length === 0) return;
    const text = parts.join('');
    parts = [];
    size = 0;
    await write(stream, text);
  };
  return {
    async emit(text: string) {
      parts.push(text);
      size += text.length;
      if (size >= 64 * 1024) await flush();
    },
    flush,
  };
}

function closeFile(file: WriteStream): Promise<void> {
  return new Promise((done, fail) => {
    file.once('error', fail);
    file.end(done);
  });
}

/**
 * The sink of --format: keypair files one by one; CSV lines as they come; and JSON as the same
 * document as a whole answer (`JSON.stringify({ wallets, keypairs }, null, 2)`), streamed too: the
 * addresses go out as they come, and the keypairs, which the document lists after them, wait in a
 * file of their own next to --out (mode 0600, removed once appended), so that a million wallets
 * take no more memory than ten. Without --out they wait in memory.
 */
async function walletSink(format: WalletFormat, outPath: string | undefined, io: CliIo, withMnemonic: boolean): Promise<WalletSink> {
  if (format === 'keypair-files') {
    return {
      add: (keypair) => createPrivateFile(join(outPath!, `${keypair.address}.json`), `${JSON.stringify(keygenBytes(keypair))}\n`),
      finish: async () => {},
      discard: async () => {},
    };
  }
  const file = outPath === undefined ? null : createWriteStream(outPath, { flags: 'a' });
  const main = textOutput(file ?? io.stdout);
  const closeMain = async () => {
    await main.flush();
    if (file) await closeFile(file);
  };
  const removeMain = async () => {
    file?.destroy();
    if (outPath !== undefined) await rm(outPath, { force: true });
  };
  if (format === 'csv') {
    await main.emit(withMnemonic ? 'address,privateKey,mnemonic\n' : 'address,privateKey\n');
    return { add: (keypair) => main.emit(csvLines([keypair], withMnemonic)), finish: closeMain, discard: removeMain };
  }

  const heldPath = outPath === undefined ? undefined : `${outPath}.keypairs-${randomUUID().slice(0, 8)}.tmp`;
  if (heldPath !== undefined) await createPrivateFile(heldPath, '');
  const heldFile = heldPath === undefined ? null : createWriteStream(heldPath, { flags: 'a' });
  const heldInMemory: string[] = [];
  const held = heldFile ? textOutput(heldFile) : { emit: async (text: string) => void heldInMemory.push(text), flush: async () => {} };
  const removeHeld = async () => {
    heldFile?.destroy();
    if (heldPath !== undefined) await rm(heldPath, { force: true });
  };
  let count = 0;
  await main.emit('{\n  "wallets": [\n');
  return {
    async add(keypair) {
      const separator = count++ === 0 ? '' : ',\n';
      await main.emit(`${separator}    ${JSON.stringify(keypair.address)}`);
      await held.emit(`${separator}    ${JSON.stringify(keypair, null, 2).replaceAll('\n', '\n    ')}`);
    },
    async finish() {
      await main.emit('\n  ],\n  "keypairs": [\n');
      await main.flush();
      if (heldFile) {
        await held.flush();
        await closeFile(heldFile);
        for await (const chunk of createReadStream(heldPath!)) await write(file!, chunk as Buffer);
        await removeHeld();
      } else {
        for (const text of heldInMemory) await main.emit(text);
      }
      await main.emit('\n  ]\n}\n');
      await closeMain();
    },
    async discard() {
      await removeHeld();
      await removeMain();
    },
  };
}

async function wallets(values: Record<string, unknown>, io: CliIo): Promise<number> {
  const n = positiveInteger(stringOption(values, 'n'), '-n');
  const format = (stringOption(values, 'format') ?? 'json') as WalletFormat;
  if (!['json', 'csv', 'keypair-files'].includes(format)) throw new UsageError('--format must be json, csv or keypair-files');
  const out = stringOption(values, 'out');
  if (format === 'keypair-files' && out === undefined) throw new UsageError('--format keypair-files needs --out DIRECTORY');
  const batchText = stringOption(values, 'batch-size');
  const mnemonicText = stringOption(values, 'mnemonic');
  if (mnemonicText !== undefined && mnemonicText !== '12' && mnemonicText !== '24') throw new UsageError('--mnemonic must be 12 or 24 (words)');
  const mnemonic = mnemonicText === undefined ? undefined : (Number(mnemonicText) as 12 | 24);
  if (mnemonic !== undefined && format === 'keypair-files') {
    throw new UsageError('--mnemonic cannot be kept in solana-keygen key files; use --format json or csv');
  }
  const prefix = stringOption(values, 'prefix');
  const suffix = stringOption(values, 'suffix');
  const vanity = prefix !== undefined || suffix !== undefined;
  // Plain wallets come in one stream (the server takes up to MAX_WALLETS_STREAMED in one); vanity
  // and mnemonic= have per-request limits, so they come in streams of --batch-size. Either way a
  // batch the server refuses as too large is halved.
  let batch = batchText !== undefined ? positiveInteger(batchText, '--batch-size') : vanity || mnemonic !== undefined ? DEFAULT_BATCH : n;
  // The server checks the patterns (base58, length, combinations) and says what is wrong.
  const request = {
    ...(format === 'keypair-files' ? { format: 'keygen' as const } : {}),
    ...(mnemonic !== undefined ? { mnemonic } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(suffix !== undefined ? { suffix } : {}),
    ...(values['ignore-case'] ? { ignoreCase: true } : {}),
  };
  const client = clientFor(values, io, WALLET_RETRIES);

  let outPath: string | undefined;
  if (out !== undefined) {
    outPath = resolve(io.cwd, out);
    if (format === 'keypair-files') {
      await mkdir(outPath, { recursive: true, mode: 0o700 }).catch((error: Error) => {
        throw new CliError(`cannot create ${outPath}: ${error.message}`);
      });
    } else {
      // Created up front, so that a path that cannot be written fails before any key is made.
      await createPrivateFile(outPath, '');
    }
  }

  const sink = await walletSink(format, outPath, io, mnemonic !== undefined);
  const progress = await progressBar(io, n, vanity ? 'matches' : 'wallets');
  let done = 0;
  /** Keys tried by the vanity streams before this one. */
  let triedBefore = 0;
  try {
    while (done < n) {
      const size = Math.min(batch, n - done);
      let tried = 0;
      let lines = 0;
      try {
        for await (const line of client.streamWallets(size, request)) {
          lines++;
          if ('keysTried' in line) {
            tried = line.keysTried;
            progress.update(done, `${(triedBefore + tried).toLocaleString('en-US')} keys tried`);
          } else if ('address' in line) {
            await sink.add(line);
            progress.update(++done);
          }
        }
      } catch (error) {
        if (!(error instanceof CinderApiError)) throw error;
        // More than this server allows per request: halve the batch and go on.
        if (error.code === 'INVALID_N' && size > 1 && lines === 0) {
          batch = Math.max(1, Math.floor(size / 2));
          continue;
        }
        // Refused before anything came: the server's answer, as for any command.
        if (lines === 0 && done === 0) throw error;
        throw new CliError(
          `the server's wallet stream stopped after ${done} of ${n} wallets: ${error.code}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.detail}` +
            (outPath !== undefined && format !== 'keypair-files' ? `; ${outPath} was removed` : ''),
          exitCodeFor(['error']),
        );
      }
      triedBefore += tried;
    }
    await sink.finish();
  } catch (error) {
    // A half-written --out file would look like a complete one: remove it (keypair files are each whole).
    await sink.discard();
    throw error;
  } finally {
    progress.stop();
  }
  if (outPath !== undefined) {
    await write(io.stderr, `Wrote ${n} wallet${n === 1 ? '' : 's'} to ${outPath}${format === 'keypair-files' ? ' (one <address>.json per wallet)' : ''}\n`);
  }
  return EXIT.OK;
}

// ---------------------------------------------------------------------------------------------
// burn and status

async function burn(values: Record<string, unknown>, io: CliIo, positionals: string[]): Promise<number> {
  if (positionals.length > 0) throw new UsageError('burn takes no positional arguments (a key is read with --key-file or --key-env)');
  if (values.amount !== undefined) {
    // A decision, not a gap: a partial burn leaves the account open, so no rent comes back, and
    // that is the one thing Cinder is for. spl-token already burns amounts.
    throw new UsageError(
      'cinder burn has no --amount: it burns the whole balance so that the account can be closed and its rent returned; ' +
        'a partial burn leaves the account open and reclaims nothing. To burn part of a balance, use: spl-token burn ACCOUNT AMOUNT',
    );
  }
  const mint = stringOption(values, 'mint');
  if (mint === undefined) throw new UsageError('--mint is required');
  const fee = stringOption(values, 'priority-fee');
  if (fee === undefined) throw new UsageError('--priority-fee is required (the total priority fee in SOL, e.g. 0.000005)');
  if (!/^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/.test(fee)) throw new UsageError('--priority-fee must be an amount of SOL with at most 9 decimals, e.g. 0.000005');
  const key = await readKey(commandContext(values, io, positionals));
  // One Idempotency-Key for every attempt, so that a retry can never burn twice; `--idempotency-key ''`
  // sends none (SDK), and then nothing makes a retry safe, so the SDK makes none.
  const idempotencyKey = stringOption(values, 'idempotency-key') ?? randomUUID();
  const client = clientFor(values, io);
  const result = await client.burnTokens({ mint, priorityFee: Number(fee), userPrivateKey: key }, { idempotencyKey });
  await write(io.stdout, values.json ? `${JSON.stringify(result, null, 2)}\n` : statusBlock(result));
  return exitCodeFor([result.status]);
}

async function status(values: Record<string, unknown>, io: CliIo, positionals: string[]): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('usage: cinder status SIGNATURE');
  const client = clientFor(values, io);
  const result = await client.getTransaction(positionals[0]!);
  if (values.json) await write(io.stdout, `${JSON.stringify(result, null, 2)}\n`);
  else await write(io.stdout, `${result.status}${result.slot !== null ? ` (slot ${result.slot})` : ''}: ${result.message ?? ''}\n`);
  return exitCodeFor([result.status]);
}

/** What the commands of ./commands/ use of this file: its client and error kinds. */
function commandContext(values: Record<string, unknown>, io: CliIo, positionals: string[]): CommandContext {
  return {
    io,
    values,
    positionals,
    client: () => clientFor(values, io),
    usage: (message) => new UsageError(message),
    fail: (message, exitCode) => new CliError(message, exitCode),
    progress: (total, what) => progressBar(io, total, what),
  };
}

// ---------------------------------------------------------------------------------------------

function describe(error: CinderApiError, values: Record<string, unknown>, io: CliIo): string {
  const lines = [`cinder: ${error.code}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.detail}`];
  for (const problem of error.errors) lines.push(`  ${problem.field}: ${problem.message}`);
  if (error.code === 'NETWORK_ERROR' || error.code === 'TIMEOUT') {
    lines.push(`Is Cinder running at ${stringOption(values, 'url') ?? (io.env.CINDER_URL || DEFAULT_URL)}? Set it with --url or CINDER_URL.`);
  }
  if (error.status === 401) lines.push('Give an API key with CINDER_API_KEY (or --api-key).');
  if (error.retryAfterMs !== undefined) lines.push(`Retry after ${Math.ceil(error.retryAfterMs / 1000)} s.`);
  if (error.requestId) lines.push(`Request id: ${error.requestId}`);
  return `${lines.join('\n')}\n`;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let values: Record<string, unknown> = {};
  try {
    const parsed = parse(argv);
    values = parsed.values;
    if (parsed.values.version) {
      const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
      await write(io.stdout, `cinder ${pkg.version}\n`);
      return EXIT.OK;
    }
    if (parsed.values.help || parsed.command === undefined) {
      await write(parsed.command === undefined && !parsed.values.help ? io.stderr : io.stdout, HELP);
      return parsed.values.help ? EXIT.OK : EXIT.USAGE;
    }
    switch (parsed.command) {
      case 'wallets':
        if (parsed.rest.length > 0) throw new UsageError('wallets takes no positional arguments (use -n N)');
        if (values.hd !== undefined) return await hdWalletsCommand(commandContext(values, io, parsed.rest), positiveInteger(stringOption(values, 'n'), '-n'));
        return await wallets(values, io);
      case 'derive':
        return await deriveCommand(commandContext(values, io, parsed.rest));
      case 'burn':
        if (values.owner !== undefined || values.unsigned !== undefined) return await prepareBurnCommand(commandContext(values, io, parsed.rest));
        return await burn(values, io, parsed.rest);
      case 'status':
        return await status(values, io, parsed.rest);
      case 'reclaim':
        return await reclaimCommand(commandContext(values, io, parsed.rest));
      case 'relay':
        return await relayCommand(commandContext(values, io, parsed.rest));
    }
  } catch (error) {
    if (error instanceof UsageError) {
      await write(io.stderr, `cinder: ${error.message}\nRun "cinder --help" for usage.\n`);
      return EXIT.USAGE;
    }
    if (error instanceof CliError) {
      await write(io.stderr, `cinder: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof CinderApiError) {
      await write(io.stderr, describe(error, values, io));
      return EXIT.FAILED;
    }
    await write(io.stderr, `cinder: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.FAILED;
  }
}
