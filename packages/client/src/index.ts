/**
 * The Cinder SDK: one function per route, answers in one shape, errors as CinderApiError, and the
 * one retry policy of the client (the CLI uses it too, through `retry.onRetry`).
 *
 * Every request and answer type is the service's route schema (src/api.ts, TypeBox `Static`),
 * imported as types only: this file loads no server code, and a schema change it does not follow
 * fails to compile (test/client/apiTypes.ts). The types declared here are the SDK's own: its
 * options, and the one shape it gives the answers of a burn, a reclaim and a relay whichever form
 * (the specification's A or B) a server answers in.
 *
 * Never puts a private key in an error, a log or a URL: keys only ever travel in a request body.
 */
import type * as Api from '@cinder/service';

export type {
  FieldProblem,
  Problem as ProblemDetails,
  ReclaimPreviewAccount,
  ReclaimPreviewResponse as ReclaimPreview,
  PrepareResponse as PreparedTransactions,
  PrepareBurnRequest,
  PrepareReclaimRequest,
  PrepareReclaimManyRequest,
  PrepareReclaimManyResponse,
  ReclaimManyPreviewRequest,
  ReclaimManyPreviewResponse,
  RelayRequest,
  TransactionStatus,
} from '@cinder/service';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_RETRY = { retries: 3, maxDelayMs: 30_000, baseDelayMs: 1_000 };
const STATUSES: readonly string[] = ['success', 'failed', 'pending'] satisfies Api.TransactionStatus[];
/** A signal that never aborts. */
const NEVER = new AbortController().signal;

// ---- the SDK's own types ----

/** A `fetch` compatible function (the global one by default). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** What `onRetry` is told before each wait. */
export interface RetryNotice {
  /** The answer being waited out (429, 503, or 409 REQUEST_IN_PROGRESS). */
  error: CinderApiError;
  /** 1 for the first retry. */
  attempt: number;
  /** Of `retries`. */
  retries: number;
  delayMs: number;
}

/**
 * The client's one retry policy: a 429, a 503 or a 409 REQUEST_IN_PROGRESS (the same Idempotency-Key
 * still running) is waited out for as long as the server asks (Retry-After, else `baseDelayMs`
 * doubling), at most `retries` times, and never longer than `maxDelayMs` at a time. Nothing else is
 * retried: a network error may have happened after the server acted. A burn or a reclaim is retried
 * only with an Idempotency-Key, which makes the server answer a repeat with the first result.
 */
export interface RetryOptions {
  /** How many times an answer is waited out (default 3; 0 turns retries off). */
  retries?: number | undefined;
  /** The longest wait the client accepts; a longer Retry-After is not waited for (default 30,000 ms). */
  maxDelayMs?: number | undefined;
  /** Wait used when the answer has no Retry-After, doubled on each retry (default 1,000 ms). */
  baseDelayMs?: number | undefined;
  /** Called before each wait (the CLI says on standard error that it waits, why and how long). */
  onRetry?: ((notice: RetryNotice) => void | Promise<void>) | undefined;
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

/**
 * A private key as the SDK takes it: what the routes take (base58 of the 64-byte secret key or of
 * the 32-byte seed, or the 64 numbers of a solana-keygen file), or those 64 bytes as a Uint8Array.
 */
export type PrivateKeyInput = Api.BurnRequest['userPrivateKey'] | readonly number[] | Uint8Array;

/** Makes the key field take a Uint8Array too. */
type WithKeyInput<T extends { userPrivateKey: unknown }> = Omit<T, 'userPrivateKey'> & { userPrivateKey: PrivateKeyInput };

interface IdempotencyOption {
  /**
   * Sent as `Idempotency-Key`; default: a new random UUID per call. Pass your own to retry safely
   * across processes. Retried (429, 503) only with a key: `''` sends none and turns retries off.
   */
  idempotencyKey?: string | undefined;
}

export type BurnTokensRequest = WithKeyInput<Api.BurnRequest>;
export interface BurnOptions extends RequestOptions, IdempotencyOption {}
export type ReclaimRentRequest = WithKeyInput<Api.ReclaimRequest> & IdempotencyOption;
/** Many owners' keys and the fee payer's, each in any form PrivateKeyInput takes. */
export type ReclaimRentManyRequest = Omit<Api.ReclaimManyRequest, 'userPrivateKeys' | 'feePayerPrivateKey'> & {
  userPrivateKeys: readonly PrivateKeyInput[];
  feePayerPrivateKey: PrivateKeyInput;
} & IdempotencyOption;

/** A query parameter's wire form ('12', 'true') as the value a caller passes (12, true). */
type QueryValue<T> = T extends `${infer N extends number}` ? N : T extends 'true' | 'false' ? boolean : T;
type QueryOptions<Q> = { [K in keyof Q]?: QueryValue<NonNullable<Q[K]>> | undefined };

/** GET /api/generate_wallets's parameters but n, as values (`mnemonic: 12`, `ignoreCase: true`). */
export type GenerateWalletsOptions = QueryOptions<Omit<Api.GenerateWalletsQuery, 'n'>> & RequestOptions;
export type GeneratedWallets = Api.GenerateWalletsResponse;
export type Keypair = Api.GenerateWalletsResponse['keypairs'][number];
/**
 * One line of a streamed answer, as streamWallets yields it: `{ mnemonic }` first with hd, a
 * keypair per wallet, and a vanity search's `{ keysTried }`. The server's closing `{ error }` line
 * is thrown as a CinderApiError, never yielded.
 */
export type WalletStreamLine = Exclude<Api.GenerateWalletsStreamLine, { error: unknown }>;

/**
 * GET /api/reclaim_rent's parameters as values: the mints to burn as a list, the fee as a number of
 * SOL (as in a reclaim), the flags as booleans.
 */
export type PreviewReclaimRequest = Pick<Api.ReclaimPreviewQuery, 'owner'> &
  Partial<Pick<Api.ReclaimRequest, 'burn' | 'priorityFee' | 'withdrawExcess'>> &
  QueryOptions<Pick<Api.ReclaimPreviewQuery, 'metadata'>>;

export type ReclaimAction = Api.ReclaimPreviewAccount['action'];
export type FeePayer = NonNullable<Api.PrepareReclaimRequest['feePayer']>;

/** `unknown`: the server did not say (the specification's Form B). */
export type ResultStatus = Api.TransactionStatus | 'unknown';

/**
 * The one shape of an answer that sent transactions (a burn, a reclaim, a relay), whichever form the
 * server answered in. A `failed` or `pending` one is a result, not an exception.
 */
export interface OperationResult<Details> {
  /** The (first) transaction signature: Form A's `transactionId`, or Form B's `tx_hash`. */
  transactionId: string;
  status: ResultStatus;
  /** The server's description of the result; null when it sent none (Form B). */
  message: string | null;
  /** Every transaction signature (several when the work did not fit one transaction). */
  signatures: string[];
  /** Cinder's details; null from a server that does not send them. */
  details: Details | null;
}

export type BurnDetails = Api.BurnResponse['details'];
export type BurnTransactionReport = BurnDetails['transactions'][number];
export interface BurnResult extends OperationResult<BurnDetails> {
  /** Which form the server answered in: `A`, `B`, or `A+B` (Cinder). */
  form: 'A' | 'B' | 'A+B';
}
export type ReclaimDetails = Api.ReclaimResponse['details'];
export type ReclaimResult = OperationResult<ReclaimDetails>;
export type ReclaimManyDetails = Api.ReclaimManyResponse['details'];
export type ReclaimManyResult = OperationResult<ReclaimManyDetails>;
export type RelayDetails = Api.RelayResponse['details'];
export type RelayResult = OperationResult<RelayDetails>;

type StatusAnswer = Api.TransactionStatusResponse;
/** GET /api/transactions/{signature}, tolerant of a server that leaves fields out. */
export interface TransactionStatusResult {
  transactionId: StatusAnswer['transactionId'];
  status: StatusAnswer['status'] | 'unknown';
  message: StatusAnswer['message'] | null;
  slot: NonNullable<StatusAnswer['slot']> | null;
}

/** Codes the client itself uses when no problem+json body explains the failure. */
export type ClientErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE' | 'INVALID_ARGUMENT' | `HTTP_${number}`;

export interface CinderApiErrorInit {
  status: number;
  code: string;
  detail: string;
  title?: string | undefined;
  type?: string | undefined;
  errors?: Api.FieldProblem[] | undefined;
  problem?: Api.Problem | undefined;
  retryAfterMs?: number | undefined;
  requestId?: string | undefined;
  cause?: unknown;
}

/**
 * Every failure of the client: an error answer of the server (its problem+json fields), or one
 * the client detected (`status` 0 and a ClientErrorCode, or the HTTP status of a non-problem body).
 */
export class CinderApiError extends Error {
  override readonly name = 'CinderApiError' as const;
  /** HTTP status; 0 when no answer was received (network error, timeout, abort, bad argument). */
  readonly status: number;
  /** The problem `code` (e.g. `INVALID_MINT`, `RATE_LIMITED`), or a ClientErrorCode. */
  readonly code: string;
  /** The human explanation (the problem `detail`). */
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** Per-field problems of a validation failure. */
  readonly errors: Api.FieldProblem[];
  /** The whole problem body, when there was one. */
  readonly problem: Api.Problem | undefined;
  /** The server's Retry-After, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The server's X-Request-Id: quote it to find the request in the server log. */
  readonly requestId: string | undefined;

  constructor(init: CinderApiErrorInit) {
    super(`${init.code}${init.status ? ` (HTTP ${init.status})` : ''}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.title = init.title;
    this.type = init.type;
    this.errors = init.errors ?? [];
    this.problem = init.problem;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }
}

export interface CinderClient {
  readonly baseUrl: string;
  /** POST /api/burn_tokens, with an Idempotency-Key; the answer in one shape whatever its form. */
  burnTokens(request: BurnTokensRequest, options?: BurnOptions): Promise<BurnResult>;
  /** GET /api/generate_wallets?n=N (one request: n is limited by the server). */
  generateWallets(n: number, options?: GenerateWalletsOptions): Promise<GeneratedWallets>;
  /**
   * GET /api/generate_wallets?n=N with `Accept: application/x-ndjson`: each line as it arrives (the
   * body is read part by part, never whole), for n up to the server's MAX_WALLETS_STREAMED (vanity
   * and mnemonic: its per-request limits). 429/503 are waited out as by the other methods, but only
   * before the first byte: a stream that breaks, ends early or ends with the server's `{ error }`
   * line throws (NETWORK_ERROR, or the server's problem), never starts over. `timeoutMs` bounds the
   * wait for the answer and then each wait for more of it (a stream paused by the server's wallet
   * budget sends nothing until its window resets, up to a minute).
   */
  streamWallets(n: number, options?: GenerateWalletsOptions): AsyncGenerator<WalletStreamLine, void, undefined>;
  /** GET /api/transactions/{signature}. */
  getTransaction(signature: string, options?: RequestOptions): Promise<TransactionStatusResult>;
  /** GET /api/reclaim_rent: every token account of `owner`, what a reclaim would do with it, and the sums. No key. */
  previewReclaim(request: PreviewReclaimRequest, options?: RequestOptions): Promise<Api.ReclaimPreviewResponse>;
  /** POST /api/reclaim_rent, with an Idempotency-Key: does what previewReclaim showed, in as few transactions as fit. */
  reclaimRent(request: ReclaimRentRequest, options?: RequestOptions): Promise<ReclaimResult>;
  /** POST /api/burn_tokens/prepare: the burn's unsigned transactions, for a wallet to sign. */
  prepareBurn(request: Api.PrepareBurnRequest, options?: RequestOptions): Promise<Api.PrepareResponse>;
  /** POST /api/reclaim_rent/prepare: the reclaim's unsigned transactions, for a wallet to sign. */
  prepareReclaim(request: Api.PrepareReclaimRequest, options?: RequestOptions): Promise<Api.PrepareResponse>;
  /** POST /api/reclaim_rent/preview: what a reclaim of many owners would close and return, in one plan. No key. */
  previewReclaimMany(request: Api.ReclaimManyPreviewRequest, options?: RequestOptions): Promise<Api.ReclaimManyPreviewResponse>;
  /** POST /api/reclaim_rent with many owners' keys: one fee payer pays, every rent goes to `destination`. */
  reclaimRentMany(request: ReclaimRentManyRequest, options?: RequestOptions): Promise<ReclaimManyResult>;
  /** POST /api/reclaim_rent/prepare with `owners`: the unsigned transactions of that reclaim, each with who must sign it and its relayToken. */
  prepareReclaimMany(request: Api.PrepareReclaimManyRequest, options?: RequestOptions): Promise<Api.PrepareReclaimManyResponse>;
  /** POST /api/transactions: lands signed transactions (retried on 429/503: the answer is idempotent by signature). */
  relay(request: Api.RelayRequest, options?: RequestOptions): Promise<RelayResult>;
}

// ---- answers in one shape ----

function clientError(code: ClientErrorCode, detail: string, status = 0, cause: unknown = undefined): CinderApiError {
  return new CinderApiError({ status, code, detail, cause });
}

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds; undefined when absent or invalid. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function statusOf(value: unknown): ResultStatus {
  return typeof value === 'string' && STATUSES.includes(value) ? (value as Api.TransactionStatus) : 'unknown';
}

function invalidResponse(detail: string, status = 200): CinderApiError {
  return clientError('INVALID_RESPONSE', detail, status);
}

/** The signatures of an answer's details, or the one transaction id when it lists none. */
function signaturesOf(details: Record<string, unknown> | null, id: string): string[] {
  const listed = details?.signatures;
  return Array.isArray(listed) && listed.length > 0 && listed.every(isNonEmptyString) ? [...listed] : [id];
}

/** Normalises a burn answer of any form (used by burnTokens; exported for callers with their own HTTP). */
export function normaliseBurnResult(body: unknown): BurnResult {
  if (!isObject(body)) throw invalidResponse('The burn answer is not a JSON object');
  const { transactionId, tx_hash: txHash } = body;
  const hasA = transactionId !== undefined;
  const hasB = txHash !== undefined;
  if (hasA && !isNonEmptyString(transactionId)) throw invalidResponse('The burn answer has a transactionId that is not a string');
  if (hasB && !isNonEmptyString(txHash)) throw invalidResponse('The burn answer has a tx_hash that is not a string');
  if (!hasA && !hasB) throw invalidResponse('The burn answer has neither transactionId (Form A) nor tx_hash (Form B)');
  if (hasA && hasB && transactionId !== txHash) throw invalidResponse('The burn answer has a transactionId and a tx_hash that differ');
  const id = (hasA ? transactionId : txHash) as string;
  const details = isObject(body.details) ? body.details : null;
  return {
    transactionId: id,
    status: hasA ? statusOf(body.status) : 'unknown',
    message: typeof body.message === 'string' ? body.message : null,
    signatures: signaturesOf(details, id),
    details: details as BurnDetails | null,
    form: hasA && hasB ? 'A+B' : hasA ? 'A' : 'B',
  };
}

function normaliseWallets(body: unknown, n: number): GeneratedWallets {
  if (!isObject(body) || !Array.isArray(body.wallets) || !body.wallets.every(isNonEmptyString)) {
    throw invalidResponse('The wallet answer has no list of addresses (wallets)');
  }
  if (body.wallets.length !== n) throw invalidResponse(`Asked for ${n} wallets, received ${body.wallets.length}`);
  const wallets = body.wallets;
  let keypairs: Keypair[] = [];
  if (body.keypairs !== undefined) {
    const given = body.keypairs;
    if (!Array.isArray(given) || given.length !== n || !given.every((k, i) => isObject(k) && k.address === wallets[i] && isNonEmptyString(k.privateKey))) {
      throw invalidResponse('The wallet answer has keypairs that do not match its wallets');
    }
    keypairs = given as Keypair[];
  }
  return { ...(isNonEmptyString(body.mnemonic) ? { mnemonic: body.mnemonic } : {}), wallets, keypairs };
}

function normaliseTransaction(body: unknown, signature: string): TransactionStatusResult {
  if (!isObject(body)) throw invalidResponse('The transaction answer is not a JSON object');
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : signature;
  return {
    transactionId: id,
    status: statusOf(body.status),
    message: typeof body.message === 'string' ? body.message : null,
    slot: typeof body.slot === 'number' ? body.slot : null,
  };
}

/** A reclaim's or relay's answer (Cinder's combined form: transactionId, status, message, tx_hash, details) in the SDK's shape. */
function normaliseOperation<Details>(body: unknown, what: string): OperationResult<Details> {
  if (!isObject(body)) throw invalidResponse(`The ${what} answer is not a JSON object`);
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : undefined;
  if (id === undefined) throw invalidResponse(`The ${what} answer has no transactionId`);
  const details = isObject(body.details) ? body.details : null;
  return {
    transactionId: id,
    status: statusOf(body.status),
    message: typeof body.message === 'string' ? body.message : null,
    signatures: signaturesOf(details, id),
    details: details as Details | null,
  };
}

function normalisePreview(body: unknown): Api.ReclaimPreviewResponse {
  if (!isObject(body) || !isNonEmptyString(body.owner) || !Array.isArray(body.accounts) || !isObject(body.summary)) {
    throw invalidResponse('The preview answer has no owner, accounts and summary');
  }
  return body as unknown as Api.ReclaimPreviewResponse;
}

function normalisePreparedMany(body: unknown): Api.PrepareReclaimManyResponse {
  if (!isObject(body) || !Array.isArray(body.transactions) || !body.transactions.every((t) => isObject(t) && isNonEmptyString(t.transaction) && Array.isArray(t.signers))) {
    throw invalidResponse('The prepare answer has no transactions with their signers');
  }
  return body as unknown as Api.PrepareReclaimManyResponse;
}

function normalisePreviewMany(body: unknown): Api.ReclaimManyPreviewResponse {
  if (!isObject(body) || !Array.isArray(body.owners) || !isNonEmptyString(body.totalReclaimableLamports)) {
    throw invalidResponse('The preview answer has no owners and totalReclaimableLamports');
  }
  return body as unknown as Api.ReclaimManyPreviewResponse;
}

function normalisePrepared(body: unknown): Api.PrepareResponse {
  if (!isObject(body) || !Array.isArray(body.transactions) || body.transactions.length === 0 || !body.transactions.every(isNonEmptyString)) {
    throw invalidResponse('The prepare answer has no transactions');
  }
  return body as unknown as Api.PrepareResponse;
}

/**
 * A priority fee in SOL as a plain decimal for a query string: String(1e-7) is "1e-7", which is
 * not an amount of SOL a server should have to parse.
 */
function decimalString(value: number): string {
  const text = String(value);
  const exponent = /^(\d)(?:\.(\d+))?e-(\d+)$/.exec(text);
  if (!exponent) return text;
  const digits = `${exponent[1]}${exponent[2] ?? ''}`;
  return `0.${'0'.repeat(Number(exponent[3]) - 1)}${digits}`;
}

/** A key as the routes take it: bytes as the 64 numbers of a solana-keygen file. */
function wireKey(key: PrivateKeyInput): Api.BurnRequest['userPrivateKey'] {
  return typeof key === 'string' ? key : Array.from(key);
}

/** A request body as JSON, its key as the routes take it. */
function bodyWithKey<T extends { userPrivateKey: PrivateKeyInput }>(request: T): string {
  return JSON.stringify({ ...request, userPrivateKey: wireKey(request.userPrivateKey) });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function readBody(response: Response): Promise<{ json: unknown; text: string }> {
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  if (!/[/+]json\b/i.test(type) || text === '') return { json: undefined, text };
  try {
    return { json: JSON.parse(text), text };
  } catch {
    return { json: undefined, text };
  }
}

/**
 * Reason phrases of the statuses a proxy or gateway commonly answers with. From this table, not
 * from the response's status line, which the other side writes.
 */
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 413: 'Payload Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type',
  429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/** The error a problem details object describes (an error answer's body, or a stream's closing `{ error }` line). */
function problemError(
  problem: Record<string, unknown>,
  status: number,
  fallbackDetail: string,
  extra: Pick<CinderApiErrorInit, 'retryAfterMs' | 'requestId'> = {},
): CinderApiError {
  return new CinderApiError({
    status,
    code: typeof problem.code === 'string' ? problem.code : 'INVALID_RESPONSE',
    detail: typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : fallbackDetail,
    title: typeof problem.title === 'string' ? problem.title : undefined,
    type: typeof problem.type === 'string' ? problem.type : undefined,
    errors: Array.isArray(problem.errors) ? (problem.errors as Api.FieldProblem[]) : undefined,
    problem: problem as Api.Problem,
    ...extra,
  });
}

function errorFromResponse(response: Response, json: unknown): CinderApiError {
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const requestId = response.headers.get('x-request-id') ?? undefined;
  // Only a problem+json body is read: any other body may be an echo of the request (a proxy's
  // error page quoting it, key included), so no part of it goes into the error.
  const isProblem = /^application\/problem\+json\b/i.test(response.headers.get('content-type') ?? '');
  if (isProblem && isObject(json) && typeof json.code === 'string') return problemError(json, response.status, response.statusText, { retryAfterMs, requestId });
  // Not a problem+json body (a proxy's error page, another server): its status only, never its text.
  return new CinderApiError({
    status: response.status,
    code: `HTTP_${response.status}`,
    detail: `HTTP ${response.status}${STATUS_TEXT[response.status] ? ` ${STATUS_TEXT[response.status]}` : ''} (the answer is not problem+json; its body is not shown)`,
    retryAfterMs,
    requestId,
  });
}

/** An attempt's time limit, restartable: a stream's next part gets the whole limit again. */
interface AttemptTimer {
  signal: AbortSignal;
  expired(): boolean;
  restart(): void;
  stop(): void;
}

function attemptTimer(ms: number): AttemptTimer {
  const controller = new AbortController();
  const expire = () => controller.abort(new DOMException(`No answer within ${ms} ms`, 'TimeoutError'));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    timer = setTimeout(expire, ms);
    // A pending limit does not keep a Node process alive (as AbortSignal.timeout).
    (timer as { unref?: () => void }).unref?.();
  };
  start();
  return {
    signal: controller.signal,
    expired: () => controller.signal.aborted,
    restart: () => {
      clearTimeout(timer);
      if (!controller.signal.aborted) start();
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * The lines of a streamed wallets answer, read part by part. The server's `{ error }` line is
 * thrown as its problem; a stream that breaks, or ends before its n wallets (a cut that fell
 * between two lines), is `failure`'s error. A line is never quoted in an error: it may hold a key.
 */
async function* readWalletLines(
  body: ReadableStream<Uint8Array>,
  n: number,
  on: { restart(): void; failure(cause: unknown, wallets: number): CinderApiError },
): AsyncGenerator<WalletStreamLine, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  let wallets = 0;
  let done = false;
  try {
    while (!done) {
      let part: ReadableStreamReadResult<Uint8Array>;
      try {
        part = await reader.read();
      } catch (error) {
        throw on.failure(error, wallets);
      }
      on.restart();
      done = part.done;
      const lines = (rest + (part.done ? decoder.decode() : decoder.decode(part.value, { stream: true }))).split('\n');
      rest = lines.pop()!;
      for (const text of lines) {
        if (text === '') continue;
        const line = parseStreamLine(text);
        if ('address' in line) wallets++;
        yield line;
      }
    }
  } finally {
    if (!done) void reader.cancel().catch(() => {});
  }
  if (rest !== '' || wallets < n) throw on.failure(undefined, wallets);
}

function parseStreamLine(text: string): WalletStreamLine {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    throw invalidResponse('The wallets stream has a line that is not JSON');
  }
  if (!isObject(line)) throw invalidResponse('The wallets stream has a line that is not a JSON object');
  if (isObject(line.error)) {
    const { error } = line;
    throw problemError(error, typeof error.status === 'number' ? error.status : 0, 'The server ended the stream with an error');
  }
  if ('address' in line && !(isNonEmptyString(line.address) && isNonEmptyString(line.privateKey))) {
    throw invalidResponse('The wallets stream has a wallet without its address and key');
  }
  return line as WalletStreamLine;
}

/** The answers the retry policy waits out: rate limited, busy, or the same Idempotency-Key still running. */
export function isRetryable(error: CinderApiError): boolean {
  return error.status === 429 || error.status === 503 || (error.status === 409 && error.code === 'REQUEST_IN_PROGRESS');
}

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** Whether sending it again is harmless (see RetryOptions). */
  retryable: boolean;
  signal?: AbortSignal | undefined;
}

/** The Idempotency-Key header of an operation that sends something (none for ''), and whether its retries are safe. */
function idempotencyOf(option: IdempotencyOption): { headers: Record<string, string>; retryable: boolean } {
  const key = option.idempotencyKey ?? globalThis.crypto.randomUUID();
  return { headers: { 'content-type': 'application/json', ...(key !== '' ? { 'idempotency-key': key } : {}) }, retryable: key !== '' };
}

export function createCinderClient(options: CinderClientOptions): CinderClient {
  if (!isObject(options) || (typeof options.baseUrl !== 'string' && !(options.baseUrl instanceof URL))) {
    throw clientError('INVALID_ARGUMENT', 'createCinderClient needs { baseUrl }, e.g. "http://127.0.0.1:8080"');
  }
  let base: URL;
  try {
    base = new URL(String(options.baseUrl));
  } catch {
    throw clientError('INVALID_ARGUMENT', `baseUrl is not a URL: ${String(options.baseUrl)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw clientError('INVALID_ARGUMENT', 'baseUrl must be an http: or https: URL');
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const baseUrl = base.href.replace(/\/$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw clientError('INVALID_ARGUMENT', 'No fetch implementation: pass { fetch }');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retry = {
    retries: options.retry?.retries ?? DEFAULT_RETRY.retries,
    maxDelayMs: options.retry?.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs,
    baseDelayMs: options.retry?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs,
    onRetry: options.retry?.onRetry,
  };
  const baseHeaders: Record<string, string> = { accept: 'application/json, application/problem+json', ...options.headers };
  if (options.apiKey) baseHeaders.authorization = `Bearer ${options.apiKey}`;

  /**
   * One call, with the retry policy's waits: the first answer that is not an error, its body not
   * read yet, and the timer of its attempt (stopped by the caller once the body is read).
   */
  async function send(call: Call): Promise<{ response: Response; timer: AttemptTimer }> {
    const url = `${baseUrl}/${call.path.replace(/^\//, '')}`;
    const headers = { ...baseHeaders, ...call.headers };
    for (let attempt = 0; ; attempt++) {
      // timeoutMs bounds each attempt; the waits between attempts are bounded by the retry options.
      const timer = attemptTimer(timeoutMs);
      const signal = call.signal ? AbortSignal.any([call.signal, timer.signal]) : timer.signal;
      let response: Response;
      let body: { json: unknown; text: string };
      try {
        response = await fetchImpl(url, { method: call.method, headers, body: call.body, signal, redirect: 'error' });
      } catch (error) {
        timer.stop();
        if (call.signal?.aborted) throw clientError('ABORTED', 'The request was aborted', 0, error);
        if (timer.expired()) throw clientError('TIMEOUT', `No answer from ${baseUrl} within ${timeoutMs} ms`, 0, error);
        const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
        throw clientError('NETWORK_ERROR', `Cannot reach Cinder at ${baseUrl}: ${reason}`, 0, error);
      }
      if (response.ok) return { response, timer };
      try {
        body = await readAnswer(response, timer, call.signal);
      } finally {
        timer.stop();
      }
      const error = errorFromResponse(response, body.json);
      if (isRetryable(error) && call.retryable && attempt < retry.retries) {
        const delayMs = error.retryAfterMs ?? retry.baseDelayMs * 2 ** attempt;
        if (delayMs <= retry.maxDelayMs) {
          await retry.onRetry?.({ error, attempt: attempt + 1, retries: retry.retries, delayMs });
          try {
            await sleep(delayMs, call.signal ?? NEVER);
          } catch (abort) {
            throw clientError('ABORTED', 'The request was aborted (while waiting to retry)', 0, abort);
          }
          continue;
        }
      }
      throw error;
    }
  }

  /** A whole answer's body, within its attempt's time: ABORTED, TIMEOUT or NETWORK_ERROR when it cannot be read. */
  async function readAnswer(response: Response, timer: AttemptTimer, signal: AbortSignal | undefined): Promise<{ json: unknown; text: string }> {
    try {
      return await readBody(response);
    } catch (error) {
      if (signal?.aborted) throw clientError('ABORTED', 'The request was aborted', 0, error);
      if (timer.expired()) throw clientError('TIMEOUT', `No complete answer from ${baseUrl} within ${timeoutMs} ms`, 0, error);
      throw clientError('NETWORK_ERROR', 'The connection broke while reading the answer', response.status, error);
    }
  }

  /** One call answered with JSON, with the retry policy's waits. */
  async function request(call: Call): Promise<{ response: Response; json: unknown }> {
    const { response, timer } = await send(call);
    let body: { json: unknown; text: string };
    try {
      body = await readAnswer(response, timer, call.signal);
    } finally {
      timer.stop();
    }
    if (body.json === undefined) throw invalidResponse(`Expected a JSON answer from ${call.method} /${call.path.replace(/^\//, '')}`, response.status);
    return { response, json: body.json };
  }

  /** The query string of generate_wallets: n and the options given, as the route spells them. */
  function walletsQuery(n: number, parameters: Omit<GenerateWalletsOptions, 'signal'>): URLSearchParams {
    if (!Number.isSafeInteger(n) || n < 1) throw clientError('INVALID_ARGUMENT', `n must be a positive integer, got ${String(n)}`);
    const query = new URLSearchParams({ n: String(n) });
    for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, String(value));
    return query;
  }

  const post = (path: string, body: unknown, signal: AbortSignal | undefined) =>
    // Nothing that is sent twice can act twice here: a prepare signs nothing, and a relay's same
    // signed bytes have the same signature, which lands at most once (the server answers a repeat by signature).
    request({ method: 'POST', path, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, retryable: true, signal });

  return Object.freeze({
    baseUrl,

    async burnTokens(burn: BurnTokensRequest, burnOptions: BurnOptions = {}) {
      if (!isObject(burn)) throw clientError('INVALID_ARGUMENT', 'burnTokens needs { mint, priorityFee, userPrivateKey }');
      // Safe to resend only because the Idempotency-Key makes the server answer a repeat with the first result.
      const { json } = await request({ method: 'POST', path: 'api/burn_tokens', body: bodyWithKey(burn), ...idempotencyOf(burnOptions), signal: burnOptions.signal });
      return normaliseBurnResult(json);
    },

    async generateWallets(n: number, walletOptions: GenerateWalletsOptions = {}) {
      const { signal, ...parameters } = walletOptions;
      const query = walletsQuery(n, parameters);
      const { json } = await request({ method: 'GET', path: `api/generate_wallets?${query}`, retryable: true, signal });
      return normaliseWallets(json, n);
    },

    async *streamWallets(n: number, walletOptions: GenerateWalletsOptions = {}) {
      const { signal, ...parameters } = walletOptions;
      const query = walletsQuery(n, parameters);
      // Retried (429, 503) like any call, as long as nothing of the answer has arrived.
      const { response, timer } = await send({
        method: 'GET',
        path: `api/generate_wallets?${query}`,
        headers: { accept: 'application/x-ndjson, application/problem+json' },
        retryable: true,
        signal,
      });
      try {
        if (!/^application\/x-ndjson\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
          throw invalidResponse('Expected a streamed answer (application/x-ndjson) from GET /api/generate_wallets', response.status);
        }
        yield* readWalletLines(response.body, n, {
          restart: timer.restart,
          failure: (error, wallets) => {
            const progress = `after ${wallets} of ${n} wallets`;
            if (signal?.aborted) return clientError('ABORTED', `The stream was aborted ${progress}`, 0, error);
            if (timer.expired()) return clientError('TIMEOUT', `The stream sent nothing for ${timeoutMs} ms ${progress}`, 0, error);
            return clientError('NETWORK_ERROR', `The stream broke ${progress}: the connection to ${baseUrl} was cut`, 0, error);
          },
        });
      } finally {
        timer.stop();
      }
    },

    async getTransaction(signature: string, requestOptions: RequestOptions = {}) {
      if (!isNonEmptyString(signature)) throw clientError('INVALID_ARGUMENT', 'getTransaction needs a transaction signature');
      const { json } = await request({ method: 'GET', path: `api/transactions/${encodeURIComponent(signature)}`, retryable: true, signal: requestOptions.signal });
      return normaliseTransaction(json, signature);
    },

    async previewReclaim(preview: PreviewReclaimRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(preview) || !isNonEmptyString(preview.owner)) throw clientError('INVALID_ARGUMENT', 'previewReclaim needs { owner }, a wallet address');
      const query = new URLSearchParams({ owner: preview.owner });
      if (preview.burn !== undefined) query.set('burn', [...preview.burn].join(','));
      if (preview.priorityFee !== undefined) query.set('priorityFee', decimalString(preview.priorityFee));
      if (preview.withdrawExcess !== undefined) query.set('withdrawExcess', String(preview.withdrawExcess));
      if (preview.metadata !== undefined) query.set('metadata', String(preview.metadata));
      const { json } = await request({ method: 'GET', path: `api/reclaim_rent?${query}`, retryable: true, signal: requestOptions.signal });
      return normalisePreview(json);
    },

    async reclaimRent(reclaim: ReclaimRentRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(reclaim)) throw clientError('INVALID_ARGUMENT', 'reclaimRent needs { userPrivateKey, priorityFee }');
      // As burnTokens: one Idempotency-Key for every attempt, so that a retry can never reclaim twice.
      const { idempotencyKey, ...body } = reclaim;
      const { json } = await request({
        method: 'POST',
        path: 'api/reclaim_rent',
        body: bodyWithKey(body),
        ...idempotencyOf({ idempotencyKey }),
        signal: requestOptions.signal,
      });
      return normaliseOperation<ReclaimDetails>(json, 'reclaim');
    },

    async previewReclaimMany(preview: Api.ReclaimManyPreviewRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(preview) || !Array.isArray(preview.owners)) throw clientError('INVALID_ARGUMENT', 'previewReclaimMany needs { owners: [address, …] }');
      return normalisePreviewMany((await post('api/reclaim_rent/preview', preview, requestOptions.signal)).json);
    },

    async reclaimRentMany(reclaim: ReclaimRentManyRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(reclaim) || !Array.isArray(reclaim.userPrivateKeys)) {
        throw clientError('INVALID_ARGUMENT', 'reclaimRentMany needs { userPrivateKeys, feePayerPrivateKey, destination, priorityFee }');
      }
      // As reclaimRent: one Idempotency-Key for every attempt, so that a retry can never reclaim twice.
      const { idempotencyKey, userPrivateKeys, feePayerPrivateKey, ...rest } = reclaim;
      const { json } = await request({
        method: 'POST',
        path: 'api/reclaim_rent',
        body: JSON.stringify({ ...rest, userPrivateKeys: userPrivateKeys.map(wireKey), feePayerPrivateKey: wireKey(feePayerPrivateKey) }),
        ...idempotencyOf({ idempotencyKey }),
        signal: requestOptions.signal,
      });
      return normaliseOperation<ReclaimManyDetails>(json, 'reclaim');
    },

    async prepareReclaimMany(prepare: Api.PrepareReclaimManyRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare) || !Array.isArray(prepare.owners)) throw clientError('INVALID_ARGUMENT', 'prepareReclaimMany needs { owners, feePayer, destination }');
      return normalisePreparedMany((await post('api/reclaim_rent/prepare', prepare, requestOptions.signal)).json);
    },

    async prepareBurn(prepare: Api.PrepareBurnRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareBurn needs { owner, mint, priorityFee }');
      return normalisePrepared((await post('api/burn_tokens/prepare', prepare, requestOptions.signal)).json);
    },

    async prepareReclaim(prepare: Api.PrepareReclaimRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareReclaim needs { owner, priorityFee }');
      return normalisePrepared((await post('api/reclaim_rent/prepare', prepare, requestOptions.signal)).json);
    },

    async relay(relayRequest: Api.RelayRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(relayRequest) || !Array.isArray(relayRequest.transactions) || relayRequest.transactions.length === 0) {
        throw clientError('INVALID_ARGUMENT', 'relay needs { transactions: [base64 signed transaction, …] }');
      }
      return normaliseOperation<RelayDetails>((await post('api/transactions', relayRequest, requestOptions.signal)).json, 'relay');
    },
  } satisfies CinderClient);
}
