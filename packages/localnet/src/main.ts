/**
 * `cinder-localnet [options]` (`npm run localnet` at the repository root): the local chain on its
 * own. Flags that preload accounts and programs take solana-test-validator's names and arguments,
 * so that scripts written for it carry over. `--help` lists them all.
 */
import pino from 'pino';
import { startLocalnet, type LocalnetOptions } from './index.ts';
import { MIN_SLOTS_PER_EPOCH } from './epochs.ts';

const HELP = `Usage: cinder-localnet [options]

A local Solana chain (LiteSVM behind JSON-RPC and PubSub). Every start is a fresh ledger.

Options:
  --port, --rpc-port <PORT>        JSON-RPC port (default: LOCALNET_PORT, else 8899); the
                                   WebSocket listens on the next port
  --account <ADDRESS> <FILE.json>  Load an account from a JSON file as written by
                                   \`solana account --output json\` (ADDRESS '-': the file's pubkey)
  --account-dir <DIR>              Load every *.json account file in DIR, each at its pubkey
  --bpf-program <ADDRESS_OR_KEYPAIR> <FILE.so>
                                   Deploy an sBPF program, upgrades disabled
  --upgradeable-program <ADDRESS_OR_KEYPAIR> <FILE.so> <AUTHORITY|none>
                                   Deploy an sBPF program with that upgrade authority
  --timing <validator|instant>     validator (default): a transaction executes 0.1 s after the
                                   send and is confirmed when the next slot starts; instant: at once
  --slot-ms <MS>                   Slot length in milliseconds (default 400)
  --token-2022-native-mint         Create Token-2022's native mint at start
  --slots-per-epoch <SLOTS>        Slots in every epoch, no warm-up (default 432000; at least 32)
  -r, --reset, -q, --quiet         Accepted for solana-test-validator scripts (no effect: the
                                   ledger is always new, and the log goes to stdout as JSON)
  -h, --help                       Show this help
`;

class UsageError extends Error {}

/** Parses argv into startLocalnet's options; throws UsageError naming the bad argument. */
function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): (LocalnetOptions & { help?: boolean }) {
  const options: LocalnetOptions & { help?: boolean } = { port: -1 };
  const accounts: NonNullable<LocalnetOptions['accounts']>[number][] = [];
  const accountDirs: string[] = [];
  const bpfPrograms: NonNullable<LocalnetOptions['bpfPrograms']>[number][] = [];
  const upgradeablePrograms: NonNullable<LocalnetOptions['upgradeablePrograms']>[number][] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const take = (count: number, names: string): string[] => {
      const values = argv.slice(i + 1, i + 1 + count);
      if (values.length < count || values.some((v) => v.startsWith('--'))) throw new UsageError(`${flag} takes ${names}`);
      i += count;
      return values;
    };
    switch (flag) {
      case '-h':
      case '--help':
        options.help = true;
        break;
      case '--port':
      case '--rpc-port':
        options.port = readPort(take(1, '<PORT>')[0]);
        break;
      case '--account': {
        const [address, file] = take(2, '<ADDRESS> <FILE.json>');
        accounts.push({ address: address!, file: file! });
        break;
      }
      case '--account-dir':
        accountDirs.push(take(1, '<DIR>')[0]!);
        break;
      case '--bpf-program': {
        const [address, file] = take(2, '<ADDRESS_OR_KEYPAIR> <FILE.so>');
        bpfPrograms.push({ address: address!, file: file! });
        break;
      }
      case '--upgradeable-program': {
        const [address, file, authority] = take(3, '<ADDRESS_OR_KEYPAIR> <FILE.so> <AUTHORITY|none>');
        upgradeablePrograms.push({ address: address!, file: file!, authority: authority! });
        break;
      }
      case '--timing': {
        const timing = take(1, '<validator|instant>')[0];
        if (timing !== 'validator' && timing !== 'instant') throw new UsageError(`--timing is validator or instant, got "${timing}"`);
        options.timing = timing;
        break;
      }
      case '--slot-ms': {
        const raw = take(1, '<MS>')[0]!;
        if (!/^[0-9]+$/.test(raw)) throw new UsageError(`--slot-ms takes a whole number of milliseconds, got "${raw}"`);
        options.slotIntervalMs = Number(raw);
        break;
      }
      case '--token-2022-native-mint':
        options.token2022NativeMint = true;
        break;
      case '--slots-per-epoch': {
        const raw = take(1, '<SLOTS>')[0]!;
        const slots = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : NaN;
        if (!(slots >= MIN_SLOTS_PER_EPOCH)) throw new UsageError(`--slots-per-epoch takes a whole number of at least ${MIN_SLOTS_PER_EPOCH}, got "${raw}"`);
        options.slotsPerEpoch = slots;
        break;
      }
      case '-r':
      case '--reset':
      case '-q':
      case '--quiet':
        break;
      default:
        throw new UsageError(`Unknown option '${flag}' (see --help)`);
    }
  }
  if (options.port === -1) options.port = readPort(env.LOCALNET_PORT);
  return { ...options, accounts, accountDirs, bpfPrograms, upgradeablePrograms };
}

function readPort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 8899;
  const port = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65534)) throw new UsageError(`The port (--port or LOCALNET_PORT) must be an integer from 0 to 65534 (the WebSocket uses the next port), got "${raw}"`);
  return port;
}

let options: ReturnType<typeof parseCommandLine>;
try {
  options = parseCommandLine(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(`cinder-localnet: ${err.message}`);
  process.exit(1);
}
if (options.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const logger = pino({ name: 'localnet' });
const localnet = await startLocalnet({ ...options, logger }).catch((err: unknown) => {
  console.error(`Could not start the local chain: ${(err as Error).message}`);
  process.exit(1);
});

console.log(`Solana JSON-RPC: ${localnet.rpcUrl}`);
console.log(`Solana WebSocket: ${localnet.wsUrl}`);

const stop = (signal: NodeJS.Signals) => {
  logger.info({ signal }, 'stopping localnet');
  localnet.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'localnet did not close cleanly');
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
