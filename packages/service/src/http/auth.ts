/**
 * API keys (docs/api-keys-and-limits.md, "API keys (401)"). Off when API_KEYS is empty. Otherwise every
 * request of the /api plugin context (./apiContext.ts: its routes and its 404s, by the context's own
 * hook, `requireApiKey`) must present one configured key as
 * `Authorization: Bearer <key>` or `X-API-Key: <key>`, else 401 UNAUTHORIZED with
 * `WWW-Authenticate: Bearer`. /health, /ready and the other non-/api paths stay open.
 *
 * Constant time: the presented key is hashed with SHA-256 and the 32-byte digest is compared
 * with the digest of every configured entry with `timingSafeEqual`, always all of them, so neither
 * the length of a key nor how many of its bytes match changes the time taken. An entry
 * `sha256:<hex>` is such a digest, for operators who do not want plain keys in their environment.
 *
 * Hooks: the root `onRequest` identifies the client (the key when it is valid, else the IP address)
 * before the rate limiter counts it, the context's `onRequest` marks a request without a valid key,
 * and the root `preParsing` refuses an unauthenticated request before
 * its body is read. So 401s are rate limited per IP and carry the RateLimit-* headers too.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { CinderApp } from './types.ts';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import { clientKeyOf } from './clientKey.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request counts against: `key:<id>` (a valid API key) or `ip:<address>`. Never a key. */
    cinderClient: string;
    /** Set when API keys are on and the request did not present a valid one. */
    cinderAuthError: CinderError | null;
  }
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

export interface ApiKeyVerifier {
  readonly enabled: boolean;
  /** An id for the key (a hash prefix of its digest, safe to log and to use as a Redis key), or null. */
  verify(presented: string): string | null;
}

export function createApiKeyVerifier(entries: readonly string[]): ApiKeyVerifier {
  const digests = entries.map((entry) =>
    entry.startsWith('sha256:') ? Buffer.from(entry.slice('sha256:'.length), 'hex') : sha256(entry),
  );
  const ids = digests.map((digest) => createHash('sha256').update(digest).digest('hex').slice(0, 24));
  return {
    enabled: digests.length > 0,
    verify(presented) {
      const digest = sha256(presented);
      let matched = -1;
      // Every entry is compared, whatever matched before: no early exit.
      for (let i = 0; i < digests.length; i++) {
        if (timingSafeEqual(digest, digests[i]!) && matched === -1) matched = i;
      }
      return matched === -1 ? null : ids[matched]!;
    },
  };
}

/** `Authorization: Bearer <key>` first, else `X-API-Key`. Empty values count as absent. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer[ ]+(.*)$/i.exec(authorization);
    const key = match?.[1]?.trim();
    if (key) return key;
  }
  const header = request.headers['x-api-key'];
  const key = (Array.isArray(header) ? header[0] : header)?.trim();
  return key || undefined;
}

/** True for /api and everything under it (case-insensitive, whatever the query string). */
export function isApiPath(url: string): boolean {
  const path = url.split('?')[0]!.replace(/^\/+/, '/').toLowerCase();
  return path === '/api' || path.startsWith('/api/');
}

/** The /api plugin contexts (`registerApi`): their routes and 404s are guarded by the context's own hooks. */
const apiContexts = new WeakSet<object>();

/**
 * True for a request whose path is an /api path (the edge has normalised it before routing:
 * src/http/edge.ts) that the router did not route into the /api context, as the router's prefix
 * is case-sensitive and the API's rule is not (`/API/x`). Such a request is refused as any /api
 * request: authenticated and counted by the root hooks.
 */
export function isApiSpelledOutsideApi(request: FastifyRequest): boolean {
  return !apiContexts.has(request.server) && isApiPath(request.url);
}

/** The client's address as the rate limiter sees it (IPv6 grouped by /64, IPv4-mapped unwrapped). */
export function clientAddress(request: FastifyRequest): string {
  return clientKeyOf(request.ip ?? request.socket.remoteAddress ?? 'unknown');
}

export interface Auth {
  readonly verifier: ApiKeyVerifier;
  /** Makes `api` an /api context: every route and 404 in it requires a key (when keys are configured). */
  requireApiKey(api: CinderApp): void;
}

export function registerAuth(app: CinderApp, { config }: { config: Pick<Config, 'apiKeys'> }): Auth {
  const verifier = createApiKeyVerifier(config.apiKeys);
  app.decorateRequest('cinderClient', '');
  app.decorateRequest('cinderAuthError', null);
  // Keys of the request, verified once by the first hook, read by the context's.
  const verified = new WeakMap<FastifyRequest, { key: string | undefined; keyId: string | null }>();

  function refuseWithoutKey(request: FastifyRequest): void {
    const { key, keyId } = verified.get(request) ?? { key: undefined, keyId: null };
    if (!verifier.enabled || keyId) return;
    request.cinderAuthError = new CinderError('UNAUTHORIZED', { reason: key === undefined ? 'noApiKey' : 'badApiKey' }, { headers: { 'www-authenticate': 'Bearer' } });
  }

  app.addHook('onRequest', async (request) => {
    const key = presentedKey(request);
    const keyId = key === undefined || !verifier.enabled ? null : verifier.verify(key);
    verified.set(request, { key, keyId });
    request.cinderClient = keyId ? `key:${keyId}` : `ip:${clientAddress(request)}`;
    if (isApiSpelledOutsideApi(request)) refuseWithoutKey(request);
  });

  app.addHook('preParsing', async (request, _reply, payload) => {
    if (request.cinderAuthError) throw request.cinderAuthError;
    return payload;
  });
  return {
    verifier,
    requireApiKey(api) {
      apiContexts.add(api);
      api.addHook('onRequest', async (request) => refuseWithoutKey(request));
    },
  };
}
