/**
 * Types of `cinder/client`, the Cinder SDK (./index.js is the plain JavaScript implementation;
 * `// @ts-check` checks it against this file, see test/client/types.test.ts).
 */

/** A `fetch` compatible function (the global one by default). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /**
   * How many times a 429 or 503 answer (or a burn's 409 REQUEST_IN_PROGRESS) is retried, after its
   * Retry-After (default 3; 0 turns retries off).
   */
  retries?: number;
  /** The longest wait the client accepts; a longer Retry-After is not waited for (default 30,000 ms). */
  maxDelayMs?: number;
  /** Wait used when the answer has no Retry-After, doubled on each retry (default 1,000 ms). */
  baseDelayMs?: number;
}

export interface CinderClientOptions {
  /** Where Cinder runs, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string | URL;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string | undefined;
  /** A fetch implementation (default: the global fetch). */
  fetch?: FetchLike | undefined;
  /** Each attempt's limit (default 120,000 ms); the waits between retries are bounded by `retry`. */
  timeoutMs?: number | undefined;
  retry?: RetryOptions | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

export interface BurnTokensRequest {
  /** Mint address (base58) of the token to burn. */
  mint: string;
  /** Total priority fee in SOL, e.g. 0.000005. */
  priorityFee: number;
  /**
   * The owner's key: base58 of the 64-byte secret key (Phantom), base58 of the 32-byte seed, or the
   * 64 bytes of a solana-keygen file (as its JSON text, an array of numbers or a Uint8Array).
   */
  userPrivateKey: string | readonly number[] | Uint8Array;
}

export interface BurnOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`; default: a new random UUID per call. Pass your own to retry a burn
   * safely across processes. A burn is retried (429, 503) only with a key: `''` sends none and
   * turns retries off.
   */
  idempotencyKey?: string | undefined;
}

export type TransactionStatus = 'success' | 'failed' | 'pending';

export interface BurnTransactionReport {
  signature: string;
  status: TransactionStatus;
  slot: number | null;
  closedAccounts: string[];
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: string;
  feeLamports: string;
  error: string | null;
}

/** What Cinder adds to the specification's burn result (u64 amounts are decimal strings). */
export interface BurnDetails {
  signatures: string[];
  slot: number | null;
  owner: string;
  mint: string;
  tokenProgram: string;
  burnedAmount: string;
  decimals: number;
  closedAccounts: string[];
  reclaimedLamports: string;
  reclaimedSol: string;
  feeLamports: string;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: string;
  transactions: BurnTransactionReport[];
}

/**
 * The one shape `burnTokens` returns, whichever form the server answered in: Form A
 * (`transactionId`, `status`, `message`), Form B (`tx_hash` only) or Cinder's combined form.
 */
export interface BurnResult {
  /** The transaction signature: Form A's `transactionId`, or Form B's `tx_hash`. */
  transactionId: string;
  /** `unknown` when the server does not say (Form B). A `failed` burn is a result, not an exception. */
  status: TransactionStatus | 'unknown';
  /** The server's description of the result; null when it sent none (Form B). */
  message: string | null;
  /** Every transaction signature of the burn (several when the accounts did not fit one). */
  signatures: string[];
  /** Cinder's details; null from a server that does not send them. */
  details: BurnDetails | null;
  /** Which form the server answered in: `A`, `B`, or `A+B` (Cinder). */
  form: 'A' | 'B' | 'A+B';
}

export interface GenerateWalletsOptions extends RequestOptions {
  /** Also return a BIP39 mnemonic of 12 or 24 words per wallet. */
  mnemonic?: 12 | 24 | undefined;
  /** Vanity address: starts with these base58 characters. */
  prefix?: string | undefined;
  /** Vanity address: ends with these base58 characters. */
  suffix?: string | undefined;
  ignoreCase?: boolean | undefined;
  /** `keygen`: also return each key as the 64-number array of a solana-keygen file. */
  format?: 'keygen' | undefined;
}

export interface Keypair {
  address: string;
  /** base58 of the 64-byte secret key (Phantom's export format). */
  privateKey: string;
  mnemonic?: string;
  secretKeyBytes?: number[];
}

export interface GeneratedWallets {
  /** The n addresses. */
  wallets: string[];
  /** keypairs[i] is wallets[i] with its key; empty from a server that sends addresses only. */
  keypairs: Keypair[];
}

export interface TransactionStatusResult {
  transactionId: string;
  status: TransactionStatus | 'unknown';
  message: string | null;
  slot: number | null;
}

/** What a whole-wallet reclaim does with one token account. */
export type ReclaimAction = 'close' | 'burn_and_close' | 'unwrap' | 'withdraw_excess' | 'keep' | 'skip';

export interface ReclaimOptions {
  /** Mints whose balances are burned (and their accounts closed) as well; by default accounts holding a balance are kept. */
  burn?: readonly string[] | undefined;
  /** Also take each kept account's lamports above its rent-exempt minimum (WithdrawExcessLamports). */
  withdrawExcess?: boolean | undefined;
}

export interface PreviewReclaimRequest extends ReclaimOptions {
  /** The wallet address (base58) whose token accounts are read; no key needed. */
  owner: string;
  /** Total priority fee in SOL the reclaim would pay (default: the server's, 0). */
  priorityFee?: number | undefined;
}

/** One token account in a preview (u64 amounts are decimal strings). */
export interface ReclaimPreviewAccount {
  address: string;
  mint: string;
  tokenProgram: string;
  amount: string;
  /** null when the mint no longer exists. */
  decimals: number | null;
  lamports: string;
  rentExemptLamports: string;
  excessLamports: string;
  state: 'initialized' | 'frozen';
  isNative: boolean;
  action: ReclaimAction;
  /** Why the account is skipped (e.g. `ACCOUNT_FROZEN`); null otherwise. */
  code: string | null;
  [extension: string]: unknown;
}

export interface ReclaimSummary extends Partial<Record<ReclaimAction, number>> {
  /** How many token accounts the owner has. */
  accounts: number;
  /** How many transactions the reclaim needs. */
  transactions: number;
  /** Lamports the closes return. */
  reclaimLamports: string;
  /** Lamports WithdrawExcessLamports returns (withdrawExcess). */
  excessLamports: string;
  feeLamports: string;
  /** reclaim + excess − fees; a signed decimal string. */
  netLamports: string;
  netSol?: string;
  /** The service's fee sponsor would pay (the owner cannot) and be repaid from the rent. */
  sponsored?: boolean;
  /** What would stop the reclaim now (the error a reclaim would answer, e.g. FEE_EXCEEDS_RECLAIM), or null. */
  problem?: { code: string; detail: string } | null;
  [extension: string]: unknown;
}

/** GET /api/reclaim_rent: what a reclaim with the same options would do, nothing signed. */
export interface ReclaimPreview {
  owner: string;
  accounts: ReclaimPreviewAccount[];
  summary: ReclaimSummary;
  [extension: string]: unknown;
}

export interface ReclaimRentRequest extends ReclaimOptions {
  /** The owner's key, in any format burnTokens accepts. Never logged, stored or put in an error. */
  userPrivateKey: string | readonly number[] | Uint8Array;
  /** Total priority fee in SOL, e.g. 0.000005. */
  priorityFee: number;
  /** Go on even when the fees are larger than what comes back (otherwise 400 FEE_EXCEEDS_RECLAIM). */
  allowNetLoss?: boolean | undefined;
  /**
   * Sent as `Idempotency-Key`; default: a new random UUID per call. Pass your own to retry a reclaim
   * safely across processes; `''` sends none and turns retries off.
   */
  idempotencyKey?: string | undefined;
}

export interface SkippedAccount {
  address: string;
  /** Why it was skipped, e.g. `ACCOUNT_FROZEN`. */
  code: string;
  reason?: string;
}

/** What a reclaim or a relay reports (u64 amounts are decimal strings; netLamports is signed). */
export interface ReclaimDetails {
  signatures: string[];
  slot: number | null;
  owner: string;
  closedAccounts: string[];
  burned: { mint: string; amount: string; decimals: number }[];
  skippedAccounts: SkippedAccount[];
  reclaimedLamports: string;
  reclaimedSol: string;
  excessWithdrawnLamports: string;
  /** Fees the owner bore (when sponsored: repaid to the sponsor in the same transactions). */
  feeLamports: string;
  netLamports: string;
  netSol: string;
  /** The service's fee sponsor paid the fees and was repaid from the reclaimed rent. */
  sponsored: boolean;
  transactions: BurnTransactionReport[];
  [extension: string]: unknown;
}

/** The result of a whole-wallet reclaim. A `failed` (or partly landed) reclaim is a result, not an exception. */
export interface ReclaimResult {
  transactionId: string;
  status: TransactionStatus | 'unknown';
  message: string | null;
  signatures: string[];
  details: ReclaimDetails | null;
}

export type FeePayer = 'owner' | 'sponsor';

export interface PrepareBurnRequest {
  /** The owner's address (base58): the wallet that will sign. */
  owner: string;
  mint: string;
  /** Total priority fee in SOL. */
  priorityFee: number;
  /** `sponsor`: the service's fee sponsor pays and is repaid from the reclaimed rent in the same transaction. */
  feePayer?: FeePayer | undefined;
  /** Prepare even when the fees exceed what comes back (otherwise 400 FEE_EXCEEDS_RECLAIM). */
  allowNetLoss?: boolean | undefined;
}

export interface PrepareReclaimRequest extends ReclaimOptions {
  owner: string;
  priorityFee: number;
  feePayer?: FeePayer | undefined;
  allowNetLoss?: boolean | undefined;
}

/** Unsigned transactions for a wallet to sign, then to hand to `relay`. */
export interface PreparedTransactions {
  /** base64 wire transactions, unsigned (the owner's signature slots are zero). */
  transactions: string[];
  /** The block height after which the transactions can no longer land (u64 decimal string). */
  lastValidBlockHeight: string;
  /** The fee payer of every transaction: the owner, or the service's fee sponsor. */
  feePayer: string;
  /** The plan, as the preview shows it. */
  details: ReclaimPreview;
  /** With a sponsored fee payer: pass it to `relay` so the service adds its sponsor's signature. */
  relayToken?: string | undefined;
  [extension: string]: unknown;
}

export interface RelayRequest {
  /** base64 wire transactions, signed by the owner (every signature but the sponsor's, when sponsored). */
  transactions: readonly string[];
  /** The prepare answer's relayToken, for sponsored transactions. */
  relayToken?: string | undefined;
}

export interface RelayTransactionReport {
  signature: string;
  status: TransactionStatus;
  slot: number | null;
  /** The fee sponsor paid its fee and was repaid in the same transaction. */
  sponsored: boolean;
  error: string | null;
  [extension: string]: unknown;
}

export interface RelayDetails {
  signatures: string[];
  slot: number | null;
  transactions: RelayTransactionReport[];
  [extension: string]: unknown;
}

/** The relay's answer, in the burn's shape. A `failed` relay is a result, not an exception. */
export interface RelayResult {
  transactionId: string;
  status: TransactionStatus | 'unknown';
  message: string | null;
  signatures: string[];
  details: RelayDetails | null;
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** An RFC 9457 problem details body, as Cinder sends with every error. */
export interface ProblemDetails {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: FieldProblem[];
  [extension: string]: unknown;
}

/** Codes the client itself uses when no problem+json body explains the failure. */
export type ClientErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE' | 'INVALID_ARGUMENT' | `HTTP_${number}`;

/**
 * Every failure of the client: an error answer of the server (its problem+json fields), or one
 * the client detected (`status` 0 and a ClientErrorCode, or the HTTP status of a non-problem body).
 */
export declare class CinderApiError extends Error {
  constructor(init: {
    status: number;
    code: string;
    detail: string;
    title?: string | undefined;
    type?: string | undefined;
    errors?: FieldProblem[] | undefined;
    problem?: ProblemDetails | undefined;
    retryAfterMs?: number | undefined;
    requestId?: string | undefined;
    cause?: unknown;
  });
  override readonly name: 'CinderApiError';
  /** HTTP status; 0 when no answer was received (network error, timeout, abort, bad argument). */
  readonly status: number;
  /** The problem `code` (e.g. `INVALID_MINT`, `RATE_LIMITED`), or a ClientErrorCode. */
  readonly code: string;
  /** The human explanation (the problem `detail`). */
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** Per-field problems of a validation failure. */
  readonly errors: FieldProblem[];
  /** The whole problem body, when there was one. */
  readonly problem: ProblemDetails | undefined;
  /** The server's Retry-After, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The server's X-Request-Id: quote it to find the request in the server log. */
  readonly requestId: string | undefined;
}

export interface CinderClient {
  readonly baseUrl: string;
  /** POST /api/burn_tokens, with an Idempotency-Key; the answer in one shape whatever its form. */
  burnTokens(request: BurnTokensRequest, options?: BurnOptions): Promise<BurnResult>;
  /** GET /api/generate_wallets?n=N (one request: n is limited by the server). */
  generateWallets(n: number, options?: GenerateWalletsOptions): Promise<GeneratedWallets>;
  /** GET /api/transactions/{signature}. */
  getTransaction(signature: string, options?: RequestOptions): Promise<TransactionStatusResult>;
  /** GET /api/reclaim_rent: every token account of `owner`, what a reclaim would do with it, and the sums. No key. */
  previewReclaim(request: PreviewReclaimRequest, options?: RequestOptions): Promise<ReclaimPreview>;
  /** POST /api/reclaim_rent, with an Idempotency-Key: does what previewReclaim showed, in as few transactions as fit. */
  reclaimRent(request: ReclaimRentRequest, options?: RequestOptions): Promise<ReclaimResult>;
  /** POST /api/burn_tokens/prepare: the burn's unsigned transactions, for a wallet to sign. */
  prepareBurn(request: PrepareBurnRequest, options?: RequestOptions): Promise<PreparedTransactions>;
  /** POST /api/reclaim_rent/prepare: the reclaim's unsigned transactions, for a wallet to sign. */
  prepareReclaim(request: PrepareReclaimRequest, options?: RequestOptions): Promise<PreparedTransactions>;
  /** POST /api/transactions: lands signed transactions (retried on 429/503: the answer is idempotent by signature). */
  relay(request: RelayRequest, options?: RequestOptions): Promise<RelayResult>;
}

export declare function createCinderClient(options: CinderClientOptions): CinderClient;

/** Normalises a burn answer of any form (used by burnTokens; exported for callers with their own HTTP). */
export declare function normaliseBurnResult(body: unknown): BurnResult;

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds; undefined when absent or invalid. */
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | undefined;
