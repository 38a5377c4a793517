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
  // 400: the chain state does not allow the burn; nothing was sent
  MINT_NOT_FOUND: [400, 'Mint not found'],
  NO_TOKEN_ACCOUNT: [400, 'No token account'],
  ACCOUNT_FROZEN: [400, 'Token account is frozen'],
  CLOSE_AUTHORITY_NOT_OWNER: [400, 'Close authority is not the owner'],
  CONFIDENTIAL_BALANCE_NOT_EMPTY: [400, 'Confidential balance not empty'],
  INSUFFICIENT_SOL_FOR_FEE: [400, 'Insufficient SOL for fee'],
  TRANSACTION_REJECTED: [400, 'Transaction rejected by simulation'],
  // other client errors
  UNAUTHORIZED: [401, 'Unauthorized'],
  FORBIDDEN: [403, 'Forbidden'],
  NOT_FOUND: [404, 'Not Found'],
  TRANSACTION_NOT_FOUND: [404, 'Transaction not found'],
  REQUEST_IN_PROGRESS: [409, 'Request in progress'],
  PAYLOAD_TOO_LARGE: [413, 'Payload Too Large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported Media Type'],
  VANITY_TIMEOUT: [422, 'Vanity search timed out'],
  RATE_LIMITED: [429, 'Too Many Requests'],
  // server side
  INTERNAL_ERROR: [500, 'Internal Server Error'],
  RPC_UNAVAILABLE: [503, 'Solana RPC unavailable'],
  SERVICE_UNAVAILABLE: [503, 'Service unavailable'],
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
