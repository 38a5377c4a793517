/**
 * `GET /metrics` and the HTTP hooks that record the request and burn metrics (src/metrics.ts
 * defines them). The route is open to loopback clients only, or to anyone presenting
 * `Authorization: Bearer <METRICS_TOKEN>`.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { CinderError } from '../../errors.ts';
import type { Metrics } from '../../metrics.ts';
import { sendProblem } from '../problem.ts';
import type { CinderApp } from '../types.ts';

const LOOPBACK_ADDRESS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

export function isLoopbackAddress(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK_ADDRESS.test(address);
}

/**
 * A request comes from this machine, directly: the socket peer and the client address are loopback
 * and no proxy header is present (a reverse proxy on the same host would otherwise expose
 * /metrics to the whole internet).
 */
function isDirectLoopback(request: FastifyRequest): boolean {
  const headers = request.headers;
  if (headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined || headers['x-real-ip'] !== undefined) return false;
  return isLoopbackAddress(request.socket.remoteAddress) && isLoopbackAddress(request.ip);
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Records HTTP, burn and wallet metrics, and serves `GET /metrics`. */
export function registerMetrics(app: CinderApp, { config, metrics }: { config: Config; metrics: Metrics }): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    if (route === '/api/generate_wallets' && reply.statusCode === 200) {
      const n = Number((request.query as { n?: string }).n);
      if (Number.isSafeInteger(n)) metrics.walletsGenerated.inc(n);
    }
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.routeOptions.url !== '/api/burn_tokens' || request.method !== 'POST') return payload;
    if (request.cinderIdempotentReplay) return payload;
    const status = reply.statusCode;
    // Refusals before the burn started (auth, rate limit, idempotency conflicts) are not burns.
    if (status === 401 || status === 409 || status === 429 || (status === 503 && request.cinderIdempotencyUnavailable)) return payload;
    if (status >= 500) metrics.burns.inc({ outcome: 'error' });
    else if (status >= 400) metrics.burns.inc({ outcome: 'rejected' });
    else if (status === 200 && typeof payload === 'string') {
      try {
        const body = JSON.parse(payload) as { status?: string; details?: { reclaimedLamports?: string } };
        metrics.burns.inc({ outcome: body.status ?? 'unknown' });
        const lamports = Number(body.details?.reclaimedLamports ?? 0);
        if (lamports > 0) metrics.lamportsReclaimed.inc(lamports);
      } catch {
        metrics.burns.inc({ outcome: 'unknown' });
      }
    }
    return payload;
  });

  const tokenDigest = config.metricsToken === undefined ? undefined : sha256(config.metricsToken);
  app.get('/metrics', { schema: { hide: true }, exposeHeadRoute: false }, async (request, reply) => {
    if (tokenDigest) {
      const token = bearerToken(request);
      // Both sides hashed to 32 bytes: the comparison takes the same time whatever the token's length.
      if (token === undefined || !timingSafeEqual(sha256(token), tokenDigest)) {
        return sendProblem(
          reply,
          new CinderError('UNAUTHORIZED', { reason: 'metricsToken' }, { headers: { 'www-authenticate': 'Bearer' } }),
        );
      }
    } else if (!isDirectLoopback(request)) {
      return sendProblem(
        reply,
        new CinderError('FORBIDDEN', { reason: 'metricsLoopback' }),
      );
    }
    const body = await metrics.registry.metrics();
    return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(body);
  });
}
