/**
 * The SDK's transport: one place that sends a request, bounds each attempt by `timeoutMs`, and
 * applies the client's one retry policy (RetryOptions) to the answers it waits out. Every method
 * of the client goes through it; the CLI too, through the client it builds.
 *
 * Never puts a private key in an error, a log or a URL: keys only ever travel in a request body.
 */
import { clientError, errorFromResponse, invalidResponse, isRetryable } from './errors.ts';
import { isObject } from './guards.ts';
import type { CinderClientOptions, IdempotencyOption } from './types.ts';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_RETRY = { retries: 3, maxDelayMs: 30_000, baseDelayMs: 1_000 };
/** A signal that never aborts. */
const NEVER = new AbortController().signal;

export interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** Whether sending it again is harmless (see RetryOptions). */
  retryable: boolean;
  signal?: AbortSignal | undefined;
}

/** An attempt's time limit, restartable: a stream's next part gets the whole limit again. */
export interface AttemptTimer {
  signal: AbortSignal;
  expired(): boolean;
  restart(): void;
  stop(): void;
}

/** What the methods of the client send their calls through. */
export interface Transport {
  /** The server's address, without a trailing slash. */
  readonly baseUrl: string;
  /** Each attempt's limit. */
  readonly timeoutMs: number;
  /**
   * One call, with the retry policy's waits: the first answer that is not an error, its body not
   * read yet, and the timer of its attempt (stopped by the caller once the body is read).
   */
  send(call: Call): Promise<{ response: Response; timer: AttemptTimer }>;
  /** One call answered with JSON, with the retry policy's waits. */
  request(call: Call): Promise<{ response: Response; json: unknown }>;
  /**
   * A JSON POST that is harmless to send twice, so retried: a prepare signs nothing, and a relay's
   * same signed bytes have the same signature, which lands at most once (the server answers a
   * repeat by signature).
   */
  post(path: string, body: unknown, signal: AbortSignal | undefined): Promise<{ response: Response; json: unknown }>;
}

/** The Idempotency-Key header of an operation that sends something (none for ''), and whether its retries are safe. */
export function idempotencyOf(option: IdempotencyOption): { headers: Record<string, string>; retryable: boolean } {
  const key = option.idempotencyKey ?? globalThis.crypto.randomUUID();
  return { headers: { 'content-type': 'application/json', ...(key !== '' ? { 'idempotency-key': key } : {}) }, retryable: key !== '' };
}

/** The transport of createCinderClient's options, each checked: a wrong one is INVALID_ARGUMENT at once, not at the first call. */
export function createTransport(options: CinderClientOptions): Transport {
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

  const post = (path: string, body: unknown, signal: AbortSignal | undefined) =>
    request({ method: 'POST', path, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, retryable: true, signal });

  return { baseUrl, timeoutMs, send, request, post };
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
