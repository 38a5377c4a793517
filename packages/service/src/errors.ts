/**
 * The one error type of Cinder. Every failure a client can see has a stable SCREAMING_SNAKE code;
 * the HTTP status and the problem+json title come from the single table below, so a code means
 * the same thing on every route. Messages (`detail`) are written for people and never contain
 * any part of a private key: callers pass only values that are safe to echo.
 */

const ERRORS = {
  // 400: the request itself is wrong
  INVALID_JSON: [400, 'Malformed JSON body'],
  VALIDATION_FAILED: [400, 'Invalid request'],
  MISSING_FIELD: [400, 'Missing required field'],
  UNKNOWN_FIELD: [400, 'Unknown field'],
  INVALID_MINT: [400, 'Invalid mint'],
  INVALID_PRIORITY_FEE: [400, 'Invalid priority fee'],
  INVALID_PRIVATE_KEY: [400, 'Invalid private key'],
  INVALID_N: [400, 'Invalid number of wallets'],
  INVALID_PARAMETER: [400, 'Invalid parameter'],
  INVALID_SIGNATURE: [400, 'Invalid transaction signature'],
  IDEMPOTENCY_KEY_REUSED: [400, 'Idempotency key reused with a different request'],
  INVALID_IDEMPOTENCY_KEY: [400, 'Invalid idempotency key'],
  // the HTTP edge (src/http/edge.ts): malformed requests refused before any route runs
  BAD_REQUEST: [400, 'Bad Request'],
  PRIVATE_KEY_IN_URL: [400, 'Private key in the URL'],
  // 400: the chain state does not allow the burn; nothing was sent
  MINT_NOT_FOUND: [400, 'Mint not found'],
  NO_TOKEN_ACCOUNT: [400, 'No token account'],
  ACCOUNT_FROZEN: [400, 'Token account is frozen'],
  CLOSE_AUTHORITY_NOT_OWNER: [400, 'Close authority is not the owner'],
  CONFIDENTIAL_BALANCE_NOT_EMPTY: [400, 'Confidential balance not empty'],
  INSUFFICIENT_SOL_FOR_FEE: [400, 'Insufficient SOL for fee'],
  TRANSACTION_REJECTED: [400, 'Transaction rejected by simulation'],
  // the money rules and the whole-wallet reclaim (src/plan, src/operations)
  INVALID_OWNER: [400, 'Invalid owner'],
  FEE_EXCEEDS_RECLAIM: [400, 'Fees exceed what is reclaimed'],
  MINT_PAUSED: [400, 'Mint is paused'],
  BURN_NOT_PERMITTED: [400, 'Burn not permitted'],
  NOTHING_TO_RECLAIM: [400, 'Nothing to reclaim'],
  // the relay of transactions signed elsewhere (src/operations/relay.ts); nothing was sent
  INVALID_TRANSACTION: [400, 'Invalid transaction'],
  TRANSACTION_NOT_SIGNED: [400, 'Transaction not fully signed'],
  PROGRAM_NOT_ALLOWED: [400, 'Program not allowed'],
  RELAY_TOKEN_INVALID: [400, 'Relay token invalid'],
  INSTRUCTION_NOT_ALLOWED: [400, 'Instruction not allowed'],
  TRANSACTIONS_CONFLICT: [400, 'Transactions conflict'],
  // the fee sponsor's policy (src/operations/sponsorPolicy.ts)
  SPONSOR_DECLINED: [403, 'Fee sponsor declines this wallet'],
  SPONSORED_OPERATION_IN_PROGRESS: [409, 'Sponsored operation in progress'],
  SPONSORED_OPERATION_TOO_LARGE: [400, 'Too large to sponsor'],
  // other client errors
  UNAUTHORIZED: [401, 'Unauthorized'],
  FORBIDDEN: [403, 'Forbidden'],
  NOT_FOUND: [404, 'Not Found'],
  METHOD_NOT_ALLOWED: [405, 'Method Not Allowed'],
  NOT_ACCEPTABLE: [406, 'Not Acceptable'],
  REQUEST_TIMEOUT: [408, 'Request Timeout'],
  TRANSACTION_NOT_FOUND: [404, 'Transaction not found'],
  REQUEST_IN_PROGRESS: [409, 'Request in progress'],
  BURN_IN_PROGRESS: [409, 'Burn in progress'],
  RECLAIM_IN_PROGRESS: [409, 'Reclaim in progress'],
  PAYLOAD_TOO_LARGE: [413, 'Payload Too Large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported Media Type'],
  URI_TOO_LONG: [414, 'URI Too Long'],
  RANGE_NOT_SATISFIABLE: [416, 'Range Not Satisfiable'],
  EXPECTATION_FAILED: [417, 'Expectation Failed'],
  HEADERS_TOO_LARGE: [431, 'Request Header Fields Too Large'],
  VANITY_TIMEOUT: [422, 'Vanity search timed out'],
  RATE_LIMITED: [429, 'Too Many Requests'],
  // server side
  INTERNAL_ERROR: [500, 'Internal Server Error'],
  RPC_UNAVAILABLE: [503, 'Solana RPC unavailable'],
  SERVICE_UNAVAILABLE: [503, 'Service unavailable'],
  SPONSOR_UNAVAILABLE: [503, 'Fee sponsor unavailable'],
} as const satisfies Record<string, readonly [number, string]>;

export type CinderErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as CinderErrorCode[];

export function statusOf(code: CinderErrorCode): number {
  return ERRORS[code][0];
}

export function titleOf(code: CinderErrorCode): string {
  return ERRORS[code][1];
}

export interface FieldProblem {
  field: string;
  message: string;
}

export interface CinderErrorOptions {
  errors?: FieldProblem[];
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  /** Extra members of the problem body (e.g. `keysTried` of VANITY_TIMEOUT). Must be safe to echo. */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

export class CinderError extends Error {
  readonly code: CinderErrorCode;
  readonly status: number;
  readonly errors: FieldProblem[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(code: CinderErrorCode, detail: string, options: CinderErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CinderError';
    this.code = code;
    this.status = statusOf(code);
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export function isCinderError(error: unknown, code?: CinderErrorCode): error is CinderError {
  return error instanceof CinderError && (code === undefined || error.code === code);
}

/** The RFC 9457 body of an error. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: CinderErrorCode;
  errors?: FieldProblem[];
  [extension: string]: unknown;
}

export function problemTypeOf(code: CinderErrorCode): string {
  return `urn:cinder:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}

export function toProblem(error: CinderError): ProblemDetails {
  return {
    ...error.extensions,
    type: problemTypeOf(error.code),
    title: titleOf(error.code),
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}
