/**
 * What a route declares about itself beside its schema, in its Fastify route `config`, read by the
 * plugins that act on it: adding a route means declaring it in one place.
 * - `idempotent`: it signs and sends with the caller's key, so a retry must never send twice: the
 *   Idempotency-Key applies (src/http/idempotency.ts) and the OpenAPI document names the header.
 * - `problemCodes`: the problem codes it can answer; the OpenAPI document lists them under the
 *   status errors.ts gives each (src/http/openapi.ts). A route without the list is documented with
 *   every code of each error status its schema declares.
 * - `budget`: the rate-limit budget it counts against (src/http/rateLimit.ts). A route of the /api
 *   context that declares none counts against the general one: a route cannot escape the limits.
 * - `ownersField`: the body field that names many owners, one unit each of the owners budget.
 * - `relaysPrepared`: it relays transactions, whose messages a prepare answer already counted.
 */
import type { CinderErrorCode } from '../errors.ts';

/**
 * The rate-limit budgets: `status` the general one every /api request counts against; `burn` the
 * chain work of the operations (burn, reclaim, prepare, relay), `preview` the read-only previews,
 * `generate` generate_wallets.
 */
export type Budget = 'burn' | 'preview' | 'generate' | 'status';

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotent?: boolean;
    problemCodes?: readonly CinderErrorCode[];
    budget?: Budget;
    ownersField?: 'owners' | 'userPrivateKeys';
    relaysPrepared?: boolean;
  }
}

/**
 * Codes any /api route can answer: the hardened edge (src/http/edge.ts: a malformed request, a key
 * in the URL, a wrong method, a request that does not arrive in time), authentication, rate
 * limits, the unexpected error.
 */
export const API_PROBLEMS: readonly CinderErrorCode[] = [
  'BAD_REQUEST',
  'PRIVATE_KEY_IN_URL',
  'METHOD_NOT_ALLOWED',
  'REQUEST_TIMEOUT',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
];

/** Codes of reading a JSON request body (src/http/problem.ts). */
export const JSON_BODY_PROBLEMS: readonly CinderErrorCode[] = [
  'INVALID_JSON',
  'VALIDATION_FAILED',
  'MISSING_FIELD',
  'UNKNOWN_FIELD',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
];
