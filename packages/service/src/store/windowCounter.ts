/**
 * A weighted fixed-window budget: `take(key, n, max, windowMs)` takes `n` units when they fit in
 * what is left of the window, and nothing when they do not (a request the budget cannot cover
 * does not use it up). The window starts with the first unit taken, as in @fastify/rate-limit's
 * stores, so request counts and unit budgets behave alike. Used for the wallets-per-minute budget
 * of generate_wallets, which counts `n`, not requests.
 *
 * Two implementations with the same behaviour: in process memory (one instance) and in Redis
 * (one atomic Lua script, shared by every instance).
 */
import type { Redis } from 'ioredis';

export interface TakeResult {
  allowed: boolean;
  /** Units used in the window after this call. */
  used: number;
  /** Milliseconds until the window resets. */
  ttlMs: number;
}

export interface WindowCounter {
  take(key: string, n: number, max: number, windowMs: number): Promise<TakeResult>;
}

export function createMemoryWindowCounter(options: { maxKeys?: number; now?: () => number } = {}): WindowCounter {
  const maxKeys = options.maxKeys ?? 100_000;
  // Injectable for tests that follow windows through their resets without waiting for them.
  const clock = options.now ?? Date.now;
  const windows = new Map<string, { used: number; resetAt: number }>();
  let lastSweep = 0;

  function sweep(now: number) {
    // Finished windows go at most once every 10 s; when the map is full, the oldest windows go
    // (Map keeps insertion order), so a flood of new clients costs O(1) per request.
    if (now - lastSweep >= 10_000) {
      lastSweep = now;
      for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
    }
    for (const key of windows.keys()) {
      if (windows.size < maxKeys) break;
      windows.delete(key);
    }
  }

  return {
    async take(key, n, max, windowMs) {
      const now = clock();
      sweep(now);
      let window = windows.get(key);
      if (!window || window.resetAt <= now) {
        windows.delete(key);
        window = { used: 0, resetAt: now + windowMs };
      }
      const ttlMs = window.resetAt - now;
      if (window.used + n > max) {
        if (window.used > 0) windows.set(key, window);
        return { allowed: false, used: window.used, ttlMs };
      }
      window.used += n;
      windows.set(key, window);
      return { allowed: true, used: window.used, ttlMs };
    },
  };
}

const TAKE_SCRIPT = `
local key = KEYS[1]
local n = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = redis.call('PTTL', key)
local used = 0
if ttl <= 0 then
  redis.call('DEL', key)
  ttl = window
else
  used = tonumber(redis.call('GET', key))
end
if used + n > max then
  return {0, used, ttl}
end
used = redis.call('INCRBY', key, n)
if used == n then
  redis.call('PEXPIRE', key, window)
end
return {1, used, ttl}
`;

interface TakeCommand {
  cinderWindowTake(key: string, n: number, max: number, windowMs: number): Promise<[number, number, number]>;
}

export function createRedisWindowCounter(redis: Redis, options: { prefix?: string } = {}): WindowCounter {
  const prefix = options.prefix ?? 'cinder:budget:';
  if (!(redis as unknown as Partial<TakeCommand>).cinderWindowTake) {
    redis.defineCommand('cinderWindowTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }
  const client = redis as unknown as TakeCommand;
  return {
    async take(key, n, max, windowMs) {
      const [allowed, used, ttlMs] = await client.cinderWindowTake(prefix + key, n, max, windowMs);
      return { allowed: allowed === 1, used, ttlMs };
    },
  };
}
