import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppDeps, CinderApp } from './http/types.ts';
import { errorHandler, ProblemSchema, sendProblem } from './http/problem.ts';
import { edgeServerOptions, notFoundError, registerEdge, requestIdOf } from './http/edge.ts';
import { registerOpenApi } from './http/openapi.ts';
import { lazySchemaCompilers } from './http/lazyCompilers.ts';
import { registerHealthRoutes } from './http/routes/health.ts';
import { registerBurnTokensRoute } from './http/routes/burnTokens.ts';
import { registerGenerateWalletsRoute } from './http/routes/generateWallets.ts';
import { registerTransactionsRoute } from './http/routes/transactions.ts';
import { registerTransactionStatusesRoute } from './http/routes/transactionStatuses.ts';
import { registerAuth } from './http/auth.ts';
import { registerApiContext } from './http/apiContext.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { createPreviewSlots, registerRateLimits } from './http/rateLimit.ts';
import { createMetrics, instrumentChain } from './metrics.ts';
import { registerMetrics } from './http/routes/metrics.ts';
import { createStores } from './store/index.ts';
import { createPipeline } from './operations/pipeline.ts';
import { registerPrepareRoutes } from './http/routes/prepare.ts';
import { registerReclaimRentRoutes } from './http/routes/reclaimRent.ts';
import { registerReclaimManyRoutes } from './http/routes/reclaimMany.ts';
import { createReclaimMany } from './operations/reclaimMany.ts';
import { registerRelayTransactionsRoute } from './http/routes/relayTransactions.ts';
import { registerWebApp } from './http/routes/webApp.ts';
import { registerGuide } from './http/routes/guide.ts';
import { monitorSponsorBalance } from './operations/sponsorMonitor.ts';
import { createSponsorPolicy } from './operations/sponsorPolicy.ts';

export type { AppDeps, CinderApp };

export async function buildApp(deps: AppDeps): Promise<CinderApp> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: 16 * 1024,
    trustProxy:
      typeof deps.config.trustProxy === 'number'
        ? // a hop count: trust that many proxies in front of the service
          (_address: string, hop: number) => hop < (deps.config.trustProxy as number)
        : deps.config.trustProxy,
    // Reuse a caller's request id when it is safe to echo and log; otherwise make one (src/http/edge.ts).
    genReqId: requestIdOf,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: true } },
    // Fastify's own compilers, each route's made on its first request rather than before listening.
    schemaController: lazySchemaCompilers,
    return503OnClosing: true,
    // The hardened edge (src/http/edge.ts): the server and its timeouts, one normalised path,
    // problem+json for what the HTTP layer refuses, no request lines with URLs in the log.
    ...edgeServerOptions({
      logger: deps.logger,
      requestTimeoutMs: deps.config.requestTimeoutMs,
      maxConnections: deps.config.maxConnections,
      maxConnectionsPerClient: deps.config.maxConnectionsPerClient,
    }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body Cinder reads: anything else is a 415, not a string that fails validation.
  app.removeContentTypeParser(['text/plain']);
  app.addSchema(ProblemSchema);
  app.setErrorHandler(errorHandler);
  // First of all hooks: the request id, the URL checks (a key in it, a bad target), headers, logging.
  registerEdge(app);
  // 404, or 405 with Allow when the path exists for another method.
  app.setNotFoundHandler((request, reply) => sendProblem(reply, notFoundError(app, request)));

  // API keys, rate limits, Idempotency-Key and metrics (docs/api-keys-and-limits.md,
  // docs/deployment.md). In this order: auth identifies the client, the rate limiter counts it,
  // auth refuses it (preParsing) before its body is read.
  const metrics = createMetrics();
  const stores = await createStores({ config: deps.config, logger: deps.logger, metrics, chain: deps.chain });
  app.addHook('onClose', stores.close);
  const auth = registerAuth(app, deps);
  const rateLimits = await registerRateLimits(app, { config: deps.config, logger: deps.logger, metrics, redis: stores.redis, counters: stores.walletBudget });
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
  await registerOpenApi(app, { apiKeys: deps.config.apiKeys.length > 0 });

  // A person who opens the server's address in a browser gets the web app (web/); the docs stay at /docs.
  registerWebApp(app, deps);
  // The docs pages (docs/*.md), rendered once, beside the API's Swagger UI.
  registerGuide(app);
  registerHealthRoutes(app, deps);
  // Every rule about the sponsor's money, asked by prepare, the keyed doors and the relay.
  const sponsorPolicy = deps.sponsor
    ? createSponsorPolicy({
        signer: deps.sponsor.signer,
        config: deps.config.sponsorPolicy,
        ledger: stores.sponsorLedger,
        locks: stores.locks,
        metrics,
        logger: deps.logger,
      })
    : null;
  if (deps.sponsor && !deps.config.redisUrl) {
    deps.logger.warn(
      'fee sponsor without REDIS_URL: its strikes, turns and losses are kept in this process only, and a restart forgets them ' +
        '(a struck wallet is sponsored again, the hourly loss budget starts from zero): see docs/security.md',
    );
  }
  // One pipeline behind burn, reclaim, preview and prepare (src/operations/pipeline.ts).
  const pipeline = createPipeline({
    sponsorPolicy,
    chain: deps.chain,
    sentTransactions: stores.sentTransactions,
    operationDeadlineMs: deps.config.operationDeadlineMs,
    localChain: deps.config.solanaRpcUrl === undefined,
    locks: stores.locks,
    recordPrepared: rateLimits.recordPrepared,
    autoPriorityFee: { maxMicroLamports: deps.config.autoPriorityFeeMaxMicroLamports, maxPriorityFeeLamports: deps.config.maxPriorityFeeLamports },
  });
  // Many wallets at once, one destination, one fee payer (docs/many-wallets.md).
  const reclaimMany = createReclaimMany({
    chain: deps.chain,
    sentTransactions: stores.sentTransactions,
    operationDeadlineMs: deps.config.operationDeadlineMs,
    locks: stores.locks,
    sponsorPolicy,
    recordPrepared: rateLimits.recordPrepared,
    autoPriorityFee: { maxMicroLamports: deps.config.autoPriorityFeeMaxMicroLamports, maxPriorityFeeLamports: deps.config.maxPriorityFeeLamports },
  });
  const many = { config: deps.config, reclaimMany, serverSecret: stores.idempotencySecret };
  const previewSlots = createPreviewSlots(deps.config.previewsPerClient);
  // The API: one plugin context, in which every route and every 404 or 405 is authenticated and
  // rate limited; a route declares only its own budget (src/http/apiContext.ts, src/http/routeConfig.ts).
  await registerApiContext(app, { auth, rateLimits }, (api) => {
    registerBurnTokensRoute(api, { config: deps.config, pipeline });
    registerReclaimRentRoutes(api, { config: deps.config, chain: deps.chain, pipeline, previewSlots, many });
    registerReclaimManyRoutes(api, { ...many, previewSlots });
    registerPrepareRoutes(api, { config: deps.config, pipeline, serverSecret: stores.idempotencySecret, many });
    registerGenerateWalletsRoute(api, deps);
    registerTransactionsRoute(api, { ...deps, sentTransactions: stores.sentTransactions });
    registerTransactionStatusesRoute(api, { ...deps, sentTransactions: stores.sentTransactions });
    registerRelayTransactionsRoute(api, { ...deps, sentTransactions: stores.sentTransactions, serverSecret: stores.idempotencySecret, sponsorPolicy });
  });

  await app.ready();
  return app;
}
