/**
 * The /api plugin context guards every route registered in it: a route that declares nothing (no
 * budget, no flag) is still authenticated and counted against the general budget, as is a 404
 * under /api, while a path outside /api is neither.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createMetrics } from '../../src/metrics.ts';
import { registerApiContext } from '../../src/http/apiContext.ts';
import { registerAuth } from '../../src/http/auth.ts';
import { errorHandler } from '../../src/http/problem.ts';
import { registerRateLimits } from '../../src/http/rateLimit.ts';
import type { CinderApp } from '../../src/http/types.ts';
import { createMemoryWindowCounter } from '../../src/store/windowCounter.ts';

const KEY = 'a-test-api-key-of-some-length';
const STATUS_PER_MIN = 3;

describe('a route of the /api context that declares nothing', () => {
  let app: CinderApp;
  let handled = 0;
  before(async () => {
    app = Fastify().withTypeProvider<TypeBoxTypeProvider>() as unknown as CinderApp;
    app.setErrorHandler(errorHandler);
    const config = { ...loadConfig({ SOLANA_RPC_URL: 'https://api.devnet.solana.com' }), apiKeys: [KEY], rateLimitStatusPerMin: STATUS_PER_MIN };
    const auth = registerAuth(app, { config });
    const rateLimits = await registerRateLimits(app, { config, logger: pino({ level: 'silent' }), metrics: createMetrics(), redis: null, counters: createMemoryWindowCounter() });
    await registerApiContext(app, { auth, rateLimits }, (api) => {
      api.get('/unflagged', async () => {
        handled += 1;
        return { ok: true };
      });
    });
    app.get('/outside', async () => ({ ok: true }));
    await app.ready();
  });
  after(() => app.close());

  it('is refused without a key, counted, and answered with one until the general budget is spent', async () => {
    const refused = await app.inject({ method: 'GET', url: '/api/unflagged', remoteAddress: '10.0.0.1' });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['ratelimit-limit'], String(STATUS_PER_MIN));
    assert.equal(refused.headers['ratelimit-remaining'], String(STATUS_PER_MIN - 1));
    assert.equal(handled, 0);

    const headers = { authorization: `Bearer ${KEY}` };
    const answers = [];
    for (let i = 0; i < STATUS_PER_MIN + 1; i++) answers.push(await app.inject({ method: 'GET', url: '/api/unflagged', headers, remoteAddress: '10.0.0.2' }));
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429]);
    assert.deepEqual(answers.map((a) => a.headers['ratelimit-remaining']), ['2', '1', '0', '0']);
    assert.equal(answers[3]!.json().code, 'RATE_LIMITED');
    assert.equal(handled, STATUS_PER_MIN);
  });

  it('guards a 404 under /api the same way, and leaves a path outside /api alone', async () => {
    const missing = await app.inject({ method: 'GET', url: '/api/nothing-here', remoteAddress: '10.0.0.3' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.headers['ratelimit-remaining'], String(STATUS_PER_MIN - 1));
    const outside = await app.inject({ method: 'GET', url: '/outside', remoteAddress: '10.0.0.3' });
    assert.equal(outside.statusCode, 200);
    assert.equal(outside.headers['ratelimit-limit'], undefined);
  });
});
