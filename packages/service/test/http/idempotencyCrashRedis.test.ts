/** Crash and retry with the Redis store: a new instance on the same Redis; see crashHarness.ts. */
import { describe, it } from 'node:test';
import { TEST_SERVER_SECRET } from '@cinder/testkit';
import { assertRecovered, burnAndCrash, createHolder, newKey, redis, restart, startServer } from './crashHarness.ts';

describe('a retry after kill -9, Redis store', () => {
  it('a new instance on the same Redis answers with the signature that landed and its status', async () => {
    const env = { REDIS_URL: redis.url, SERVER_SECRET: TEST_SERVER_SECRET, BURN_DEADLINE_MS: '60000' };
    const h = await createHolder();
    const key = newKey();
    const landed = await burnAndCrash(await startServer(env), h, key);
    const restarted = await restart({ redisUrl: redis.url, serverSecret: TEST_SERVER_SECRET });
    await assertRecovered(restarted, h, key, landed);
  });
});
