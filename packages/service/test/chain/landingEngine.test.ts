/**
 * The shared work of the landing engine, counted at a proxy in front of the local chain: account
 * reads of concurrent callers merged into getMultipleAccounts calls (no getBalance), one cached
 * blockhash, and one signature tracker batching every transaction in flight into
 * getSignatureStatuses calls of at most 256, without searchTransactionHistory except for the final
 * look at an expired one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { rpcResult } from '@cinder/testkit';
import { createFundedSigner, getLamports } from '@cinder/testkit';
import { chain, newAdapter, payer, proxy, transfers, useEngineFixture } from './engineFixture.ts';

useEngineFixture();

/** Waits (at most 40 s: a loaded machine) until one getSignatureStatuses call asked about `count` signatures at once. */
async function untilAStatusCallAsksAbout(count: number): Promise<void> {
  const until = Date.now() + 40_000;
  while (!statusCalls().some((c) => (c.params[0] as unknown[]).length === count)) {
    assert.ok(Date.now() < until, `no getSignatureStatuses call asked about ${count} signatures at once`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const statusCalls = () => proxy.requests.filter((r) => r.method === 'getSignatureStatuses');
const searchesHistory = (r: { params: unknown[] }) => (r.params[1] as { searchTransactionHistory?: boolean } | undefined)?.searchTransactionHistory === true;

describe('merged account reads', () => {
  it('concurrent getAccounts and getBalance calls share one getMultipleAccounts call, each caller gets its own accounts', async () => {
    const adapter = newAdapter();
    const funded = await Promise.all(Array.from({ length: 6 }, () => createFundedSigner(chain, 3_000_000_000n)));
    const empty = (await generateKeyPairSigner()).address;
    const deadline = Date.now() + 10_000;
    proxy.reset();
    const [pairs, balances, missing] = await Promise.all([
      Promise.all(funded.slice(0, 3).map(({ signer }) => adapter.getAccounts([signer.address, payer.address], deadline))),
      Promise.all(funded.slice(3).map(({ signer }) => adapter.getBalance(signer.address, deadline))),
      adapter.getBalance(empty, deadline),
    ]);
    assert.equal(proxy.count('getMultipleAccounts'), 1);
    assert.equal(proxy.count('getBalance'), 0);
    assert.deepEqual(proxy.requests[0]!.params[0], [...new Set([...funded.slice(0, 3).flatMap(({ signer }) => [signer.address, payer.address]), ...funded.slice(3).map(({ signer }) => signer.address), empty])]);
    for (const [i, [own, shared]] of pairs.entries()) {
      assert.equal(own!.address, funded[i]!.signer.address);
      assert.equal(own!.lamports, 3_000_000_000n);
      assert.equal(shared!.address, payer.address);
    }
    assert.deepEqual(balances, [3_000_000_000n, 3_000_000_000n, 3_000_000_000n]);
    assert.equal(missing, 0n, 'a missing account holds 0 lamports');
  });

  it('reads that arrive while two calls are out wait and go together in the next call', async () => {
    const adapter = newAdapter();
    const addresses = await Promise.all(Array.from({ length: 5 }, async () => (await generateKeyPairSigner()).address));
    const deadline = Date.now() + 30_000;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Every answer takes 3 s: the first two reads are out, the next three arrive spread out meanwhile.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ delayMs: 3000 }]);
    const reads = [adapter.getAccounts([addresses[0]!], deadline)];
    await pause(30);
    reads.push(adapter.getAccounts([addresses[1]!], deadline));
    for (const address of addresses.slice(2)) {
      await pause(30);
      reads.push(adapter.getAccounts([address], deadline));
    }
    await Promise.all(reads);
    const calls = proxy.requests.filter((r) => r.method === 'getMultipleAccounts').map((r) => r.params[0]);
    assert.deepEqual(calls, [[addresses[0]], [addresses[1]], addresses.slice(2)]);
  });

  it('more than 100 addresses are split into getMultipleAccounts calls of at most 100 (the RPC limit)', async () => {
    const adapter = newAdapter();
    const addresses = await Promise.all(Array.from({ length: 150 }, async () => (await generateKeyPairSigner()).address));
    // Accounts at both ends of each call, each with its own balance, so that an answer merged in
    // the wrong order shows. The two calls go out at once: the order they reach the node is free.
    const funded = new Map<number, bigint>([[0, 1_000_001n], [99, 1_000_002n], [100, 1_000_003n], [149, 1_000_004n]]);
    for (const [index, lamports] of funded) {
      const { signer } = await createFundedSigner(chain, lamports);
      addresses[index] = signer.address;
    }
    proxy.reset();
    const accounts = await adapter.getAccounts(addresses, Date.now() + 10_000);
    assert.equal(accounts.length, 150);
    accounts.forEach((account, i) => {
      const lamports = funded.get(i);
      if (lamports === undefined) assert.equal(account, null, `account ${i} does not exist`);
      else assert.deepEqual([account?.address, account?.lamports], [addresses[i], lamports], `account ${i} in the caller's order`);
    });
    const calls = proxy.requests.filter((r) => r.method === 'getMultipleAccounts').map((r) => r.params[0] as string[]);
    assert.equal(calls.length, 2, 'two calls');
    assert.ok(calls.every((c) => c.length <= 100), `calls of ${calls.map((c) => c.length).join(' and ')} addresses`);
    assert.deepEqual(calls.flat().sort(), [...addresses].sort(), 'together they ask about every address once');
  });
});

describe('shared blockhash', () => {
  it('concurrent callers share one getLatestBlockhash, and later callers get the cached one', async () => {
    const adapter = newAdapter({ blockhashRefreshAfterMs: 60_000, blockhashMaxAgeMs: 60_000 });
    const deadline = Date.now() + 10_000;
    const first = await Promise.all(Array.from({ length: 10 }, () => adapter.getLatestBlockhash(deadline)));
    const later = await adapter.getLatestBlockhash(deadline);
    assert.equal(proxy.count('getLatestBlockhash'), 1);
    for (const lifetime of [...first, later]) assert.deepEqual(lifetime, first[0]);
  });

  it('a hash whose lifetime is mostly used up (by block height) is never handed out again', async () => {
    const adapter = newAdapter({ blockhashRefreshAfterMs: 60_000, blockhashMaxAgeMs: 60_000 });
    const deadline = Date.now() + 10_000;
    const old = await adapter.getLatestBlockhash(deadline);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [60]);
    await adapter.getBlockHeight(deadline); // anyone seeing the height tells the cache
    const fresh = await adapter.getLatestBlockhash(deadline);
    assert.equal(proxy.count('getLatestBlockhash'), 2);
    assert.notEqual(fresh.blockhash, old.blockhash);
    assert.ok(fresh.lastValidBlockHeight > old.lastValidBlockHeight);
  });
});

describe('one signature tracker for every transaction in flight', () => {
  it('40 concurrent landings: one status call asks about all of them, without searchTransactionHistory; each lands once', async () => {
    const adapter = newAdapter();
    const destination = (await generateKeyPairSigner()).address;
    const txs = await transfers(40, destination);
    // Every send dropped until one status call has asked about all 40 (all in flight together,
    // whatever the machine's speed); then they land.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ dropSends: 1_000_000 }]);
    proxy.reset();
    const landing = Promise.all(txs.map((tx) => adapter.sendAndConfirm(tx, Date.now() + 20_000)));
    await untilAStatusCallAsksAbout(40);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    const outcomes = await landing;
    assert.ok(outcomes.every((o) => o.kind === 'landed' && o.err === null));
    assert.equal(await getLamports(chain, destination), txs.reduce((sum, _, i) => sum + 1_000_000n + BigInt(i), 0n), 'each landed once');
    const calls = statusCalls();
    const sizes = calls.map((c) => (c.params[0] as unknown[]).length);
    assert.equal(Math.max(...sizes), 40, 'one call asks about every signature in flight');
    assert.ok(calls.length < sizes.reduce((a, b) => a + b, 0) / 4, `${calls.length} calls for ${sizes.reduce((a, b) => a + b, 0)} signature looks`);
    assert.equal(calls.filter(searchesHistory).length, 0, 'no searchTransactionHistory while they are recent');
    assert.ok(proxy.count('getBlockHeight') <= calls.length, 'at most one block height per tick');
  });

  it('a transaction that never lands: expired after one final look with searchTransactionHistory, and only that one', async () => {
    const adapter = newAdapter();
    const [tx] = await transfers(1, (await generateKeyPairSigner()).address);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ dropSends: 1_000_000 }]);
    const landing = adapter.sendAndConfirm(tx!, Date.now() + 20_000);
    while (statusCalls().length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [200]);
    assert.deepEqual(await landing, { kind: 'expired' });
    const calls = statusCalls();
    assert.equal(calls.filter(searchesHistory).length, 1);
    assert.ok(searchesHistory(calls.at(-1)!), 'the history search is the last look');
  });

  it('the same signature tracked twice (a relay of the same transaction) is sent and polled as one', async () => {
    const adapter = newAdapter();
    const [tx] = await transfers(1, (await generateKeyPairSigner()).address);
    const [a, b] = await Promise.all([adapter.sendAndConfirm(tx!, Date.now() + 10_000), adapter.sendAndConfirm(tx!, Date.now() + 10_000)]);
    assert.deepEqual(a, b);
    assert.equal(a!.kind, 'landed');
    assert.equal(proxy.count('sendTransaction'), 1);
  });
});

describe('WebSocket confirmation (SOLANA_WS_URL)', () => {
  it('subscribed signatures settle on their notification: no status polling while they land', async () => {
    // Rebroadcast (and the safety-net poll of subscribed signatures) once a minute: never in this test.
    const adapter = newAdapter({ wsUrl: chain.localnet.wsUrl, rebroadcastIntervalMs: 60_000 });
    const destination = (await generateKeyPairSigner()).address;
    const txs = await transfers(20, destination);
    proxy.reset();
    const outcomes = await Promise.all(txs.map((tx) => adapter.sendAndConfirm(tx, Date.now() + 30_000)));
    assert.ok(outcomes.every((o) => o.kind === 'landed' && o.err === null && o.slot > 0n));
    assert.equal(await getLamports(chain, destination), txs.reduce((sum, _, i) => sum + 1_000_000n + BigInt(i), 0n), 'each landed once');
    assert.equal(proxy.count('sendTransaction'), 20);
    assert.equal(proxy.count('getSignatureStatuses'), 0);
  });

  it('falls back to polling when the WebSocket cannot be reached', async () => {
    const adapter = newAdapter({ wsUrl: 'ws://127.0.0.1:9' });
    const [tx] = await transfers(1, (await generateKeyPairSigner()).address);
    const outcome = await adapter.sendAndConfirm(tx!, Date.now() + 20_000);
    assert.equal(outcome.kind, 'landed');
    assert.ok(proxy.count('getSignatureStatuses') > 0);
  });
});
