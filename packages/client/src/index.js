// @ts-check
/* global setTimeout, clearTimeout, URL, URLSearchParams, AbortSignal, AbortController */
/**
 * cinder/client: the Cinder SDK. Plain JavaScript (ESM) so that any Node >= 20 program can import
 * it without a build step; its types are ./index.d.ts, against which `// @ts-check` checks this
 * file (test/client/types.test.ts runs that check).
 *
 * Never puts a private key in an error, a log or a URL: keys only ever travel in a burn's body.
 */
/** @import * as T from './index.js' */

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_RETRY = { retries: 3, maxDelayMs: 30_000, baseDelayMs: 1_000 };
const STATUSES = ['success', 'failed', 'pending'];
/** A signal that never aborts. */
const NEVER = new AbortController().signal;

export class CinderApiError extends Error {
  /** @override @type {'CinderApiError'} */
  name = 'CinderApiError';

  /**
   * @param {{ status: number, code: string, detail: string, title?: string | undefined, type?: string | undefined,
   *   errors?: T.FieldProblem[] | undefined, problem?: T.ProblemDetails | undefined, retryAfterMs?: number | undefined,
   *   requestId?: string | undefined, cause?: unknown }} init
   */
  constructor(init) {
    super(`${init.code}${init.status ? ` (HTTP ${init.status})` : ''}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.title = init.title;
    this.type = init.type;
    /** @type {T.FieldProblem[]} */
    this.errors = init.errors ?? [];
    this.problem = init.problem;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }
}

/** @type {typeof T.CinderApiError} */
const _declaredErrorClass = CinderApiError;
void _declaredErrorClass;

/**
 * @param {string} code
 * @param {string} detail
 * @param {number} [status]
 * @param {unknown} [cause]
 */
function clientError(code, detail, status = 0, cause = undefined) {
  return new CinderApiError({ status, code, detail, cause });
}

/** @type {typeof T.parseRetryAfter} */
export function parseRetryAfter(value, now = Date.now()) {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * @param {unknown} value
 * @returns {value is string}
 */
function isNonEmptyString(value) {
  return typeof value === 'string' && value.length > 0;
}

/**
 * @param {unknown} value
 * @returns {T.TransactionStatus | 'unknown'}
 */
function statusOf(value) {
  return typeof value === 'string' && STATUSES.includes(value) ? /** @type {T.TransactionStatus} */ (value) : 'unknown';
}

/** @param {string} detail */
function invalidResponse(detail, status = 200) {
  return clientError('INVALID_RESPONSE', detail, status);
}

/** @type {typeof T.normaliseBurnResult} */
export function normaliseBurnResult(body) {
  if (!isObject(body)) throw invalidResponse('The burn answer is not a JSON object');
  const { transactionId, tx_hash: txHash } = body;
  const hasA = transactionId !== undefined;
  const hasB = txHash !== undefined;
  if (hasA && !isNonEmptyString(transactionId)) throw invalidResponse('The burn answer has a transactionId that is not a string');
  if (hasB && !isNonEmptyString(txHash)) throw invalidResponse('The burn answer has a tx_hash that is not a string');
  if (!hasA && !hasB) throw invalidResponse('The burn answer has neither transactionId (Form A) nor tx_hash (Form B)');
  if (hasA && hasB && transactionId !== txHash) throw invalidResponse('The burn answer has a transactionId and a tx_hash that differ');
  const id = /** @type {string} */ (hasA ? transactionId : txHash);
  const details = isObject(body.details) ? /** @type {T.BurnDetails} */ (/** @type {unknown} */ (body.details)) : null;
  const signatures =
    details && Array.isArray(details.signatures) && details.signatures.length > 0 && details.signatures.every(isNonEmptyString)
      ? [...details.signatures]
      : [id];
  return {
    transactionId: id,
    status: hasA ? statusOf(body.status) : 'unknown',
    message: typeof body.message === 'string' ? body.message : null,
    signatures,
    details,
    form: hasA && hasB ? 'A+B' : hasA ? 'A' : 'B',
  };
}

/**
 * @param {unknown} body
 * @param {number} n
 * @returns {T.GeneratedWallets}
 */
function normaliseWallets(body, n) {
  if (!isObject(body) || !Array.isArray(body.wallets) || !body.wallets.every(isNonEmptyString)) {
    throw invalidResponse('The wallet answer has no list of addresses (wallets)');
  }
  if (body.wallets.length !== n) throw invalidResponse(`Asked for ${n} wallets, received ${body.wallets.length}`);
  const wallets = /** @type {string[]} */ (body.wallets);
  /** @type {T.Keypair[]} */
  let keypairs = [];
  if (body.keypairs !== undefined) {
    const given = body.keypairs;
    if (
      !Array.isArray(given) ||
      given.length !== n ||
      !given.every((k, i) => isObject(k) && k.address === wallets[i] && isNonEmptyString(k.privateKey))
    ) {
      throw invalidResponse('The wallet answer has keypairs that do not match its wallets');
    }
    keypairs = /** @type {T.Keypair[]} */ (given);
  }
  return { wallets, keypairs };
}

/**
 * @param {unknown} body
 * @param {string} signature
 * @returns {T.TransactionStatusResult}
 */
function normaliseTransaction(body, signature) {
  if (!isObject(body)) throw invalidResponse('The transaction answer is not a JSON object');
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : signature;
  return {
    transactionId: id,
    status: statusOf(body.status),
    message: typeof body.message === 'string' ? body.message : null,
    slot: typeof body.slot === 'number' ? body.slot : null,
  };
}

/**
 * A reclaim's or relay's answer (Cinder's combined form: transactionId, status, message, tx_hash,
 * details) in the one shape the SDK returns.
 * @param {unknown} body
 * @param {string} what
 * @returns {{ transactionId: string, status: T.TransactionStatus | 'unknown', message: string | null, signatures: string[], details: any }}
 */
function normaliseOperation(body, what) {
  if (!isObject(body)) throw invalidResponse(`The ${what} answer is not a JSON object`);
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : undefined;
  if (id === undefined) throw invalidResponse(`The ${what} answer has no transactionId`);
  const details = isObject(body.details) ? body.details : null;
  const signatures =
    details && Array.isArray(details.signatures) && details.signatures.length > 0 && details.signatures.every(isNonEmptyString)
      ? [...details.signatures]
      : [id];
  return { transactionId: id, status: statusOf(body.status), message: typeof body.message === 'string' ? body.message : null, signatures, details };
}

/**
 * @param {unknown} body
 * @returns {T.ReclaimPreview}
 */
function normalisePreview(body) {
  if (!isObject(body) || !isNonEmptyString(body.owner) || !Array.isArray(body.accounts) || !isObject(body.summary)) {
    throw invalidResponse('The preview answer has no owner, accounts and summary');
  }
  return /** @type {T.ReclaimPreview} */ (/** @type {unknown} */ (body));
}

/**
 * @param {unknown} body
 * @returns {T.PreparedTransactions}
 */
function normalisePrepared(body) {
  if (!isObject(body) || !Array.isArray(body.transactions) || body.transactions.length === 0 || !body.transactions.every(isNonEmptyString)) {
    throw invalidResponse('The prepare answer has no transactions');
  }
  return /** @type {T.PreparedTransactions} */ (/** @type {unknown} */ (body));
}

/**
 * A priority fee in SOL as a plain decimal for a query string: String(1e-7) is "1e-7", which is
 * not an amount of SOL a server should have to parse.
 * @param {number} value
 */
function decimalString(value) {
  const text = String(value);
  const exponent = /^(\d)(?:\.(\d+))?e-(\d+)$/.exec(text);
  if (!exponent) return text;
  const digits = `${exponent[1]}${exponent[2] ?? ''}`;
  return `0.${'0'.repeat(Number(exponent[3]) - 1)}${digits}`;
}

/**
 * The reclaim options as the server's body fields (only those given).
 * @param {T.ReclaimOptions} options
 */
function reclaimFields(options) {
  /** @type {{ burn?: string[], withdrawExcess?: boolean }} */
  const fields = {};
  if (options.burn !== undefined) fields.burn = [...options.burn];
  if (options.withdrawExcess !== undefined) fields.withdrawExcess = options.withdrawExcess;
  return fields;
}

/**
 * @param {number} ms
 * @param {AbortSignal} signal
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(undefined);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * @param {Response} response
 * @returns {Promise<{ json: unknown, text: string }>}
 */
async function readBody(response) {
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
 * @type {Record<number, string>}
 */
const STATUS_TEXT = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 413: 'Payload Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type',
  429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/**
 * @param {Response} response
 * @param {unknown} json
 */
function errorFromResponse(response, json) {
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const requestId = response.headers.get('x-request-id') ?? undefined;
  // Only a problem+json body is read: any other body may be an echo of the request (a proxy's
  // error page quoting it, key included), so no part of it goes into the error.
  const isProblem = /^application\/problem\+json\b/i.test(response.headers.get('content-type') ?? '');
  if (isProblem && isObject(json) && typeof json.code === 'string') {
    const problem = /** @type {T.ProblemDetails} */ (json);
    return new CinderApiError({
      status: response.status,
      code: json.code,
      detail: typeof json.detail === 'string' ? json.detail : (typeof json.title === 'string' ? json.title : response.statusText),
      title: typeof json.title === 'string' ? json.title : undefined,
      type: typeof json.type === 'string' ? json.type : undefined,
      errors: Array.isArray(json.errors) ? /** @type {T.FieldProblem[]} */ (json.errors) : undefined,
      problem,
      retryAfterMs,
      requestId,
    });
  }
  // Not a problem+json body (a proxy's error page, another server): its status only, never its text.
  return new CinderApiError({
    status: response.status,
    code: `HTTP_${response.status}`,
    detail: `HTTP ${response.status}${STATUS_TEXT[response.status] ? ` ${STATUS_TEXT[response.status]}` : ''} (the answer is not problem+json; its body is not shown)`,
    retryAfterMs,
    requestId,
  });
}

/** @type {typeof T.createCinderClient} */
export function createCinderClient(options) {
  if (!isObject(options) || (typeof options.baseUrl !== 'string' && !(options.baseUrl instanceof URL))) {
    throw clientError('INVALID_ARGUMENT', 'createCinderClient needs { baseUrl }, e.g. "http://127.0.0.1:8080"');
  }
  /** @type {URL} */
  let base;
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
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  /** @type {Record<string, string>} */
  const baseHeaders = { accept: 'application/json, application/problem+json', ...options.headers };
  if (options.apiKey) baseHeaders.authorization = `Bearer ${options.apiKey}`;

  /**
   * One call, with its retries of 429 and 503 (nothing else is retried: a network error may have
   * happened after the server acted).
   * @param {{ method: string, path: string, body?: string, headers?: Record<string, string>,
   *   retryable: boolean, signal?: AbortSignal | undefined }} call
   * @returns {Promise<{ response: Response, json: unknown }>}
   */
  async function request(call) {
    const url = `${baseUrl}/${call.path.replace(/^\//, '')}`;
    const headers = { ...baseHeaders, ...call.headers };
    for (let attempt = 0; ; attempt++) {
      // timeoutMs bounds each attempt; the waits between attempts are bounded by the retry options.
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      /** @type {Response} */
      let response;
      /** @type {{ json: unknown, text: string }} */
      let body;
      try {
        response = await fetchImpl(url, { method: call.method, headers, body: call.body, signal, redirect: 'error' });
      } catch (error) {
        if (call.signal?.aborted) throw clientError('ABORTED', 'The request was aborted', 0, error);
        if (timeout.aborted) throw clientError('TIMEOUT', `No answer from ${baseUrl} within ${timeoutMs} ms`, 0, error);
        const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
        throw clientError('NETWORK_ERROR', `Cannot reach Cinder at ${baseUrl}: ${reason}`, 0, error);
      }
      try {
        body = await readBody(response);
      } catch (error) {
        if (call.signal?.aborted) throw clientError('ABORTED', 'The request was aborted', 0, error);
        if (timeout.aborted) throw clientError('TIMEOUT', `No complete answer from ${baseUrl} within ${timeoutMs} ms`, 0, error);
        throw clientError('NETWORK_ERROR', 'The connection broke while reading the answer', response.status, error);
      }
      if (response.ok) {
        if (body.json === undefined) throw invalidResponse(`Expected a JSON answer from ${call.method} /${call.path.replace(/^\//, '')}`, response.status);
        return { response, json: body.json };
      }
      const error = errorFromResponse(response, body.json);
      // 409 REQUEST_IN_PROGRESS: an earlier attempt with the same Idempotency-Key still runs; its answer comes next.
      const retryableStatus = response.status === 429 || response.status === 503 || (response.status === 409 && error.code === 'REQUEST_IN_PROGRESS');
      if (retryableStatus && call.retryable && attempt < retry.retries) {
        const delay = error.retryAfterMs ?? retry.baseDelayMs * 2 ** attempt;
        if (delay <= retry.maxDelayMs) {
          try {
            await sleep(delay, call.signal ?? NEVER);
          } catch (abort) {
            throw clientError('ABORTED', 'The request was aborted (while waiting to retry)', 0, abort);
          }
          continue;
        }
      }
      throw error;
    }
  }

  /** @type {T.CinderClient['burnTokens']} */
  async function burnTokens(burn, burnOptions = {}) {
    if (!isObject(burn)) throw clientError('INVALID_ARGUMENT', 'burnTokens needs { mint, priorityFee, userPrivateKey }');
    const { mint, priorityFee, userPrivateKey } = burn;
    const key = userPrivateKey instanceof Uint8Array ? Array.from(userPrivateKey) : userPrivateKey;
    // An empty idempotencyKey sends none, and then the burn is never retried.
    const idempotencyKey = burnOptions.idempotencyKey ?? globalThis.crypto.randomUUID();
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json' };
    if (idempotencyKey !== '') headers['idempotency-key'] = idempotencyKey;
    const { json } = await request({
      method: 'POST',
      path: 'api/burn_tokens',
      body: JSON.stringify({ mint, priorityFee, userPrivateKey: key }),
      headers,
      // Safe to resend only because the Idempotency-Key makes the server answer a repeat with the first result.
      retryable: idempotencyKey !== '',
      signal: burnOptions.signal,
    });
    return normaliseBurnResult(json);
  }

  /** @type {T.CinderClient['generateWallets']} */
  async function generateWallets(n, walletOptions = {}) {
    if (!Number.isSafeInteger(n) || n < 1) throw clientError('INVALID_ARGUMENT', `n must be a positive integer, got ${String(n)}`);
    const query = new URLSearchParams({ n: String(n) });
    if (walletOptions.mnemonic !== undefined) query.set('mnemonic', String(walletOptions.mnemonic));
    if (walletOptions.prefix !== undefined) query.set('prefix', walletOptions.prefix);
    if (walletOptions.suffix !== undefined) query.set('suffix', walletOptions.suffix);
    if (walletOptions.ignoreCase !== undefined) query.set('ignoreCase', String(walletOptions.ignoreCase));
    if (walletOptions.format !== undefined) query.set('format', walletOptions.format);
    const { json } = await request({
      method: 'GET',
      path: `api/generate_wallets?${query}`,
      retryable: true,
      signal: walletOptions.signal,
    });
    return normaliseWallets(json, n);
  }

  /** @type {T.CinderClient['getTransaction']} */
  async function getTransaction(signature, requestOptions = {}) {
    if (!isNonEmptyString(signature)) throw clientError('INVALID_ARGUMENT', 'getTransaction needs a transaction signature');
    const { json } = await request({
      method: 'GET',
      path: `api/transactions/${encodeURIComponent(signature)}`,
      retryable: true,
      signal: requestOptions.signal,
    });
    return normaliseTransaction(json, signature);
  }

  /** @type {T.CinderClient['previewReclaim']} */
  async function previewReclaim(preview, requestOptions = {}) {
    if (!isObject(preview) || !isNonEmptyString(preview.owner)) throw clientError('INVALID_ARGUMENT', 'previewReclaim needs { owner }, a wallet address');
    const query = new URLSearchParams({ owner: preview.owner });
    if (preview.burn !== undefined) query.set('burn', [...preview.burn].join(','));
    if (preview.priorityFee !== undefined) query.set('priorityFee', decimalString(preview.priorityFee));
    if (preview.withdrawExcess !== undefined) query.set('withdrawExcess', String(preview.withdrawExcess));
    const { json } = await request({ method: 'GET', path: `api/reclaim_rent?${query}`, retryable: true, signal: requestOptions.signal });
    return normalisePreview(json);
  }

  /** @type {T.CinderClient['reclaimRent']} */
  async function reclaimRent(reclaim, requestOptions = {}) {
    if (!isObject(reclaim)) throw clientError('INVALID_ARGUMENT', 'reclaimRent needs { userPrivateKey, priorityFee }');
    const { userPrivateKey, priorityFee, allowNetLoss } = reclaim;
    const key = userPrivateKey instanceof Uint8Array ? Array.from(userPrivateKey) : userPrivateKey;
    // As burnTokens: one Idempotency-Key for every attempt, so that a retry can never reclaim twice.
    const idempotencyKey = reclaim.idempotencyKey ?? globalThis.crypto.randomUUID();
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json' };
    if (idempotencyKey !== '') headers['idempotency-key'] = idempotencyKey;
    const body = { userPrivateKey: key, priorityFee, ...reclaimFields(reclaim), ...(allowNetLoss !== undefined ? { allowNetLoss } : {}) };
    const { json } = await request({
      method: 'POST',
      path: 'api/reclaim_rent',
      body: JSON.stringify(body),
      headers,
      retryable: idempotencyKey !== '',
      signal: requestOptions.signal,
    });
    return normaliseOperation(json, 'reclaim');
  }

  /** @type {T.CinderClient['prepareBurn']} */
  async function prepareBurn(prepare, requestOptions = {}) {
    if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareBurn needs { owner, mint, priorityFee }');
    const { owner, mint, priorityFee, feePayer, allowNetLoss } = prepare;
    const { json } = await request({
      method: 'POST',
      path: 'api/burn_tokens/prepare',
      body: JSON.stringify({ owner, mint, priorityFee, ...(feePayer !== undefined ? { feePayer } : {}), ...(allowNetLoss !== undefined ? { allowNetLoss } : {}) }),
      headers: { 'content-type': 'application/json' },
      // Nothing is signed or sent: asking again is harmless.
      retryable: true,
      signal: requestOptions.signal,
    });
    return normalisePrepared(json);
  }

  /** @type {T.CinderClient['prepareReclaim']} */
  async function prepareReclaim(prepare, requestOptions = {}) {
    if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareReclaim needs { owner, priorityFee }');
    const { owner, priorityFee, feePayer, allowNetLoss } = prepare;
    const { json } = await request({
      method: 'POST',
      path: 'api/reclaim_rent/prepare',
      body: JSON.stringify({
        owner,
        priorityFee,
        ...reclaimFields(prepare),
        ...(feePayer !== undefined ? { feePayer } : {}),
        ...(allowNetLoss !== undefined ? { allowNetLoss } : {}),
      }),
      headers: { 'content-type': 'application/json' },
      retryable: true,
      signal: requestOptions.signal,
    });
    return normalisePrepared(json);
  }

  /** @type {T.CinderClient['relay']} */
  async function relay(relayRequest, requestOptions = {}) {
    if (!isObject(relayRequest) || !Array.isArray(relayRequest.transactions) || relayRequest.transactions.length === 0) {
      throw clientError('INVALID_ARGUMENT', 'relay needs { transactions: [base64 signed transaction, …] }');
    }
    const { transactions, relayToken } = relayRequest;
    const { json } = await request({
      method: 'POST',
      path: 'api/transactions',
      body: JSON.stringify({ transactions: [...transactions], ...(relayToken !== undefined ? { relayToken } : {}) }),
      headers: { 'content-type': 'application/json' },
      // Safe to resend: the same signed bytes have the same signature, which lands at most once,
      // and the server answers a repeat by signature.
      retryable: true,
      signal: requestOptions.signal,
    });
    return normaliseOperation(json, 'relay');
  }

  return Object.freeze({ baseUrl, burnTokens, generateWallets, getTransaction, previewReclaim, reclaimRent, prepareBurn, prepareReclaim, relay });
}
