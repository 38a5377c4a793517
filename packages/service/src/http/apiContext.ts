/**
 * The API as one Fastify plugin context under /api: authentication (./auth.ts) and rate limits
 * (./rateLimit.ts) are hooks of the context, so every route registered in it, and every 404 or
 * 405 under /api, is authenticated and counted, whatever the route declares. A route declares
 * only what is its own (its budget, its owners field: ./routeConfig.ts).
 */
import type { Auth } from './auth.ts';
import type { RateLimits } from './rateLimit.ts';
import { notFoundError } from './edge.ts';
import { sendProblem } from './problem.ts';
import type { CinderApp } from './types.ts';

export const API_PREFIX = '/api';

export async function registerApiContext(
  app: CinderApp,
  guards: { auth: Pick<Auth, 'requireApiKey'>; rateLimits: Pick<RateLimits, 'limitApi'> },
  routes: (api: CinderApp) => void,
): Promise<void> {
  await app.register(
    async (api: CinderApp) => {
      guards.auth.requireApiKey(api);
      guards.rateLimits.limitApi(api);
      // 404, or 405 with Allow, as at the root, but inside the context: counted and authenticated.
      api.setNotFoundHandler((request, reply) => sendProblem(reply, notFoundError(app, request)));
      routes(api);
    },
    { prefix: API_PREFIX },
  );
}
