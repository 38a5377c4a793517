/**
 * The SDK's one error type, CinderApiError, and how an answer becomes one: a problem+json body is
 * read field by field; any other error body is never read (a proxy's error page may quote the
 * request, key included), only its status. No error the SDK makes holds any part of a key.
 */
import type * as Api from '@cinder/service';
import { isObject } from './guards.ts';

/** Codes the client itself uses when no problem+json body explains the failure. */
export type ClientErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE' | 'INVALID_ARGUMENT' | `HTTP_${number}`;

/** Every code a CinderApiError may have: the server's (its error catalogue) and the client's own. */
export type CinderApiErrorCode = Api.CinderErrorCode | ClientErrorCode;

/**
 * The members a code's problem body has beside the standard ones (type, title, status, detail,
 * code, errors), as the server's catalogue declares them: `keysTried` of VANITY_TIMEOUT,
 * `missingLamports` of INSUFFICIENT_SOL_FOR_FEE… None for the client's own codes.
 */
export type ProblemMembers<Code extends string> = Code extends Api.CinderErrorCode ? Api.CinderProblemMembersOf<Code> : Record<never, never>;

/** The problem body of an error of `Code`: its members typed once the code is known. */
export type ProblemOf<Code extends string> = string extends Code ? Api.Problem : Api.Problem & ProblemMembers<Code>;

/** The standard members of a problem body; the others are the code's own (`extensions`). */
const STANDARD_MEMBERS = new Set(['type', 'title', 'status', 'detail', 'code', 'errors']);

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
 *
 * @example
 * ```ts
 * try {
 *   await cinder.burnTokens({ mint, priorityFee: 0.000005, userPrivateKey });
 * } catch (error) {
 *   if (!(error instanceof CinderApiError)) throw error;
 *   console.error(error.code, error.detail, error.requestId); // e.g. NO_TOKEN_ACCOUNT (HTTP 400)
 *   for (const problem of error.errors) console.error(`${problem.field}: ${problem.message}`);
 * }
 * ```
 */
export class CinderApiError<Code extends string = string> extends Error {
  override readonly name = 'CinderApiError' as const;
  /** HTTP status; 0 when no answer was received (network error, timeout, abort, bad argument). */
  readonly status: number;
  /** The problem `code` (e.g. `INVALID_MINT`, `RATE_LIMITED`), or a ClientErrorCode. */
  readonly code: Code;
  /** The human explanation (the problem `detail`). */
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** Per-field problems of a validation failure. */
  readonly errors: Api.FieldProblem[];
  /** The whole problem body, when there was one. */
  readonly problem: ProblemOf<Code> | undefined;
  /**
   * The problem body's members beyond the standard ones, typed by code once `isCinderApiError`
   * has matched one (e.g. `keysTried` of VANITY_TIMEOUT); {} without a problem body.
   */
  readonly extensions: Readonly<Record<string, unknown>> & ProblemMembers<Code>;
  /** The server's Retry-After, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The server's X-Request-Id: quote it to find the request in the server log. */
  readonly requestId: string | undefined;

  constructor(init: CinderApiErrorInit) {
    super(`${init.code}${init.status ? ` (HTTP ${init.status})` : ''}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code as Code;
    this.detail = init.detail;
    this.title = init.title;
    this.type = init.type;
    this.errors = init.errors ?? [];
    this.problem = init.problem as ProblemOf<Code> | undefined;
    this.extensions = Object.fromEntries(Object.entries(init.problem ?? {}).filter(([name]) => !STANDARD_MEMBERS.has(name))) as CinderApiError<Code>['extensions'];
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }
}

/**
 * Whether `error` is a CinderApiError, and of `code` when one is given; a match narrows `error.code`
 * to that code, and `error.extensions` and `error.problem` to the members the server's error
 * catalogue declares for it (a code that is neither the server's nor the client's does not compile).
 *
 * @example
 * ```ts
 * try {
 *   await cinder.reclaimRent({ userPrivateKey, priorityFee: 0 });
 * } catch (error) {
 *   if (isCinderApiError(error, 'NOTHING_TO_RECLAIM')) console.log('nothing to do', error.extensions.skippedAccounts);
 *   else throw error;
 * }
 * ```
 */
export function isCinderApiError<Code extends CinderApiErrorCode = CinderApiErrorCode>(error: unknown, code?: Code): error is CinderApiError<Code> {
  return error instanceof CinderApiError && (code === undefined || error.code === code);
}

/**
 * The answers the retry policy waits out: rate limited, busy, or the same Idempotency-Key still running.
 *
 * @example
 * ```ts
 * const answer = await cinder.getTransaction(signature).catch((error: unknown) => {
 *   if (error instanceof CinderApiError && isRetryable(error)) return null; // ask again later
 *   throw error;
 * });
 * ```
 */
export function isRetryable(error: CinderApiError): boolean {
  return error.status === 429 || error.status === 503 || (error.status === 409 && error.code === 'REQUEST_IN_PROGRESS');
}

/**
 * Parses a Retry-After header (seconds or HTTP date) into milliseconds; undefined when absent or invalid.
 *
 * @example
 * ```ts
 * parseRetryAfter('3'); // 3000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:58 GMT')); // 2000
 * parseRetryAfter('soon'); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export function clientError(code: ClientErrorCode, detail: string, status = 0, cause: unknown = undefined): CinderApiError {
  return new CinderApiError({ status, code, detail, cause });
}

export function invalidResponse(detail: string, status = 200): CinderApiError {
  return clientError('INVALID_RESPONSE', detail, status);
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
export function problemError(
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

export function errorFromResponse(response: Response, json: unknown): CinderApiError {
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
