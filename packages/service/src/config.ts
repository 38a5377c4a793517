/**
 * The only reader of the environment. `loadConfig` validates every variable against one schema,
 * converts it into typed values and returns a frozen object that is passed down explicitly.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { guessableSecretReason, MAKE_SECRET_COMMAND } from './keys/serverSecret.ts';

const UINT = '^(0|[1-9][0-9]*)$';
const POSITIVE_INT = '^[1-9][0-9]*$';
const DECIMAL = '^(0|[1-9][0-9]*)(\\.[0-9]{1,9})?$';

const EnvSchema = Type.Object({
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'Address the HTTP server listens on' })),
  PORT: Type.Optional(Type.String({ pattern: UINT })),
  SOLANA_RPC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SOLANA_WS_URL: Type.Optional(Type.String({ pattern: '^wss?://' })),
  SOLANA_RPC_MAX_RPS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Requests per second to the RPC at most' })),
  COMMITMENT: Type.Optional(Type.Union([Type.Literal('processed'), Type.Literal('confirmed'), Type.Literal('finalized')])),
  MAX_PRIORITY_FEE_SOL: Type.Optional(Type.String({ pattern: DECIMAL })),
  AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS: Type.Optional(
    Type.String({ pattern: UINT, maxLength: 15, description: 'The compute-unit price (micro-lamports) that priorityFee "auto" pays at most' }),
  ),
  MAX_WALLETS_PER_REQUEST: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  MAX_MNEMONIC_WALLETS_PER_REQUEST: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  MAX_VANITY_LENGTH: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  MAX_WALLETS_STREAMED: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Largest n of a streamed (application/x-ndjson) generate_wallets answer' })),
  MAX_OWNERS_PER_REQUEST: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Owners of one multi-owner preview, prepare or reclaim, at most' })),
  RATE_LIMIT_OWNERS_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Owners named by multi-owner requests per client per minute' })),
  API_KEYS: Type.Optional(Type.String()),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  RATE_LIMIT_BURN_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  RATE_LIMIT_GENERATE_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  RATE_LIMIT_WALLETS_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  RATE_LIMIT_STATUS_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  RATE_LIMIT_PREVIEW_PER_MIN: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Reclaim previews per client per minute' })),
  PREVIEWS_PER_CLIENT: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Reclaim previews of one client running at once, at most' })),
  MAX_CONNECTIONS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Open connections of the HTTP server, at most' })),
  MAX_CONNECTIONS_PER_CLIENT: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Open connections from one address, at most' })),
  BURN_DEADLINE_MS: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  VANITY_TIMEOUT_MS: Type.Optional(Type.String({ pattern: POSITIVE_INT })),
  VANITY_MAX_MS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Longest streamed vanity search' })),
  WALLET_STREAM_READ_TIMEOUT_MS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'A wallets stream whose client reads nothing for this long is closed' })),
  MAX_WALLET_STREAMS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Streamed generate_wallets answers open at once, all clients' })),
  MAX_WALLET_STREAMS_PER_CLIENT: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Streamed generate_wallets answers open at once, one client' })),
  MAX_VANITY_SEARCHES: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Vanity searches running at once, all clients' })),
  MAX_VANITY_SEARCHES_PER_CLIENT: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Vanity searches running at once, one client' })),
  MAX_QUEUED_WALLETS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Wallets waiting for or running on the worker pool, all clients' })),
  MAX_QUEUED_WALLETS_PER_CLIENT: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Wallets waiting for or running on the worker pool, one client' })),
  REQUEST_TIMEOUT_MS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'A request (headers and body) must arrive within this time, else 408' })),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level))),
  ),
  LOCALNET_PORT: Type.Optional(Type.String({ pattern: UINT })),
  SERVER_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'HMAC key of idempotency records (and prepared messages)' })),
  STATE_DIR: Type.Optional(Type.String({ minLength: 1, description: 'Directory of the idempotency journal without Redis' })),
  SPONSOR_KEYPAIR: Type.Optional(Type.String({ minLength: 1, description: 'Path of a solana-keygen keypair file: the fee sponsor of wallets that cannot pay' })),
  SPONSOR_MAX_FEE_LAMPORTS: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'The whole fee of one sponsored transaction, at most' })),
  SPONSOR_STRIKE_MS: Type.Optional(Type.String({ pattern: UINT, description: 'How long a wallet whose sponsored transaction failed on chain is not sponsored' })),
  SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Fees of failed sponsored transactions per hour, all wallets' })),
  SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR: Type.Optional(Type.String({ pattern: POSITIVE_INT, description: 'Fees of failed sponsored transactions per hour, one wallet' })),
  RELAY_ANY_TRANSACTION: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  LOG_FORMAT: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('pretty')])),
});

export type Env = Static<typeof EnvSchema>;
export type Commitment = 'processed' | 'confirmed' | 'finalized';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Unset: start the embedded local chain. */
  readonly solanaRpcUrl: string | undefined;
  readonly solanaWsUrl: string | undefined;
  /** Requests per second to the RPC provider at most; undefined: no cap of our own. */
  readonly solanaRpcMaxRps: number | undefined;
  readonly commitment: Commitment;
  readonly maxPriorityFeeLamports: bigint;
  /**
   * AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS: the compute-unit price `priorityFee: "auto"` pays at most,
   * whatever the cluster's recent fees say (a spike, or an RPC that reports nonsense, must not
   * spend the owner's reclaim); the total stays within maxPriorityFeeLamports too.
   */
  readonly autoPriorityFeeMaxMicroLamports: bigint;
  readonly maxWalletsPerRequest: number;
  readonly maxMnemonicWalletsPerRequest: number;
  readonly maxVanityLength: number;
  /** Largest n of a streamed answer (Accept: application/x-ndjson): it is written as it is made, so memory does not grow with n. */
  readonly maxWalletsStreamed: number;
  /** Owners of one multi-owner request (preview, prepare, reclaim: docs/many-wallets.md). */
  readonly maxOwnersPerRequest: number;
  /** Owners named by multi-owner requests, per client per minute: their cost, counted as generate_wallets counts n. */
  readonly rateLimitOwnersPerMin: number;
  /** Raw entries: a plain key, or `sha256:<hex>` of a key. */
  readonly apiKeys: readonly string[];
  readonly metricsToken: string | undefined;
  readonly redisUrl: string | undefined;
  readonly rateLimit: { readonly burnPerMin: number; readonly generatePerMin: number; readonly walletsPerMin: number };
  /** GET /api/transactions/{signature} and any other /api request, per client per minute. */
  readonly rateLimitStatusPerMin: number;
  /** GET /api/reclaim_rent (read-only previews), per client per minute: their own budget, not the burn pipeline's. */
  readonly rateLimitPreviewPerMin: number;
  /** Previews of one client that run at once; one more is 429 (a preview of thousands of accounts is seconds of work). */
  readonly previewsPerClient: number;
  /** Open connections of the HTTP server (Node's server.maxConnections), and from one address (src/http/edge.ts). */
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  /** Every operation (burn, reclaim, preview, prepare, relay) ends by this long after it starts (BURN_DEADLINE_MS, as the contract names it). */
  readonly operationDeadlineMs: number;
  readonly vanityTimeoutMs: number;
  /** A streamed vanity search (no 30 s answer to wait for: progress lines) runs at most this long. */
  readonly vanityMaxMs: number;
  /** What generate_wallets may hold at once, in total and per client (docs/wallets.md, "Sharing the pool"). */
  readonly walletLimits: WalletLimits;
  /** Headers and body of a request must have arrived this long after it started, else 408 and the connection is closed. */
  readonly requestTimeoutMs: number;
  /** Passed to Fastify's `trustProxy`: false, true, a hop count, or a list of addresses/CIDRs. */
  readonly trustProxy: boolean | number | string;
  readonly logLevel: LogLevel;
  /** `auto` (unset): readable lines when standard output is a terminal, JSON lines otherwise. */
  readonly logFormat: 'json' | 'pretty' | 'auto';
  readonly localnetPort: number;
  /**
   * HMAC key of idempotency records (and prepared messages). Required with REDIS_URL (every
   * instance must derive the same record names); unset otherwise: see `stateDir`.
   */
  readonly serverSecret: string | undefined;
  /**
   * Without Redis: where the idempotency journal (and, when SERVER_SECRET is unset, a generated
   * secret) is kept, so that a burn sent before a crash is still answered after a restart.
   */
  readonly stateDir: string;
  /** SPONSOR_KEYPAIR: path of the fee sponsor's solana-keygen file (read once at start); unset: no sponsor. */
  readonly sponsorKeypairPath: string | undefined;
  /** The fee sponsor's policy (src/operations/sponsorPolicy.ts). */
  readonly sponsorPolicy: {
    /** The whole fee (signatures + priority fee) of one sponsored transaction, at most. */
    readonly maxFeeLamports: bigint;
    /** A wallet whose sponsored transaction failed on chain is not sponsored for this long. */
    readonly strikeMs: number;
    /** Lamports lost to failed sponsored transactions per hour, all wallets / one wallet. */
    readonly maxLossLamportsPerHour: bigint;
    readonly maxLossLamportsPerOwnerPerHour: bigint;
  };
  /** RELAY_ANY_TRANSACTION: the relay lands any transaction of the allowed programs, not only what Cinder prepares. */
  readonly relayAnyTransaction: boolean;
}

export interface WalletLimits {
  /** A stream whose client takes nothing for this long loses its place in the queue and is closed. */
  readonly streamReadTimeoutMs: number;
  readonly maxStreams: number;
  readonly maxStreamsPerClient: number;
  readonly maxVanitySearches: number;
  readonly maxVanitySearchesPerClient: number;
  /** Wallets counted in the worker pool's queue (a stream counts the batches it keeps ahead of its socket). */
  readonly maxQueuedWallets: number;
  readonly maxQueuedWalletsPerClient: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LAMPORTS_PER_SOL = 1_000_000_000n;

/** Exact decimal SOL string (at most 9 decimals) → lamports. */
export function solStringToLamports(sol: string): bigint {
  const [whole = '0', fraction = ''] = sol.split('.');
  return BigInt(whole) * LAMPORTS_PER_SOL + BigInt(fraction.padEnd(9, '0'));
}

function toPort(value: string | undefined, fallback: number, name: string): number {
  const port = value === undefined ? fallback : Number(value);
  if (port > 65535) throw new ConfigError(`${name} must be a port number from 0 to 65535, got ${value}`);
  return port;
}

function toTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true') return true;
  if (/^[1-9][0-9]*$/.test(value)) return Number(value);
  return value;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const value = env[name];
    // An empty variable means "not set", as in most shells' `FOO= cmd`.
    if (value !== undefined && value !== '') picked[name] = value;
  }
  if (!Value.Check(EnvSchema, picked)) {
    const problems = [...Value.Errors(EnvSchema, picked)].map((e) => `${e.instancePath.slice(1) || 'environment'} ${e.message}`);
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  const e = picked as Env;
  const int = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));
  // Without SOLANA_RPC_URL the service runs its embedded chain: one person trying Cinder on their
  // own machine (the try-it mode). Request budgets there fit everything the docs show, a 20-wallet
  // fleet and million-wallet streams included; they guard an operator's RPC bill, which the
  // embedded chain does not have. The fairness caps (connections, previews and streams at once)
  // stay as they are: they protect the service itself. Deciding on the URL, never on a loopback
  // peer, matters: behind a reverse proxy on the same host every client looks like loopback.
  const tryIt = e.SOLANA_RPC_URL === undefined;
  const budget = (value: string | undefined, deployment: number, tryItDefault: number) => int(value, tryIt ? tryItDefault : deployment);
  const apiKeys = (e.API_KEYS ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
  for (const key of apiKeys) {
    if (key.startsWith('sha256:') && !/^sha256:[0-9a-fA-F]{64}$/.test(key)) {
      throw new ConfigError('Invalid configuration: API_KEYS has a sha256: entry that is not 64 hex digits');
    }
  }
  const maxPriorityFeeLamports = solStringToLamports(e.MAX_PRIORITY_FEE_SOL ?? '0.01');
  const guessable = e.SERVER_SECRET === undefined ? null : guessableSecretReason(e.SERVER_SECRET);
  if (guessable) {
    throw new ConfigError(
      `Invalid configuration: SERVER_SECRET ${guessable}, so anyone could guess it and mint relay tokens the fee sponsor honours; make one with SERVER_SECRET=$(${MAKE_SECRET_COMMAND})`,
    );
  }
  if ((e.REDIS_URL || e.SPONSOR_KEYPAIR) && !e.SERVER_SECRET) {
    throw new ConfigError(
      'Invalid configuration: SERVER_SECRET (at least 32 characters, the same on every instance) is required when REDIS_URL or SPONSOR_KEYPAIR is set; e.g. SERVER_SECRET=$(openssl rand -base64 32)',
    );
  }

  const walletLimits = Object.freeze({
    streamReadTimeoutMs: int(e.WALLET_STREAM_READ_TIMEOUT_MS, 30_000),
    maxStreams: int(e.MAX_WALLET_STREAMS, 64),
    maxStreamsPerClient: int(e.MAX_WALLET_STREAMS_PER_CLIENT, 4),
    maxVanitySearches: int(e.MAX_VANITY_SEARCHES, 16),
    maxVanitySearchesPerClient: int(e.MAX_VANITY_SEARCHES_PER_CLIENT, 2),
    maxQueuedWallets: int(e.MAX_QUEUED_WALLETS, 200_000),
    maxQueuedWalletsPerClient: int(e.MAX_QUEUED_WALLETS_PER_CLIENT, e.MAX_QUEUED_WALLETS === undefined ? 50_000 : Math.max(1, Math.floor(Number(e.MAX_QUEUED_WALLETS) / 4))),
  });
  // A client's share above the whole would mean the per-client cap never applies.
  for (const [perClient, total, value, whole] of [
    ['MAX_WALLET_STREAMS_PER_CLIENT', 'MAX_WALLET_STREAMS', walletLimits.maxStreamsPerClient, walletLimits.maxStreams],
    ['MAX_VANITY_SEARCHES_PER_CLIENT', 'MAX_VANITY_SEARCHES', walletLimits.maxVanitySearchesPerClient, walletLimits.maxVanitySearches],
    ['MAX_QUEUED_WALLETS_PER_CLIENT', 'MAX_QUEUED_WALLETS', walletLimits.maxQueuedWalletsPerClient, walletLimits.maxQueuedWallets],
  ] as const) {
    if (value > whole) throw new ConfigError(`Invalid configuration: ${perClient} (${value}) must not be more than ${total} (${whole})`);
  }

  return Object.freeze({
    host: e.HOST ?? '127.0.0.1',
    port: toPort(e.PORT, 8080, 'PORT'),
    solanaRpcUrl: e.SOLANA_RPC_URL,
    solanaWsUrl: e.SOLANA_WS_URL,
    solanaRpcMaxRps: e.SOLANA_RPC_MAX_RPS === undefined ? undefined : Number(e.SOLANA_RPC_MAX_RPS),
    commitment: e.COMMITMENT ?? 'confirmed',
    maxPriorityFeeLamports,
    // 1,000,000 µL/CU is one lamport a compute unit: well above a congested mainnet's usual
    // 75th percentile, and at most a few hundred thousand lamports on a full transaction.
    autoPriorityFeeMaxMicroLamports: BigInt(e.AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS ?? '1000000'),
    maxWalletsPerRequest: int(e.MAX_WALLETS_PER_REQUEST, 10_000),
    maxMnemonicWalletsPerRequest: int(e.MAX_MNEMONIC_WALLETS_PER_REQUEST, 100),
    maxVanityLength: int(e.MAX_VANITY_LENGTH, 4),
    maxWalletsStreamed: int(e.MAX_WALLETS_STREAMED, 1_000_000),
    maxOwnersPerRequest: int(e.MAX_OWNERS_PER_REQUEST, 1_000),
    rateLimitOwnersPerMin: budget(e.RATE_LIMIT_OWNERS_PER_MIN, 10_000, 1_000_000),
    apiKeys: Object.freeze(apiKeys),
    metricsToken: e.METRICS_TOKEN,
    redisUrl: e.REDIS_URL,
    rateLimit: Object.freeze({
      burnPerMin: budget(e.RATE_LIMIT_BURN_PER_MIN, 10, 1_000),
      generatePerMin: budget(e.RATE_LIMIT_GENERATE_PER_MIN, 60, 1_000),
      // A million streamed wallets take about 8 s on two cores: this budget never pauses a stream.
      walletsPerMin: budget(e.RATE_LIMIT_WALLETS_PER_MIN, 100_000, 100_000_000),
    }),
    rateLimitStatusPerMin: budget(e.RATE_LIMIT_STATUS_PER_MIN, 300, 10_000),
    rateLimitPreviewPerMin: budget(e.RATE_LIMIT_PREVIEW_PER_MIN, 60, 1_000),
    previewsPerClient: int(e.PREVIEWS_PER_CLIENT, 2),
    maxConnections: int(e.MAX_CONNECTIONS, 4096),
    maxConnectionsPerClient: int(e.MAX_CONNECTIONS_PER_CLIENT, 128),
    operationDeadlineMs: int(e.BURN_DEADLINE_MS, 60_000),
    vanityTimeoutMs: int(e.VANITY_TIMEOUT_MS, 30_000),
    vanityMaxMs: int(e.VANITY_MAX_MS, 600_000),
    walletLimits,
    requestTimeoutMs: int(e.REQUEST_TIMEOUT_MS, 10_000),
    trustProxy: toTrustProxy(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL ?? 'info',
    logFormat: e.LOG_FORMAT ?? 'auto',
    localnetPort: toPort(e.LOCALNET_PORT, 8899, 'LOCALNET_PORT'),
    serverSecret: e.SERVER_SECRET,
    stateDir: resolve(e.STATE_DIR ?? join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'cinder')),
    sponsorKeypairPath: e.SPONSOR_KEYPAIR === undefined ? undefined : resolve(e.SPONSOR_KEYPAIR),
    sponsorPolicy: Object.freeze({
      // Two signatures (10,000) and a priority fee of at most 10,000 lamports.
      maxFeeLamports: BigInt(e.SPONSOR_MAX_FEE_LAMPORTS ?? '20000'),
      strikeMs: int(e.SPONSOR_STRIKE_MS, 24 * 60 * 60 * 1000),
      maxLossLamportsPerHour: BigInt(e.SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR ?? '1000000'),
      maxLossLamportsPerOwnerPerHour: BigInt(e.SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR ?? '20000'),
    }),
    relayAnyTransaction: e.RELAY_ANY_TRANSACTION === 'true',
  });
}
