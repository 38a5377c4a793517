import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { CinderError } from './errors.ts';
import { errorHandler, ProblemSchema, sendProblem } from './http/problem.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerHealthRoutes } from './http/routes/health.ts';
import { registerBurnTokensRoute } from './http/routes/burnTokens.ts';
import { registerGenerateWalletsRoute } from './http/routes/generateWallets.ts';
import { registerTransactionsRoute } from './http/routes/transactions.ts';
import type { ChainAdapter } from './chain/chainAdapter.ts';
import { registerAuth } from './http/auth.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { registerRateLimits } from './http/rateLimit.ts';
import { createMetrics, instrumentChain, registerMetrics } from './metrics.ts';
import { createStores } from './store/index.ts';
import type { WalletGenerator } from './wallets/index.ts';

export type CinderApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AppDeps {
  config: Config;
  logger: Logger;
  chain: ChainAdapter;
  wallets: WalletGenerator;
}

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
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body Cinder reads: anything else is a 415, not a string that fails validation.
  app.removeContentTypeParser(['text/plain']);
  app.addSchema(ProblemSchema);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new CinderError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`)),
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // API keys, rate limits, Idempotency-Key and metrics (README: "Authentication, rate limits and
  // several instances"). In this order: auth identifies the client, the rate limiter counts it,
  // auth refuses it (preParsing) before its body is read.
  const metrics = createMetrics();
  const stores = await createStores({ config: deps.config, logger: deps.logger, metrics });
  app.addHook('onClose', stores.close);
  registerAuth(app, deps);
  await registerRateLimits(app, { config: deps.config, logger: deps.logger, metrics, redis: stores.redis, walletBudget: stores.walletBudget });
  registerIdempotency(app, { config: deps.config, logger: deps.logger, metrics, store: stores.idempotency });
  registerMetrics(app, { config: deps.config, metrics });
  deps = { ...deps, chain: instrumentChain(deps.chain, metrics) };

  // Before the routes: @fastify/swagger records each route as it is added (GET /openapi.json, /docs).
  await registerOpenApi(app);

  registerHealthRoutes(app, deps);
  registerBurnTokensRoute(app, { ...deps, sentTransactions: stores.sentTransactions });
  registerGenerateWalletsRoute(app, deps);
  registerTransactionsRoute(app, { ...deps, sentTransactions: stores.sentTransactions });

  await app.ready();
  return app;
}
