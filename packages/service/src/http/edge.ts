/**
 * The HTTP edge (docs/security.md, "Hardened edge"): what happens to a request before, around and instead
 * of a route. Everything a client can send reaches one of these, so each is written to never
 * answer 5xx, never answer anything but problem+json on error, and never copy request bytes into a
 * log line or an answer.
 *
 * - One normalised path (`normaliseRequestTarget`, Fastify's `rewriteUrl`): absolute-form request
 *   lines lose their scheme and authority, percent-encoded unreserved characters are decoded,
 *   doubled slashes collapse and dot segments are resolved, all before routing; so routing, API
 *   keys and rate limits see the same path. A target that cannot be normalised safely (an encoded
 *   `/`, `\`, `%`, control character, malformed encoding, `#`, `*`) is refused with 400.
 * - Errors the HTTP layer makes before a route runs (Node's parser: bad request line, bad
 *   chunking, headers too large, request timeout; Fastify's router: bad URL, over-long
 *   parameter; `Expect`; a missing Host) are answered as problem+json. Node's own writers of these
 *   answers are replaced (`clientErrorHandler`, `frameworkErrors`, `checkExpectation`,
 *   `requireHostHeader: false` + a hook), since they write their own bodies and, at trace level,
 *   Fastify's handler logged `err.rawPacket` (the raw socket bytes, keys included).
 * - A request that has not fully arrived `REQUEST_TIMEOUT_MS` after it started (slow headers or a
 *   slow body) gets 408 and the connection is closed. Node checks its timeouts only every
 *   `connectionsCheckingInterval` (30 s by default), so the server is built here with a short
 *   interval, and a timeout shortened by that interval so the 408 comes within the limit.
 * - A 64-byte ed25519 keypair anywhere in the URL (a path segment, a query name or value) is 400
 *   `PRIVATE_KEY_IN_URL`, before authentication, logging or any route: never echoed, logged or
 *   sent to the RPC. Generic, so routes added later are covered.
 * - Refused requests (those two, and a missing Host) count against the client's general rate
 *   limit like any request: the edge marks them, the rate limiter counts and answers them.
 * - Open connections are bounded in total and per address (`limitConnections`).
 * - `X-Content-Type-Options: nosniff` on every answer, `Cache-Control: no-store` on /api answers.
 * - One log line per request: method, route template, status, time (and the request id the
 *   logger binds). Never the URL, query, headers or body.
 * - GET/HEAD (any method) on a path that exists for other methods: 405 with `Allow`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LogController, type FastifyError, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { CinderApp } from './types.ts';
import { isApiPath } from './auth.ts';
import { clientKeyOf } from './clientKey.ts';
import { CinderError, toProblem } from '../errors.ts';
import { isSecretKeyText } from '../keys/detectSecretKey.ts';
import { sendProblem } from './problem.ts';

/** Where a refused request target's reason is kept between rewriteUrl and the first hook. */
const kTargetError = Symbol('cinder.targetError');
type RawRequest = IncomingMessage & { [kTargetError]?: TargetRefusal };

/** Why a request target is refused (the situations of BAD_REQUEST that normaliseRequestTarget finds). */
type TargetRefusal = 'targetNotPath' | 'targetFragment' | 'malformedPercent' | 'encodedSeparator';

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/** RFC 3986 section 5.2.4, on a path whose segments are already decoded as far as they will be. */
function removeDotSegments(path: string): string {
  const output: string[] = [];
  const segments = path.split('/').slice(1);
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '..') {
      if (output.length > 0) output.pop();
      if (last) output.push('');
    } else if (segment === '.') {
      if (last) output.push('');
    } else {
      output.push(segment);
    }
  });
  return `/${output.join('/')}`;
}

/**
 * The request target as routing, authentication and rate limits see it (see the top of the
 * file), or the reason it is refused. Query strings are kept as sent (the routes validate them).
 */
export function normaliseRequestTarget(raw: string): { url: string } | { error: TargetRefusal } {
  let target = raw;
  if (!target.startsWith('/')) {
    const authority = ABSOLUTE_FORM.exec(target);
    if (!authority) return { error: 'targetNotPath' };
    target = target.slice(authority[0].length) || '/';
    if (!target.startsWith('/')) target = `/${target}`;
  }
  const queryAt = target.indexOf('?');
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : target.slice(queryAt);
  if (target.includes('#')) return { error: 'targetFragment' };
  let path = '';
  for (let i = 0; i < rawPath.length; i++) {
    const char = rawPath[i]!;
    if (char !== '%') {
      path += char;
      continue;
    }
    const hex = rawPath.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return { error: 'malformedPercent' };
    const code = Number.parseInt(hex, 16);
    const decoded = String.fromCharCode(code);
    if (UNRESERVED.test(decoded)) path += decoded;
    else if (code < 0x20 || code === 0x7f || '/\\%?#'.includes(decoded)) {
      return { error: 'encodedSeparator' };
    } else path += `%${hex.toUpperCase()}`;
    i += 2;
  }
  path = removeDotSegments(path.replace(/\/{2,}/g, '/'));
  return { url: path + query };
}

/** Where a refused target is routed (no route has it); the first hook answers 400 before anything runs. */
const REFUSED_TARGET = '/-/refused-request-target';

/** Fastify's `rewriteUrl`: the normalised target, or a marker that the first hook turns into a 400. */
function rewriteUrl(req: RawRequest): string {
  const result = normaliseRequestTarget(req.url ?? '/');
  if ('url' in result) return result.url;
  req[kTargetError] = result.error;
  return REFUSED_TARGET;
}

/** The path of a (normalised) URL, without its query. */
export const pathOf = (url: string): string => url.split('?')[0]!;

/** True when any path segment, query name or query value (or a part of one) is a private key. */
export function urlHoldsSecretKey(url: string): boolean {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const candidates: string[] = [];
  for (const segment of path.split('/')) {
    if (segment.length < 86) continue;
    try {
      candidates.push(decodeURIComponent(segment));
    } catch {
      candidates.push(segment);
    }
  }
  if (queryAt !== -1) {
    for (const [name, value] of new URLSearchParams(url.slice(queryAt + 1))) candidates.push(name, value);
  }
  // A key may also be one part of a value ("a,b", "x:key"): check the parts too.
  return candidates.some((text) => {
    if (text.length < 86) return false;
    const parts = text.split(/[\s,;:|=&]+/);
    return isSecretKeyText(text) || (parts.length > 1 && parts.some(isSecretKeyText));
  });
}

/**
 * A caller's X-Request-Id is reused (echoed, and bound to every log line of the request) only when
 * it is a short printable id: 1 to 64 of A-Z a-z 0-9 . _ : -, with no run of 32 or more base58
 * characters. Any 32-byte value in base58 (a seed, an address) is at least 32 such characters in
 * a row (43–44 typically) and a 64-byte key 86–88, while UUIDs, ULIDs and counters have none that
 * long: so a key pasted into the header is never logged or echoed. Anything else gets a new UUID.
 */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const BASE58_RUN = /[1-9A-HJ-NP-Za-km-z]{32,}/;

/** Fastify's `genReqId`: the caller's X-Request-Id when it is safe (see above), else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) && !BASE58_RUN.test(given) ? given : randomUUID();
}

// ---------------------------------------------------------------------------------------------
// Answers written below Fastify (the socket, Node's response): problem+json by hand, since no
// request or reply object exists there.

const EDGE_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' } as const;

function rawProblem(error: CinderError, requestId: string): string {
  const body = JSON.stringify(toProblem(error));
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n' +
    `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** What Node's HTTP parser or server reported about a connection, as the error the client sees. */
export function clientErrorOf(code: string | undefined, timeoutMs: number): CinderError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return new CinderError('REQUEST_TIMEOUT', { reason: 'slowRequest', timeoutMs });
    case 'HPE_HEADER_OVERFLOW':
      return new CinderError('HEADERS_TOO_LARGE', { reason: 'overflow' });
    case 'HPE_INVALID_URL':
      return new CinderError('BAD_REQUEST', { reason: 'invalidUrl' });
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return new CinderError('BAD_REQUEST', { reason: 'framing' });
    default:
      return new CinderError('BAD_REQUEST', { reason: 'notHttp' });
  }
}

interface InFlightResponse {
  req?: IncomingMessage;
  writableEnded: boolean;
  headersSent: boolean;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * Fastify's `clientErrorHandler`. Logs the error's code only: the error object carries
 * `rawPacket`, the bytes read from the socket (a pipelined request's body, key included).
 */
function createClientErrorHandler(logger: Logger, timeoutMs: number) {
  return function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(err.code, timeoutMs);
    const requestId = randomUUID();
    logger.info({ reqId: requestId, statusCode: error.status, code: error.code, httpError: err.code }, 'client error: request refused before routing');
    let answered = false;
    const answer = () => {
      if (answered || socket.destroyed) return;
      answered = true;
      if (socket.writable) socket.end(rawProblem(error, requestId), () => socket.destroy());
      else socket.destroy();
      // A peer that never reads must not keep the socket: destroy it after a grace period.
      setTimeout(() => socket.destroy(), 5_000).unref();
    };
    // Node's own ServerResponse in flight on this socket (not a public API, hence the guards).
    const inFlight = (socket as Socket & { _httpMessage?: InFlightResponse | null })._httpMessage;
    if (inFlight && !inFlight.writableEnded && inFlight.req?.complete === true) {
      // A complete request (say, a pipelined burn) is still being answered and the bytes after
      // it are malformed: let its answer go out first, then refuse the rest and close.
      inFlight.once('finish', answer);
      inFlight.once('close', answer);
    } else if (inFlight?.headersSent) {
      socket.destroy();
    } else {
      answer();
    }
  };
}

/** Fastify's `frameworkErrors`: a URL the router cannot decode, or a parameter over 100 characters. */
function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const cinderError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new CinderError('URI_TOO_LONG', { reason: 'pathParameter' })
      : error.code === 'FST_ERR_BAD_URL'
        ? new CinderError('BAD_REQUEST', { reason: 'pathNotUtf8' })
        : new CinderError('BAD_REQUEST', { reason: 'unroutable' });
  void sendProblem(reply.headers(EDGE_HEADERS), cinderError);
}

/**
 * The HTTP server: Node's, with the request timeout checked often enough to be real, and no
 * built-in Host check (the edge hook answers it in problem+json).
 */
function createEdgeServer(handler: (req: IncomingMessage, res: ServerResponse) => void, options: EdgeOptions): Server {
  const timeoutMs = options.requestTimeoutMs;
  const checkEveryMs = Math.max(50, Math.min(1_000, Math.floor(timeoutMs / 10)));
  const requestTimeout = Math.max(1, timeoutMs - checkEveryMs);
  const server = createServer(
    {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: checkEveryMs,
      requireHostHeader: false,
      keepAliveTimeout: 72_000,
    },
    handler,
  );
  limitConnections(server, options);
  // CONNECT (a proxy tunnel): Node would close the connection without an answer.
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const error = new CinderError('METHOD_NOT_ALLOWED', { reason: 'connect' });
    if (socket.writable) socket.end(rawProblem(error, randomUUID()), () => socket.destroy());
    else socket.destroy();
  });
  // An `Expect` other than 100-continue: Node would answer a bare 417.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const error = new CinderError('EXPECTATION_FAILED', { reason: 'expect' });
    const body = JSON.stringify(toProblem(error));
    res.writeHead(error.status, { ...EDGE_HEADERS, 'content-type': 'application/problem+json; charset=utf-8', connection: 'close', 'x-request-id': randomUUID() });
    res.end(body);
  });
  return server;
}

/**
 * Open connections, idle keep-alive ones included, are bounded in total (Node's
 * `server.maxConnections`: beyond it a new connection is closed at once) and per address (the
 * `connection` event: one address beyond its share has its new connection closed at once), so one
 * client cannot hold thousands of idle sockets. IPv6 addresses are grouped by /64, as for rate limits.
 */
function limitConnections(server: Server, { maxConnections, maxConnectionsPerClient }: EdgeOptions): void {
  server.maxConnections = maxConnections;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = clientKeyOf(socket.remoteAddress ?? 'unknown');
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

export interface EdgeOptions {
  logger: Logger;
  /** Headers and body of a request must have arrived this long after it started, else 408. */
  requestTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
}

/** The Fastify options of the edge (see the top of the file). */
export function edgeServerOptions(options: EdgeOptions): Partial<FastifyServerOptions> {
  const { logger, requestTimeoutMs } = options;
  return {
    serverFactory: (handler) => createEdgeServer(handler, options),
    rewriteUrl: rewriteUrl as FastifyServerOptions['rewriteUrl'],
    clientErrorHandler: createClientErrorHandler(logger, requestTimeoutMs) as FastifyServerOptions['clientErrorHandler'],
    frameworkErrors: frameworkErrors as FastifyServerOptions['frameworkErrors'],
    // Fastify's request lines carry the URL (query included); the onResponse hook below logs instead.
    logController: new LogController({ disableRequestLogging: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// Hooks and the route table for 405.

interface RouteEntry {
  pattern: RegExp;
  methods: Set<string>;
}

function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment === '*'
          ? '.*'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\*$/, '.*'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

const routeTables = new WeakMap<object, Map<string, RouteEntry>>();

/** Every route of the app as registered: url template → methods. Read by tests (the fuzz campaign). */
export function routeTable(app: CinderApp): { url: string; methods: string[] }[] {
  return [...(routeTables.get(app) ?? new Map<string, RouteEntry>())].map(([url, entry]) => ({ url, methods: [...entry.methods].sort() }));
}

/** The methods a path exists for, e.g. ['POST'] for /api/burn_tokens; [] for an unknown path. */
export function allowedMethods(app: CinderApp, path: string): string[] {
  const methods = new Set<string>();
  for (const entry of routeTables.get(app)?.values() ?? []) {
    if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method);
  }
  return [...methods].sort();
}

const NON_UTF8_CHARSET = /;\s*charset\s*=\s*"?(?!utf-?8"?\s*(;|$))/i;

/** Why the edge refuses this request (a bad target, no Host, a key in the URL), or null. */
function edgeRefusal(request: FastifyRequest): CinderError | null {
  const targetError = (request.raw as RawRequest)[kTargetError];
  if (targetError) return new CinderError('BAD_REQUEST', { reason: targetError });
  if (request.raw.httpVersion === '1.1' && !request.headers.host) {
    return new CinderError('BAD_REQUEST', { reason: 'noHost' });
  }
  if (urlHoldsSecretKey(request.url)) {
    return new CinderError('PRIVATE_KEY_IN_URL', { reason: 'url' });
  }
  return null;
}

/** Registers the hooks of the edge. Call it first, before any other hook or route, and the rate limiter right after auth. */
export function registerEdge(app: CinderApp): void {
  const table = new Map<string, RouteEntry>();
  routeTables.set(app, table);
  app.addHook('onRoute', (route) => {
    const entry = table.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() };
    const methods = [route.method].flat();
    for (const method of methods) entry.methods.add(method);
    // Fastify adds a HEAD route for every GET route (exposeHeadRoutes), without an onRoute call.
    if (methods.includes('GET') && route.exposeHeadRoute !== false) entry.methods.add('HEAD');
    table.set(route.url, entry);
  });

  // The refusal is answered by the rate limiter's first hook, once the request is counted against
  // its client (src/http/rateLimit.ts): probing costs what any request costs. Nothing runs in
  // between but identifying the client.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    request.cinderRefusal = edgeRefusal(request);
  });

  // Cinder reads UTF-8 JSON only; another declared charset would be decoded wrongly.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const type = request.headers['content-type'];
    if (typeof type === 'string' && NON_UTF8_CHARSET.test(type)) {
      throw new CinderError('UNSUPPORTED_MEDIA_TYPE', { reason: 'charset' });
    }
    return payload;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    // Redirects (the docs plugin's) copy the request's query string into Location: a 32-byte key
    // pasted there (indistinguishable from an address) would be echoed. No Cinder redirect needs it.
    const location = reply.getHeader('location');
    if (typeof location === 'string' && location.includes('?')) reply.header('location', location.slice(0, location.indexOf('?')));
    if (isApiPath(request.url)) reply.header('cache-control', 'no-store');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) },
      'request completed',
    );
  });

  // A client that went away is not an error of the server: one debug line, no error log.
  app.addHook('onRequestAbort', async (request) => {
    request.log.debug({ method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'client closed the connection before the answer');
  });
}

/** The not-found handler: 405 with Allow when the path exists for other methods, else 404. */
export function notFoundError(app: CinderApp, request: FastifyRequest): CinderError {
  const path = pathOf(request.url);
  const allowed = allowedMethods(app, path);
  // A route of this method exists (a static file that is not there): a plain 404.
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return new CinderError('METHOD_NOT_ALLOWED', { reason: 'notAllowed', method: request.method, allowed }, { headers: { allow: allowed.join(', ') } });
  }
  // The catalogue echoes the path only when it is short and holds nothing that could be a key.
  return new CinderError('NOT_FOUND', { reason: 'noRoute', method: request.method, path });
}
