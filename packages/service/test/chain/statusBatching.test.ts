/**
 * The signature tracker at its limit, counted at a proxy in front of the local chain: more than 256
 * transactions in flight are asked about in getSignatureStatuses calls of at most 256 (the RPC's
 * limit). Its own file: signing and sending 260 transactions is the slowest test of the engine.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { MAX_SIGNATURES_PER_STATUS_CALL } from '../../src/chain/signatureTracker.ts';
import { rpcResult } from '@cinder/testkit';
import { getLamports } from '@cinder/testkit';
import { chain, newAdapter, proxy, transfers, useEngineFixture } from './engineFixture.ts';

// No slot clock: signing and sending 260 transactions takes 12 s on an idle machine and over two
// minutes on a loaded one, longer than a blockhash lives on a 400 ms clock. Nothing here is about expiry.
useEngineFixture({ slotIntervalMs: 0 });

const statusCalls = () => proxy.requests.filter((r) => r.method === 'getSignatureStatuses');

describe('one signature tracker for every transaction in flight', () => {
  it('260 transactions in flight: one tick asks about 256 and then the other 4; dropped sends are rebroadcast and land once', { timeout: 600_000 }, async () => {
    // Rebroadcasts every 10 s: 260 dropped sends repeated every 2 s would swamp a loaded machine.
    const adapter = newAdapter({ rebroadcastIntervalMs: 10_000 });
    const destination = (await generateKeyPairSigner()).address;
    const txs = await transfers(260, destination);
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ dropSends: 1_000_000 }]);
    proxy.reset();
    const landing = Promise.all(txs.map((tx) => adapter.sendAndConfirm(tx, Date.now() + 540_000)));
    try {
      // While every send is dropped, all 260 are pending together: wait until every first send is
      // out, then for the status calls of the next tick.
      // Generous bounds (the test's own timeout is 10 min): waiting ends as soon as the condition holds.
      const until = Date.now() + 520_000;
      while (proxy.count('sendTransaction') < 260) {
        assert.ok(Date.now() < until, 'all first sends out');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A tick asks about every signature whose send has been answered: 256 in one call, then 4.
      const tickOfAll = () => {
        const sizes = statusCalls().map((c) => (c.params[0] as unknown[]).length);
        return sizes.some((size, i) => size === MAX_SIGNATURES_PER_STATUS_CALL && sizes[i + 1] === 4);
      };
      while (!tickOfAll()) {
        assert.ok(Date.now() < until, 'a tick asking about all 260 in two calls (256 + 4)');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    }
    const outcomes = await landing;
    assert.ok(outcomes.every((o) => o.kind === 'landed' && o.err === null));
    assert.equal(await getLamports(chain, destination), txs.reduce((sum, _, i) => sum + 1_000_000n + BigInt(i), 0n), 'each landed exactly once');
    assert.ok(statusCalls().every((c) => (c.params[0] as unknown[]).length <= MAX_SIGNATURES_PER_STATUS_CALL));
    assert.ok(proxy.count('sendTransaction') >= 520, 'each dropped send was sent again');
  });
});
