/**
 * SERVER_SECRET and STATE_DIR: the secret is required with REDIS_URL (or SPONSOR_KEYPAIR), so that
 * every instance derives the same record names; it has at least 32 characters; without Redis the
 * stores use it when set, else the one generated under STATE_DIR (kept across restarts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createChainAdapter } from '../../src/chain/chainAdapter.ts';
import type { ChainAdapter } from '../../src/chain/types.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createStores } from '../../src/store/index.ts';
import { startTestChain, type TestChain } from '@cinder/testkit';

const SECRET = 'a-server-secret-of-at-least-32-chars';
const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('SERVER_SECRET and STATE_DIR in the configuration', () => {
  it('REDIS_URL without SERVER_SECRET stops the start, saying why', () => {
    assert.throws(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /SERVER_SECRET .* is required when REDIS_URL or SPONSOR_KEYPAIR is set/);
      return true;
    });
    assert.throws(() => loadConfig({ SPONSOR_KEYPAIR: '/keys/sponsor.json' }), ConfigError);
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', SERVER_SECRET: SECRET }).serverSecret, SECRET);
  });

  it('SERVER_SECRET shorter than 32 characters is refused; unset is allowed without Redis', () => {
    assert.throws(() => loadConfig({ SERVER_SECRET: 'x'.repeat(31) }), (e: unknown) => e instanceof ConfigError && /SERVER_SECRET/.test(e.message));
    const exactly32 = 'q7Vw2LmZ9xKp4RtY8nBc3HjD6sFg1AeU';
    assert.equal(loadConfig({ SERVER_SECRET: exactly32 }).serverSecret, exactly32);
    assert.equal(loadConfig({}).serverSecret, undefined);
  });

  it('STATE_DIR defaults to $XDG_STATE_HOME/cinder, else ~/.local/state/cinder', () => {
    assert.equal(loadConfig({ STATE_DIR: '/var/lib/cinder' }).stateDir, '/var/lib/cinder');
    assert.equal(loadConfig({ XDG_STATE_HOME: '/xdg/state', HOME: '/home/u' }).stateDir, '/xdg/state/cinder');
    assert.equal(loadConfig({ HOME: '/home/u' }).stateDir, '/home/u/.local/state/cinder');
  });
});

describe('the secret the stores use', () => {
  const logger = pino({ level: 'silent' });
  const metrics = createMetrics({ defaultMetrics: false });
  // The journal's directory is the cluster's (its genesis hash, read from this chain).
  let testChain: TestChain;
  let chain: ChainAdapter;
  before(async () => {
    testChain = await startTestChain();
    chain = createChainAdapter({ rpcUrl: testChain.localnet.rpcUrl, commitment: 'confirmed' });
  });
  after(() => testChain.close());

  it('without Redis: SERVER_SECRET when set, else the one kept in STATE_DIR (the same after a restart)', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cinder-secret-'));
    dirs.push(stateDir);
    const given = await createStores({ config: { redisUrl: undefined, serverSecret: SECRET, stateDir }, logger, metrics, chain });
    assert.equal(given.idempotencySecret, SECRET);
    await given.close();
    const generated = await createStores({ config: { redisUrl: undefined, serverSecret: undefined, stateDir }, logger, metrics, chain });
    const again = await createStores({ config: { redisUrl: undefined, serverSecret: undefined, stateDir }, logger, metrics, chain });
    assert.ok(generated.idempotencySecret.length >= 32);
    assert.notEqual(generated.idempotencySecret, SECRET);
    assert.equal(again.idempotencySecret, generated.idempotencySecret);
    await Promise.all([generated.close(), again.close()]);
  });

  it('with Redis and no secret (a Config made by hand): refused', async () => {
    await assert.rejects(
      createStores({ config: { redisUrl: 'redis://127.0.0.1:1', serverSecret: undefined, stateDir: tmpdir() }, logger, metrics, chain }),
      /SERVER_SECRET is required with REDIS_URL/,
    );
  });

  it('a STATE_DIR that cannot be a directory stops the start with a message naming it', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'cinder-secret-'));
    dirs.push(parent);
    const file = join(parent, 'a-file');
    await writeFile(file, '');
    await assert.rejects(
      createStores({ config: { redisUrl: undefined, serverSecret: undefined, stateDir: join(file, 'state') }, logger, metrics, chain }),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.ok(e.message.startsWith(`cannot use STATE_DIR ${join(file, 'state')} for the idempotency journal`), e.message);
        assert.match(e.message, /set STATE_DIR to a writable directory, or use REDIS_URL$/);
        return true;
      },
    );
  });
});
