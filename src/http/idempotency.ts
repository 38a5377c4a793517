/**
 * `Idempotency-Key` on POST /api/burn_tokens (contract: "the same key with the same body within
 * 24 h returns the first answer without touching the chain again").
 *
 * Hooked onto the burn route from app.ts (an onRoute hook adds a route-level preHandler and
 * onSend), so the route itself knows nothing about it:
 *
 * - preHandler (the body is parsed and valid): no header → nothing to do. Otherwise the record
 *   key is sha256(scope, Idempotency-Key), where the scope is the API key's id when API keys are
 *   on, and one shared scope when they are off (the fingerprint below holds the private key, so a
 *   stranger can never replay someone else's answer; and a retry from another IP address, the
 *   usual case after a network failure, still finds its record). The fingerprint is
 *   sha256(record key, mint, priorityFee, userPrivateKey): the body itself is never stored.
 *     · first use → a `pending` record; the burn runs;
 *     · same key, same body, finished → the stored answer, with `Idempotent-Replayed: true`;
 *     · same key, same body, still running → 409 REQUEST_IN_PROGRESS (Retry-After: 1);
 *     · same key, another body → 400 IDEMPOTENCY_KEY_REUSED;
 *     · store unreachable (Redis) → 503 SERVICE_UNAVAILABLE, nothing sent: fails closed, so a
 *       burn can never run twice.
 * - onSend: a 200 (status success, failed or pending: something was sent, so running the request
 *   again is never right) is stored for 24 h. Any other answer (a 400 of validation or of chain
 *   state, a 503 RPC_UNAVAILABLE, a 500) means nothing was sent: the record is dropped, so a retry
 *   runs again and sees the chain as it is then.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { CinderApp } from '../app.ts';
import { CinderError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { IdempotencyStore } from '../store/idempotencyStore.ts';
import { throttledLog } from '../store/redis.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** This request answered from a stored idempotency record. */
    cinderIdempotentReplay: boolean;
    /** This request was refused because the idempotency store is unreachable. */
    cinderIdempotencyUnavailable: boolean;
    /** This request owns a pending idempotency record. */
    cinderIdempotency: { key: string; token: string; fingerprint: string } | null;
  }
}

export interface IdempotencyDeps {
  config: Pick<Config, 'apiKeys' | 'burnDeadlineMs'>;
  logger: Logger;
  metrics: Metrics;
  store: IdempotencyStore;
}

const sha256 = (...parts: string[]) => createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex');

interface BurnBody {
  mint: unknown;
  priorityFee: unknown;
  userPrivateKey: unknown;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function registerIdempotency(app: CinderApp, deps: IdempotencyDeps): void {
  const { config, metrics, store } = deps;
  // A pending record outlives the longest burn, then frees the key if its instance died.
  const lockMs = config.burnDeadlineMs + 30_000;
  const logFailure = throttledLog(deps.logger);

  app.decorateRequest('cinderIdempotentReplay', false);
  app.decorateRequest('cinderIdempotencyUnavailable', false);
  app.decorateRequest('cinderIdempotency', null);

  function unavailable(request: FastifyRequest, error: unknown, when: string) {
    metrics.redisErrors.inc({ operation: 'idempotency' });
    const err = error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) };
    logFailure({ err, reqId: request.id }, `idempotency store unavailable (Redis) ${when}`);
  }

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header)) {
      throw new CinderError('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID is a good choice).', {
        errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
    const scope = config.apiKeys.length > 0 ? request.cinderClient : 'anonymous';
    const key = sha256('cinder-idempotency-key', scope, header);
    const body = request.body as BurnBody;
    const fingerprint = sha256('cinder-idempotency-body', key, JSON.stringify([body.mint, body.priorityFee, body.userPrivateKey]));

    let begun: Awaited<ReturnType<IdempotencyStore['begin']>>;
    try {
      begun = await store.begin(key, fingerprint, lockMs);
    } catch (error) {
      unavailable(request, error, 'before a burn: answering 503');
      metrics.idempotency.inc({ result: 'unavailable' });
      request.cinderIdempotencyUnavailable = true;
      throw new CinderError(
        'SERVICE_UNAVAILABLE',
        'The idempotency store is unavailable, so a burn with an Idempotency-Key cannot be run safely; nothing was sent. Retry shortly.',
        { headers: { 'retry-after': '5' } },
      );
    }
    switch (begun.kind) {
      case 'started':
        metrics.idempotency.inc({ result: 'executed' });
        request.cinderIdempotency = { key, token: begun.token, fingerprint };
        return;
      case 'replay':
        metrics.idempotency.inc({ result: 'replayed' });
        request.cinderIdempotentReplay = true;
        request.log.info('burn answered from its idempotency record; the chain was not touched');
        return reply
          .code(begun.response.status)
          .header('idempotent-replayed', 'true')
          .header('content-type', begun.response.contentType)
          .send(begun.response.body);
      case 'in_progress':
        metrics.idempotency.inc({ result: 'in_progress' });
        throw new CinderError(
          'REQUEST_IN_PROGRESS',
          'A request with this Idempotency-Key is still in progress. Retry when it has finished to get its answer.',
          { headers: { 'retry-after': '1' } },
        );
      case 'mismatch':
        metrics.idempotency.inc({ result: 'reused' });
        throw new CinderError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used with a different request body in the last 24 hours. Use a new key for a new request.',
        );
    }
  };

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const owned = request.cinderIdempotency;
    if (!owned) return payload;
    request.cinderIdempotency = null;
    try {
      if (reply.statusCode === 200 && typeof payload === 'string') {
        const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
        await store.complete(owned.key, owned.token, owned.fingerprint, { status: 200, contentType, body: payload }, IDEMPOTENCY_TTL_MS);
      } else {
        await store.release(owned.key, owned.token);
      }
    } catch (error) {
      // The answer goes out all the same (hiding a burn that ran would be worse). The pending
      // record stays until it expires: retries get 409 (or 503 while Redis is down), never a second burn.
      unavailable(request, error, `after a burn (status ${reply.statusCode}): its answer is not stored`);
    }
    return payload;
  };

  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url !== '/api/burn_tokens' || !asArray(route.method).includes('POST')) return;
    route.preHandler = [...asArray(route.preHandler), preHandler as preHandlerHookHandler];
    route.onSend = [...asArray(route.onSend), onSend as onSendHookHandler];
  });
}
