import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppDeps, CinderApp } from './http/types.ts';
import { errorHandler, ProblemSchema, sendProblem } from './http/problem.ts';
import { edgeServerOptions, notFoundError, registerEdge } from './http/edge.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerHealthRoutes } from './http/routes/health.ts';
import { registerBurnTokensRoute } from './http/routes/burnTokens.ts';
import { registerGenerateWalletsRoute } from './http/routes/generateWallets.ts';
import { registerTransactionsRoute } from './http/routes/transactions.ts';
import { registerAuth } from './http/auth.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { registerRateLimits } from './http/rateLimit.ts';
import { createMetrics, instrumentChain, registerMetrics } from './metrics.ts';
import { createStores } from './store/index.ts';
import { createPipeline } from './operations/pipeline.ts';
import { registerPrepareRoutes } from './http/routes/prepare.ts';
import { registerReclaimRentRoutes } from './http/routes/reclaimRent.ts';
import { registerRelayTransactionsRoute } from './http/routes/relayTransactions.ts';
import { monitorSponsorBalance } from './operations/sponsorMonitor.ts';

export type { AppDeps, CinderApp };

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export async function buildApp(deps: AppDeps): Promise<CinderApp> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 16 * 1024,
    trustProxy:
      typeof deps.config.trustProxy === 'number'
        ? // a hop count: trust that many proxies in front of the service
          (_address: string, hop: number) => hop < (deps.config.trustProxy as number)
        : deps.config.trustProxy,
    // Reuse a caller's request id when it is safe to echo; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: true } },
    return503OnClosing: true,
    // The hardened edge (src/http/edge.ts): the server and its timeouts, one normalised path,
    // problem+json for what the HTTP layer refuses, no request lines with URLs in the log.
    ...edgeServerOptions({ logger: deps.logger, requestTimeoutMs: deps.config.requestTimeoutMs }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body Cinder reads: anything else is a 415, not a string that fails validation.
  app.removeContentTypeParser(['text/plain']);
  app.addSchema(ProblemSchema);
  app.setErrorHandler(errorHandler);
  // First of all hooks: the request id, the URL checks (a key in it, a bad target), headers, logging.
  registerEdge(app);
  // 404, or 405 with Allow when the path exists for another method.
  app.setNotFoundHandler((request, reply) => sendProblem(reply, notFoundError(app, request)));

  // API keys, rate limits, Idempotency-Key and metrics (README: "Authentication, rate limits and
  // several instances"). In this order: auth identifies the client, the rate limiter counts it,
  // auth refuses it (preParsing) before its body is read.
  const metrics = createMetrics();
  const stores = await createStores({ config: deps.config, logger: deps.logger, metrics });
  app.addHook('onClose', stores.close);
  registerAuth(app, deps);
  await registerRateLimits(app, { config: deps.config, logger: deps.logger, metrics, redis: stores.redis, walletBudget: stores.walletBudget });
  registerIdempotency(app, { config: deps.config, logger: deps.logger, metrics, store: stores.idempotency, secret: stores.idempotencySecret, chain: deps.chain });
  registerMetrics(app, { config: deps.config, metrics });
  deps = { ...deps, chain: instrumentChain(deps.chain, metrics) };
  if (deps.sponsor) {
    // The sponsor's balance as a gauge: on a timer, and from every read of its account.
    const sponsorMonitor = monitorSponsorBalance({ chain: deps.chain, sponsor: deps.sponsor, metrics, logger: deps.logger });
    app.addHook('onClose', async () => sponsorMonitor.stop());
    deps = { ...deps, chain: sponsorMonitor.chain };
  }

  // Before the routes: @fastify/swagger records each route as it is added (GET /openapi.json, /docs).
  await registerOpenApi(app);

  // A person who opens the server's address in a browser wants the docs page, not a 404.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/docs', 302));
  registerHealthRoutes(app, deps);
  // One pipeline behind burn, reclaim, preview and prepare (src/operations/pipeline.ts).
  const pipeline = createPipeline({
    chain: deps.chain,
    sentTransactions: stores.sentTransactions,
    burnDeadlineMs: deps.config.burnDeadlineMs,
    sponsor: deps.sponsor ?? null,
    localChain: deps.config.solanaRpcUrl === undefined,
    turns: stores.locks,
  });
  registerBurnTokensRoute(app, { config: deps.config, pipeline, locks: stores.locks });
  registerReclaimRentRoutes(app, { config: deps.config, pipeline, locks: stores.locks });
  registerPrepareRoutes(app, { config: deps.config, pipeline, serverSecret: stores.idempotencySecret });
  registerGenerateWalletsRoute(app, deps);
  registerTransactionsRoute(app, { ...deps, sentTransactions: stores.sentTransactions });
  registerRelayTransactionsRoute(app, { ...deps, sentTransactions: stores.sentTransactions, serverSecret: stores.idempotencySecret });

  await app.ready();
  return app;
}
