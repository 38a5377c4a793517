/**
 * The budgeted transport under every JSON-RPC call: kit's HTTP transport (compressed answers) with
 * a faster reader of its answers (parseRpcJson below), behind a pacer that
 * - lets at most `maxRequestsPerSecond` requests reach the provider in any one second, whatever
 *   the network does to them on the way (requests beyond it wait here, in order, instead of being
 *   refused by the provider);
 * - on a provider's 429, pauses every request for its `Retry-After` (or a growing backoff without
 *   one), widens the spacing between requests, and sends the refused request again (a 429 means the
 *   provider did not process it, so sending it again is safe for every method, sendTransaction too);
 * - times each request out `callTimeoutMs` after it actually leaves, so waiting in the queue never
 *   counts against a call's own timeout, only against the caller's deadline (its AbortSignal);
 * - lets the work of transactions already signed (sends, status and block-height checks) go before
 *   the reads of new requests: finishing what is in flight keeps its blockhash from ageing in a
 *   queue, and a request that is still reading has sent nothing yet.
 *
 * Written here rather than taken from a queue library (p-queue, bottleneck) because the spacing
 * must adapt to the provider's answers at run time, which their fixed intervals do not do.
 */
import { isJsonRpcPayload, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, type RpcTransport } from '@solana/kit';
import { stringifyJsonWithBigInts } from '@solana/rpc-spec-types';
import { createHttpTransport } from '@solana/rpc-transport-http';

/** A request that never left this process (its caller's deadline passed while it waited its turn). */
export class RpcNotSentError extends Error {
  override name = 'RpcNotSentError';
}

export type RpcRequestOutcome = 'ok' | 'refused' | 'error';

export interface BudgetedTransportOptions {
  url: string;
  /** Requests started per second at most; undefined: no cap of our own (429s still slow us down). */
  maxRequestsPerSecond?: number | undefined;
  /** Per request, from the moment it is sent. */
  callTimeoutMs: number;
  /** Called once per HTTP request that left, with its JSON-RPC method and how it ended. */
  onRequest?: (method: string, outcome: RpcRequestOutcome) => void;
}

/** Without a Retry-After, the first pause after a 429; doubled for each 429 in a row, up to the max. */
const BACKOFF_START_MS = 250;
const BACKOFF_MAX_MS = 8000;
/** The spacing added by 429s shrinks by this factor for every request the provider accepts. */
const PENALTY_DECAY = 0.97;
const PENALTY_MAX_MS = 2000;
/** The landing of transactions already signed. */
const PRIORITY_METHODS = new Set(['sendTransaction', 'getSignatureStatuses', 'getBlockHeight']);

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

function retryAfterMsOf(error: unknown): number | null {
  if (!isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) return null;
  const header = error.context.headers?.get?.('retry-after');
  if (header === null || header === undefined) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header); // Retry-After may also be an HTTP date
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : null;
}

const isRefusal = (error: unknown) =>
  isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && error.context.statusCode === 429;

/**
 * A JSON string literal (its usual run of plain characters matched in one step), or a JSON number:
 * outside strings only numbers hold digits.
 */
const JSON_TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
/** Numbers JSON.parse reads exactly as they are written, and that kit reads as integers: up to 15 digits, no fraction, no exponent. */
const PLAIN_INTEGER = /^-?\d{1,15}$/;
const INTEGER_LITERAL = /^(-?)(\d+)(?:[eE]\+?(\d+))?$/;
const MAX_INTEGER_DIGITS = 1000;

/** A marked literal: what kit reads it as (a float with a fraction or a negative exponent, else a bigint). */
function literalValue(literal: string): number | bigint {
  if (/\.|[eE]-/.test(literal)) return Number(literal); // rounded as JSON.parse rounds it
  const match = INTEGER_LITERAL.exec(literal);
  if (!match || match[2]!.length + Number(match[3] ?? 0) > MAX_INTEGER_DIGITS) throw new SyntaxError(`Malformed integer in an RPC answer: ${literal.slice(0, 40)}`);
  return match[3] ? BigInt(`${match[1]}${match[2]}`) * 10n ** BigInt(match[3]) : BigInt(literal);
}

const isMarker = (value: object): value is { $n: string } => typeof (value as { $n?: unknown }).$n === 'string' && Object.keys(value).length === 1;

/** Turns, in place, every number into a bigint and every marker into its value; returns what replaces `value`. */
function settle(value: unknown): unknown {
  if (typeof value === 'number') return BigInt(value); // a plain integer: exact
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'number' || (typeof item === 'object' && item !== null)) value[i] = settle(item);
    }
    return value;
  }
  if (isMarker(value)) return literalValue(value.$n);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (typeof item !== 'number' && (typeof item !== 'object' || item === null)) continue;
    const settled = settle(item);
    // An own "__proto__" key (JSON.parse makes one) must stay a property, not become the prototype.
    if (key === '__proto__') Object.defineProperty(record, key, { value: settled, writable: true, enumerable: true, configurable: true });
    else record[key] = settled;
  }
  return record;
}

/**
 * A JSON-RPC answer with every integer as a bigint and every other number as a number: exactly
 * what kit's parseJsonWithBigInts returns (the types of @solana/kit's RPC API depend on it), but
 * about forty times faster. Kit's reader walks the text one character at a time in JavaScript and
 * slices the rest of the text at every digit: 140–330 ms of event loop for the 670 KB answer of a
 * 3,000-account getTokenAccountsByOwner, during which the service answers nothing, /health
 * included. Here one native regular-expression scan marks only the numbers JSON.parse would not
 * read exactly as kit does ({"$n": "…"}, kit's own marker: floats, exponents, integers of 16
 * digits or more, such as every account's rentEpoch), JSON.parse reads the text natively, and one
 * walk turns the numbers into bigints and the markers into their values (a reviver, called for
 * every value, costs several times that walk). JSON.parse's access to a number's source text
 * would make the marking unnecessary, but Node 20 does not have it.
 */
export function parseRpcJson(json: string): unknown {
  // An exec loop, not String.replace with a callback: the callback of every string token costs
  // twenty times the matching itself.
  let marked = '';
  let copied = 0;
  JSON_TOKEN.lastIndex = 0;
  for (let match = JSON_TOKEN.exec(json); match !== null; match = JSON_TOKEN.exec(json)) {
    const token = match[0];
    if (token.charCodeAt(0) === 34 || PLAIN_INTEGER.test(token)) continue;
    marked += `${json.slice(copied, match.index)}{"$n":"${token}"}`;
    copied = match.index + token.length;
  }
  return settle(JSON.parse(copied === 0 ? json : marked + json.slice(copied)));
}

export function createBudgetedTransport(options: BudgetedTransportOptions): RpcTransport {
  // kit's createDefaultRpcTransport, less its reader (parseRpcJson instead) and its coalescing of
  // identical concurrent calls, which the adapter does itself where it matters (one blockhash
  // fetch, merged account reads, one status call for every signature in flight).
  const inner = createHttpTransport({
    url: options.url,
    headers: { 'accept-encoding': 'br,gzip,deflate' },
    fromJson: (text) => parseRpcJson(text),
    toJson: (payload) => stringifyJsonWithBigInts(payload),
  });
  const maxPerSecond = options.maxRequestsPerSecond;
  // Spread evenly rather than in bursts at the start of each second.
  const baseSpacingMs = maxPerSecond ? 1000 / maxPerSecond : 0;
  /**
   * The window: a request reaches the provider somewhere between the moment it leaves and the
   * moment its answer is back. So a new request may leave only while fewer than the cap are in
   * flight or were answered less than a second ago: then no second at the provider can hold more
   * than the cap, however the network delays or bunches them.
   */
  let inFlight = 0;
  const answeredAt: number[] = [];
  let penaltyMs = 0;
  let nextStartAt = 0;
  let pausedUntil = 0;
  let refusalsInARow = 0;
  /** Landing work first (PRIORITY_METHODS), then everything else; each in arrival order. */
  const queues: [Waiter[], Waiter[]] = [[], []];
  const queuedCount = () => queues[0].length + queues[1].length;
  let timer: NodeJS.Timeout | undefined;

  function pump(): void {
    timer = undefined;
    while (queuedCount() > 0) {
      const now = Date.now();
      let startAt = Math.max(nextStartAt, pausedUntil);
      if (maxPerSecond) {
        while (answeredAt.length > 0 && answeredAt[0]! <= now - 1000) answeredAt.shift();
        if (inFlight + answeredAt.length >= maxPerSecond) {
          // Full: the oldest answer leaves the window then, or an answer arrives first (release pumps).
          if (answeredAt.length === 0) return;
          startAt = Math.max(startAt, answeredAt[0]! + 1000 + 1);
        }
      }
      if (startAt > now) {
        timer = setTimeout(pump, startAt - now);
        return;
      }
      const waiter = (queues[0].length > 0 ? queues[0] : queues[1]).shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      nextStartAt = now + Math.max(baseSpacingMs, penaltyMs);
      inFlight++;
      waiter.resolve();
    }
  }

  /** A request that left is answered (or failed): it stays in the window for one more second. */
  function release(): void {
    inFlight--;
    if (maxPerSecond) answeredAt.push(Date.now());
    if (timer) clearTimeout(timer);
    pump();
  }

  /** Resolves when this request may leave; rejects with RpcNotSentError when the caller gave up first. */
  function turn(signal: AbortSignal | undefined, first: boolean, queue: Waiter[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new RpcNotSentError('The RPC request was not sent before its deadline.', { cause: signal.reason }));
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          reject(new RpcNotSentError('The RPC request was not sent before its deadline.', { cause: signal?.reason }));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      // A request refused with 429 goes back to the front: it has waited longest.
      if (first) queue.push(waiter);
      else queue.unshift(waiter);
      if (!timer) pump();
    });
  }

  const transport = async <TResponse>(config: Parameters<RpcTransport>[0]) => {
    const method = isJsonRpcPayload(config.payload) ? config.payload.method : 'batch';
    for (let attempt = 0; ; attempt++) {
      await turn(config.signal, attempt === 0, queues[PRIORITY_METHODS.has(method) ? 0 : 1]);
      const timeout = AbortSignal.timeout(options.callTimeoutMs);
      const signal = config.signal ? AbortSignal.any([config.signal, timeout]) : timeout;
      try {
        const response = await inner<TResponse>({ payload: config.payload, signal });
        refusalsInARow = 0;
        penaltyMs = penaltyMs * PENALTY_DECAY < 1 ? 0 : penaltyMs * PENALTY_DECAY;
        options.onRequest?.(method, 'ok');
        return response;
      } catch (error) {
        if (!isRefusal(error)) {
          options.onRequest?.(method, 'error');
          throw error;
        }
        options.onRequest?.(method, 'refused');
        refusalsInARow++;
        const pauseMs = retryAfterMsOf(error) ?? Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (refusalsInARow - 1));
        // Requests refused together are one signal, not many: widen the spacing once per pause.
        const firstOfBurst = Date.now() >= pausedUntil;
        pausedUntil = Math.max(pausedUntil, Date.now() + pauseMs);
        if (firstOfBurst) penaltyMs = Math.min(PENALTY_MAX_MS, Math.max(penaltyMs * 2, baseSpacingMs * 0.5, 20));
        // Without a deadline of its own a request would wait forever on a provider that refuses
        // everything: give up after a few refusals then, as any other failed call.
        if (!config.signal && attempt >= 4) throw error;
      } finally {
        release();
      }
    }
  };
  return transport;
}
