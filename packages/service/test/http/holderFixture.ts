// Shared setup of the in-process burn tests on the embedded chain and a real Redis: the hooks that start and stop both, test apps on that chain, and funded token holders.
import { after, afterEach, before } from 'node:test';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTokenHolder, startTestChain, type TestChain, type TokenHolder } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

/** The file's chain and Redis, set once the hooks of useChainAndRedis() have run. */
export let chain: TestChain;
export let redis: TestRedis;
const apps: TestApp[] = [];

/**
 * Registers the calling file's hooks: start a chain and a Redis before its tests, clear the chain's
 * faults after each test, and close every app of newApp(), the chain and the Redis at the end.
 */
export function useChainAndRedis(): void {
  before(async () => {
    [chain, redis] = await Promise.all([startTestChain(), startTestRedis()]);
  });
  afterEach(async () => {
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
  });
  after(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await chain.close();
    await redis.stop();
  });
}

/** A test app on the file's chain, closed by the hooks of useChainAndRedis(). */
export async function newApp(overrides: Parameters<typeof createTestApp>[0] = {}) {
  const app = await createTestApp(overrides, { chain });
  apps.push(app);
  return app;
}

export type Holder = TokenHolder;

/** A funded owner on the file's chain with a fresh mint (0 decimals) and 100 tokens of it in its associated account. */
export const createHolder = (): Promise<Holder> => createTokenHolder(chain);
