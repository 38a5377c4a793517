/**
 * The budgeted transport, against the local chain behind a counting proxy: it never starts more
 * requests per second than its budget (counted where they arrive), queues instead of being refused,
 * honours a provider's 429 + Retry-After, and never turns waiting for its own budget into a timeout.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createSolanaRpcFromTransport, generateKeyPairSigner, getBase58Decoder, type Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createChainAdapter } from '../../src/chain/chainAdapter.ts';
import { createBudgetedTransport, RpcNotSentError } from '../../src/chain/rpcTransport.ts';
import type { CinderError } from '../../src/errors.ts';
import { startTestChain, type TestChain } from '@cinder/testkit';
import { maxPerSecond, startRpcProxy, type RpcProxy } from './rpcProxy.ts';

let chain: TestChain;
let proxy: RpcProxy;

before(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
});
beforeEach(() => {
  proxy.reset();
  proxy.setMaxRps(undefined);
  proxy.refuse(0, null);
});
after(async () => {
  await proxy.close();
  await chain.close();
});

const rpcWith = (maxRequestsPerSecond: number | undefined, callTimeoutMs = 5000) => {
  const outcomes: string[] = [];
  const transport = createBudgetedTransport({
    url: proxy.url,
    maxRequestsPerSecond,
    callTimeoutMs,
    onRequest: (method, outcome) => outcomes.push(`${method}:${outcome}`),
  });
  return { rpc: createSolanaRpcFromTransport(transport), transport, outcomes };
};

describe('budgeted RPC transport', () => {
  it('never starts more than SOLANA_RPC_MAX_RPS requests in any second; the rest wait their turn and all succeed', async () => {
    const { rpc } = rpcWith(10);
    // Distinct params so that kit's coalescing of identical calls cannot merge them.
    const slots = await Promise.all(Array.from({ length: 30 }, (_, i) => rpc.getBlocks(BigInt(i), BigInt(i)).send()));
    assert.equal(slots.length, 30);
    const arrivals = proxy.requests.filter((r) => r.method === 'getBlocks').map((r) => r.at);
    assert.equal(arrivals.length, 30);
    assert.ok(maxPerSecond(arrivals) <= 10, `${maxPerSecond(arrivals)} requests arrived within one second`);
  });

  it('under a provider that refuses beyond 20 requests/s, a 20 requests/s budget is never refused', async () => {
    proxy.setMaxRps(20);
    const { rpc } = rpcWith(20);
    await Promise.all(Array.from({ length: 50 }, (_, i) => rpc.getBlocks(BigInt(i), BigInt(i)).send()));
    assert.deepEqual(proxy.refusals, []);
    assert.equal(proxy.count('getBlocks'), 50);
  });

  it('without a budget, a provider at 5 requests/s refuses some, and every request still succeeds after the pauses', async () => {
    proxy.setMaxRps(5);
    const { rpc, outcomes } = rpcWith(undefined);
    await Promise.all(Array.from({ length: 30 }, (_, i) => rpc.getBlocks(BigInt(i), BigInt(i)).send()));
    assert.ok(proxy.refusals.length > 0, 'the provider refused some');
    assert.equal(proxy.count('getBlocks'), 30);
    assert.equal(outcomes.filter((o) => o === 'getBlocks:refused').length, proxy.refusals.length);
  });

  it('a 429 with Retry-After: 1 pauses every request for that second, then sends the refused one again', async () => {
    proxy.refuse(1, 1);
    const { rpc, outcomes } = rpcWith(undefined);
    const first = rpc.getBlockHeight().send();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = rpc.getSlot().send();
    await Promise.all([first, second]);
    const refusedAt = proxy.refusals[0]!;
    assert.equal(proxy.refusals.length, 1);
    assert.deepEqual(outcomes.sort(), ['getBlockHeight:ok', 'getBlockHeight:refused', 'getSlot:ok']);
    for (const request of proxy.requests) {
      // A timer never fires early; 5 ms for the two processes' clocks reading at different moments.
      assert.ok(request.at - refusedAt >= 995, `${request.method} arrived ${request.at - refusedAt} ms after the 429`);
    }
  });

  it('landing work (statuses, block height, sends) goes before queued reads of new requests', async () => {
    const { rpc } = rpcWith(2);
    const signature = getBase58Decoder().decode(new Uint8Array(64).fill(7)) as Signature;
    const reads = Array.from({ length: 4 }, (_, i) => rpc.getBlocks(BigInt(i), BigInt(i)).send());
    const status = rpc.getSignatureStatuses([signature]).send();
    await Promise.all([...reads, status]);
    assert.deepEqual(
      proxy.requests.map((r) => r.method),
      ['getBlocks', 'getSignatureStatuses', 'getBlocks', 'getBlocks', 'getBlocks'],
    );
  });

  it('time spent waiting for the budget does not count against the per-request timeout', async () => {
    // 2 per second and a 600 ms timeout: the last of 6 requests waits about 3 s for its turn.
    const { rpc } = rpcWith(2, 600);
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => rpc.getBlocks(BigInt(i), BigInt(i)).send()));
    assert.deepEqual(results.map((r) => r.status), Array(6).fill('fulfilled'));
  });

  it('a request whose caller gives up while it waits is never sent (RpcNotSentError)', async () => {
    const { rpc } = rpcWith(1);
    await rpc.getSlot().send(); // takes this second's turn
    const controller = new AbortController();
    const waiting = rpc.getBlockHeight().send({ abortSignal: controller.signal });
    controller.abort();
    await assert.rejects(waiting, (error: unknown) => error instanceof RpcNotSentError);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(proxy.count('getBlockHeight'), 0);
  });

  it('the adapter answers RPC_UNAVAILABLE only when the deadline passes, not when the budget makes it wait longer than a call timeout', async () => {
    const adapter = createChainAdapter({ rpcUrl: proxy.url, commitment: 'confirmed', maxRequestsPerSecond: 2, callTimeoutMs: 500, maxReadAttempts: 1 });
    const owners = await Promise.all(Array.from({ length: 5 }, async () => (await generateKeyPairSigner()).address));
    const inTime = await Promise.allSettled(
      owners.map((owner) => adapter.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, Date.now() + 10_000)),
    );
    assert.deepEqual(inTime.map((r) => r.status), Array(5).fill('fulfilled'));
    // A deadline shorter than the queue: the ones that cannot get a turn in time are RPC_UNAVAILABLE, never sent.
    proxy.reset();
    const late = await Promise.allSettled(
      owners.map((owner) => adapter.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, Date.now() + 1200)),
    );
    const refused = late.filter((r) => r.status === 'rejected');
    assert.ok(refused.length >= 2, `${refused.length} of 5 gave up`);
    for (const r of refused) assert.equal(((r as PromiseRejectedResult).reason as CinderError).code, 'RPC_UNAVAILABLE');
    // Those still waiting for their turn were never sent (one already out may be cut off at the deadline).
    assert.ok(proxy.count('getTokenAccountsByOwner') < 5);
  });
});
