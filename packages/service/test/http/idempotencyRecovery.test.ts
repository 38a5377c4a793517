/**
 * Idempotency records hold the signatures a burn is about to send (money rule 6), on the embedded
 * chain, with the in-memory store and with a real Redis:
 * - a retry while the first request is still landing its transaction answers at once with the
 *   signature and its current status (not 409), and the chain shows one burn and one fee;
 * - when the signatures cannot be recorded (Redis gone), nothing is sent (503);
 * - records are named and fingerprinted by HMAC-SHA256 with SERVER_SECRET, never a plain hash
 *   (which would confirm a guessed private key).
 *
 * Fault used: `failAfterSend` makes the chain answer 503 to everything once a sendTransaction has
 * been executed, so the first request cannot confirm; the moment a plain getSlot answers 503 is
 * the moment the burn was executed.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { fetchMint } from '@solana-program/token';
import { TEST_SERVER_SECRET, type TestApp } from '@cinder/testkit';
import { getLamports } from '@cinder/testkit';
import { postRaw, rpcResult } from '@cinder/testkit';
import { chain, createHolder, newApp, redis, useChainAndRedis, type Holder } from './holderFixture.ts';

const RENT_LAMPORTS = 2_039_280n;
const FEE_LAMPORTS = 5_000n;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

useChainAndRedis();

const bodyOf = (h: Holder) => ({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key });
const burn = (app: TestApp, h: Holder, idempotencyKey: string) =>
  app.app.inject({ method: 'POST', url: '/api/burn_tokens', headers: { 'idempotency-key': idempotencyKey }, payload: bodyOf(h) });

async function chainState(h: Holder) {
  const signatures = await chain.rpc.getSignaturesForAddress(h.signer.address, { limit: 1000 }).send();
  return {
    owner: await getLamports(chain, h.signer.address),
    supply: (await fetchMint(chain.rpc, h.mint)).data.supply,
    transactions: signatures.length,
    newest: signatures[0]!.signature as string,
  };
}

/** Resolves once the chain has executed a sendTransaction under `failAfterSend`. */
async function untilSent(timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await postRaw(chain.localnet.rpcUrl, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }));
    if (status === 503) return;
    if (Date.now() > deadline) throw new Error('the burn was never sent');
    await sleep(20);
  }
}

let counter = 0;
const newKey = () => `recovery-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`;

function behaviour(store: 'memory' | 'redis') {
  let app: TestApp;
  before(async () => {
    app = await newApp({ operationDeadlineMs: 20_000, ...(store === 'redis' ? { redisUrl: redis.url } : {}) });
  });

  it('a retry while the transaction is landing answers with its signature and current status, never 409', async () => {
    const h = await createHolder();
    const before = await chainState(h);
    const key = newKey();
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ failAfterSend: true }]);
    const running = burn(app, h, key);
    await untilSent();

    // The RPC is lost: the status cannot be read, but the signature is known.
    const lost = await burn(app, h, key);
    assert.equal(lost.statusCode, 200, lost.body);
    assert.equal(lost.headers['idempotent-replayed'], 'true');
    const lostBody = lost.json();
    assert.equal(lostBody.status, 'pending');
    assert.equal(lostBody.details.recovered, true);
    assert.equal(lostBody.details.signatures.length, 1);
    assert.equal(lostBody.tx_hash, lostBody.transactionId);
    assert.match(lostBody.message, /could not be looked up now .*do not send the burn again/);

    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    const after = await chainState(h);
    assert.equal(lostBody.transactionId, after.newest, 'the signature answered is the one that landed');
    assert.deepEqual(
      { owner: after.owner, supply: after.supply, transactions: after.transactions },
      { owner: before.owner + RENT_LAMPORTS - FEE_LAMPORTS, supply: 0n, transactions: before.transactions + 1 },
    );

    // Once the chain answers again, the retry says what became of it.
    let status = 'pending';
    let retry: Awaited<ReturnType<typeof burn>> | undefined;
    for (let i = 0; i < 100 && status === 'pending'; i++) {
      retry = await burn(app, h, key);
      // The first request may have finished meanwhile; its stored answer is then the replay.
      status = retry.json().status;
      if (status === 'pending') await sleep(50);
    }
    assert.equal(retry!.statusCode, 200, retry!.body);
    assert.equal(status, 'success');
    assert.equal(retry!.json().transactionId, lostBody.transactionId);

    const first = await running;
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().transactionId, lostBody.transactionId);
    assert.equal(first.json().status, 'success');
    // The finished answer is stored and replayed as it was.
    const replay = await burn(app, h, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    assert.equal((await chainState(h)).transactions, before.transactions + 1, 'no retry sent anything');
  });
}

describe('sent signatures in the record, in-memory store', () => behaviour('memory'));
describe('sent signatures in the record, Redis store', () => behaviour('redis'));

describe('when the signatures cannot be recorded', () => {
  it('Redis gone between the start of the burn and its send: 503, nothing sent', async () => {
    const app = await newApp({ redisUrl: redis.url });
    const h = await createHolder();
    const before = await chainState(h);
    // Slow reads, so that Redis dies after the record was begun and before the send.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ delayMs: 1500 }]);
    const running = burn(app, h, newKey());
    await sleep(400);
    await redis.kill();
    try {
      const answer = await running;
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.json().code, 'SERVICE_UNAVAILABLE');
      // The lock's hold for landing or the record of the signatures: whichever meets Redis first.
      assert.match(answer.json().detail, /(could not be recorded before sending it|cannot be run safely); nothing was sent/);
    } finally {
      await redis.restart();
    }
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    assert.deepEqual(await chainState(h), before, 'nothing sent, no fee');
  });
});

describe('record names and fingerprints', () => {
  it('are HMAC-SHA256 with SERVER_SECRET, never a plain SHA-256 that would confirm a guessed key', async () => {
    const app = await newApp({ redisUrl: redis.url });
    const h = await createHolder();
    const key = newKey();
    const answer = await burn(app, h, key);
    assert.equal(answer.statusCode, 200, answer.body);

    const hmac = (...parts: string[]) => createHmac('sha256', TEST_SERVER_SECRET).update(parts.join('\n'), 'utf8').digest('hex');
    const sha256 = (...parts: string[]) => createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex');
    // Scoped by cluster (the chain's genesis hash), client (one without API keys) and owner.
    const cluster = await chain.rpc.getGenesisHash().send();
    const name = hmac('cinder-idempotency-key', cluster, 'anonymous', h.signer.address, key);
    const plainName = sha256('cinder-idempotency-key', cluster, 'anonymous', h.signer.address, key);
    assert.match(await redis.command(`EXISTS cinder:idem:${plainName}`), /^:0/);
    const raw = await redis.command(`GET cinder:idem:${name}`);
    const record = JSON.parse(raw.slice(raw.indexOf('\r\n') + 2).trim()) as { state: string; fp: string };
    assert.equal(record.state, 'done');
    // The body as the route sees it (the schema fills in allowNetLoss: false), keys sorted.
    const body = JSON.stringify({ allowNetLoss: false, mint: h.mint, priorityFee: 0, userPrivateKey: h.key });
    assert.equal(record.fp, hmac('cinder-idempotency-body', name, body));
    // What the records used to hold: sha256(name, mint, priorityFee, key) — a guessable check of a key.
    assert.notEqual(record.fp, sha256('cinder-idempotency-body', name, JSON.stringify([h.mint, 0, h.key])));
    assert.ok(!raw.includes(h.key) && !raw.includes(key), 'neither the private key nor the Idempotency-Key is stored');

    // An instance with another secret derives other names: it cannot read (or guess) these records.
    const other = await newApp({ redisUrl: redis.url, serverSecret: 'another-secret-of-at-least-32-characters' });
    const elsewhere = await burn(other, h, key);
    assert.equal(elsewhere.headers['idempotent-replayed'], undefined);
  });
});
