/**
 * Whose an idempotency record is, on the real app and real chains:
 * - by owner: without API keys, two owners that use the same Idempotency-Key each get their own
 *   record (no 400 IDEMPOTENCY_KEY_REUSED that would tell one the other used it), and an owner's
 *   retry from another IP address still finds its record; with API keys, by API key AND owner;
 * - by cluster (its genesis hash): a record made against one chain never answers against another,
 *   neither in one Redis shared by both nor in one STATE_DIR (the journal of another cluster is
 *   not "recovered"); an instance of the same cluster still finds it after a restart.
 * The "other cluster" is a second embedded chain holding copies of the same accounts, so that the
 * very same request (same key, same mint) is valid on both: only the cluster tells them apart.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import type { Config } from '../../src/config.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTokenHolder, startTestChain, type TestChain, type TokenHolder } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

let chain: TestChain;
let otherChain: TestChain;
let redis: TestRedis;
const apps: TestApp[] = [];
const dirs: string[] = [];

before(async () => {
  [chain, otherChain, redis] = await Promise.all([startTestChain(), startTestChain(), startTestRedis()]);
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await Promise.all([chain.close(), otherChain.close(), redis.stop()]);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function newApp(overrides: Partial<Config> = {}, on = chain): Promise<TestApp> {
  const app = await createTestApp(overrides, { chain: on });
  apps.push(app);
  return app;
}

let keyCounter = 0;
const newKey = () => `scope-${process.pid}-${++keyCounter}`;

function burn(app: TestApp, h: TokenHolder, idempotencyKey: string, options: { remoteAddress?: string; apiKey?: string; priorityFee?: number } = {}) {
  return app.app.inject({
    method: 'POST',
    url: '/api/burn_tokens',
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey, ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) },
    payload: JSON.stringify({ mint: h.mint, priorityFee: options.priorityFee ?? 0, userPrivateKey: h.key }),
  });
}

const supplyOn = async (on: TestChain, mint: Address) => (await fetchMint(on.rpc, mint)).data.supply;

/** The holder's owner, mint and token account as they are on `chain`, written into `otherChain` (test-only localnet_setAccount). */
async function copyToOtherChain(h: TokenHolder): Promise<void> {
  for (const address of [h.signer.address, h.mint, h.ata]) {
    const { value } = await chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send();
    assert.ok(value, `${address} exists`);
    await rpcResult(otherChain.localnet.rpcUrl, 'localnet_setAccount', [
      address,
      { lamports: Number(value.lamports), data: value.data[0], owner: value.owner, executable: value.executable },
    ]);
  }
}

describe('records are the owner\'s', () => {
  it('without API keys: another owner with the same Idempotency-Key gets its own burn; a retry from a new IP address finds its record', async () => {
    const app = await newApp();
    const [alice, bob] = await Promise.all([createTokenHolder(chain), createTokenHolder(chain)]);
    const key = newKey(); // a short, guessable key, as a counter would make

    const first = await burn(app, alice, key, { remoteAddress: '10.0.0.1' });
    assert.equal(first.statusCode, 200, first.body);
    // Bob, elsewhere, picks the same key: his own burn, not a 400 that would tell him Alice used it.
    const bobs = await burn(app, bob, key, { remoteAddress: '10.0.0.2' });
    assert.equal(bobs.statusCode, 200, bobs.body);
    assert.equal(bobs.headers['idempotent-replayed'], undefined);
    assert.notEqual(bobs.json().transactionId, first.json().transactionId);
    assert.equal(await supplyOn(chain, bob.mint), 0n, 'Bob\'s tokens were burned');

    // Alice's retry after a network failure, from a new address: her first answer, nothing sent again.
    const retry = await burn(app, alice, key, { remoteAddress: '10.0.0.3' });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.body, first.body);
    // Within one owner's records a changed body is still a reuse.
    const changed = await burn(app, alice, key, { remoteAddress: '10.0.0.3', priorityFee: 0.000001 });
    assert.equal(changed.statusCode, 400, changed.body);
    assert.equal(changed.json().code, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('with API keys: by API key and owner', async () => {
    const app = await newApp({ apiKeys: ['client-a', 'client-b'] });
    const [alice, bob] = await Promise.all([createTokenHolder(chain), createTokenHolder(chain)]);
    const key = newKey();
    const a = await burn(app, alice, key, { apiKey: 'client-a' });
    assert.equal(a.statusCode, 200, a.body);
    // The same client (one API key for a whole service's users) and key, another owner: its own record.
    const b = await burn(app, bob, key, { apiKey: 'client-a' });
    assert.equal(b.statusCode, 200, b.body);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    // The same owner through another API key is another client's record: it runs (and finds nothing left to burn).
    const c = await burn(app, alice, key, { apiKey: 'client-b' });
    assert.equal(c.headers['idempotent-replayed'], undefined);
    assert.equal(c.json().code, 'NO_TOKEN_ACCOUNT', c.body);
    assert.equal((await burn(app, alice, key, { apiKey: 'client-a' })).body, a.body);
  });
});

describe('records are the cluster\'s', () => {
  it('one Redis for two clusters: a record of one never answers on the other', async () => {
    const [onFirst, onOther] = await Promise.all([newApp({ redisUrl: redis.url }), newApp({ redisUrl: redis.url }, otherChain)]);
    const h = await createTokenHolder(chain);
    await copyToOtherChain(h);
    const key = newKey();
    const first = await burn(onFirst, h, key);
    assert.equal(first.statusCode, 200, first.body);
    // The same request on the other cluster burns there: the first cluster's answer would name a
    // signature that does not exist on it.
    const other = await burn(onOther, h, key);
    assert.equal(other.statusCode, 200, other.body);
    assert.equal(other.headers['idempotent-replayed'], undefined);
    // (Its signature may equal the first one's: LiteSVM's blockhashes are the same sequence on every
    // chain, so the same burn at the same slot is the same transaction. The burn on the other chain
    // is what proves the record was not used.)
    assert.equal(await supplyOn(otherChain, h.mint), 0n);
    // Each cluster keeps its own record.
    assert.equal((await burn(onFirst, h, key)).body, first.body);
    assert.equal((await burn(onOther, h, key)).body, other.body);
  });

  it('one STATE_DIR for two clusters: the journal of one is not recovered by the other; the same cluster recovers it', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cinder-scope-'));
    dirs.push(stateDir);
    const h = await createTokenHolder(chain);
    await copyToOtherChain(h);
    const key = newKey();
    const first = await newApp({ stateDir }); // the journal outlives it: stateDir is the test's
    const answer = await burn(first, h, key);
    assert.equal(answer.statusCode, 200, answer.body);
    apps.splice(apps.indexOf(first), 1);
    await first.close();

    const onOther = await newApp({ stateDir }, otherChain);
    const other = await burn(onOther, h, key);
    assert.equal(other.statusCode, 200, other.body);
    assert.equal(other.headers['idempotent-replayed'], undefined, 'not answered from the other cluster\'s journal');
    assert.doesNotMatch(onOther.logs(), /recovered/);
    assert.equal(await supplyOn(otherChain, h.mint), 0n);
    const clusters = (await readdir(join(stateDir, 'idempotency'))).sort();
    assert.equal(clusters.length, 2, 'one journal directory per cluster');

    // A restart against the first cluster finds its record.
    const again = await newApp({ stateDir });
    const replay = await burn(again, h, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, answer.body);
    assert.match(again.logs(), /idempotency records of this cluster recovered from the journal/);
  });
});
