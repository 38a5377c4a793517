/**
 * The `cinder` command (bin/cinder.js loads this file through tsx in a checkout, or its build in
 * dist/ in a production install). A thin layer over the SDK (./index.ts), which it imports and
 * nothing else of Cinder: the service runs with `npm start`, not through this command.
 *
 * This file is the dispatcher: it parses the arguments (refusing a key given as one), builds the
 * SDK's client, hands each command its context (commands/context.ts), and turns what a command
 * throws into a message and an exit code. The commands live in commands/:
 *   wallets (commands/wallets.ts; --hd: commands/derive.ts), derive (commands/derive.ts),
 *   burn and status (commands/burn.ts; burn --unsigned: commands/relay.ts),
 *   reclaim (commands/reclaim.ts; many wallets in one job: commands/reclaimMany.ts), relay (commands/relay.ts).
 * Exit codes (commands/context.ts exitCodeFor): 0 done, 1 failed (an error, or a burn that failed),
 * 2 usage error, 3 a transaction whose outcome is not known yet (pending).
 *
 * A private key is never taken as an argument (shell history, `ps`), never printed and never put
 * in an error message; arguments are echoed only when they cannot be a key.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CinderApiError, createCinderClient, type CinderClient, type RetryOptions } from './index.ts';
import { BURN_HELP, burnCommand, statusCommand } from './commands/burn.ts';
import { EXIT_CODES as EXIT, stringOption, write, type CommandContext, type Progress } from './commands/context.ts';
import { DERIVE_HELP, deriveCommand } from './commands/derive.ts';
import { RECLAIM_HELP, reclaimCommand } from './commands/reclaim.ts';
import { RECLAIM_MANY_HELP } from './commands/reclaimMany.ts';
import { prepareBurnCommand, RELAY_HELP, relayCommand } from './commands/relay.ts';
import { WALLETS_HELP, walletsCommand } from './commands/wallets.ts';

const DEFAULT_URL = 'http://127.0.0.1:8080';

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
    // Accepted only to be refused with the reason (commands/burn.ts), rather than as an unknown option.
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
${WALLETS_HELP}${DERIVE_HELP}${BURN_HELP}${RECLAIM_HELP}${RECLAIM_MANY_HELP}${RELAY_HELP}
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

/** The CLI's limits of the SDK's retry policy: single calls as the SDK's defaults. */
const CALL_RETRIES = { retries: 3, maxDelayMs: 30_000 };

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
// what the commands get

/** A progress bar on standard error when it is a terminal; nothing otherwise. */
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

/** What the commands of ./commands/ use of this file: its client and error kinds. */
function commandContext(values: Record<string, unknown>, io: CliIo, positionals: string[]): CommandContext {
  return {
    io,
    values,
    positionals,
    client: (limits) => clientFor(values, io, limits),
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
    const ctx = commandContext(values, io, parsed.rest);
    switch (parsed.command) {
      case 'wallets':
        return await walletsCommand(ctx);
      case 'derive':
        return await deriveCommand(ctx);
      case 'burn':
        if (values.owner !== undefined || values.unsigned !== undefined) return await prepareBurnCommand(ctx);
        return await burnCommand(ctx);
      case 'status':
        return await statusCommand(ctx);
      case 'reclaim':
        return await reclaimCommand(ctx);
      case 'relay':
        return await relayCommand(ctx);
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
