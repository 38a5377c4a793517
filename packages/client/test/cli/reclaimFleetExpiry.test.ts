/**
 * `cinder reclaim --keys-file F --fee-payer K --destination A --yes` when the blockhash of what it
 * prepared expires before anything lands: the service reaches the chain through a JSON-RPC proxy
 * that, at the service's first sendTransaction, moves the chain 300 slots on (localnet_warpSlots:
 * every blockhash of the first prepare is then past its 150 blocks) before it forwards that send
 * or any later request. So every transaction of the first round is refused or expires without
 * landing, whichever relay group it is in; the command must follow each to its end, prepare the
 * wallets again and relay the new transactions, which land.
 *
 * Asserted on the chain: every account closed once, the destination holding every rent, the fee
 * payer charged exactly the fees of what landed (nothing for the expired round), none of the
 * expired round's signatures known to the chain, and each wallet at 0.
 *
 * Relied on (checked against the chain): an empty account of either token program holds 2,039,280
 * lamports; each transaction costs 5,000 lamports per signature with no priority fee.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createTestApp, createTestKey, getLamports, rpcResult, startTestChain, writeEmptyTokenAccounts, type TestApp } from '@cinder/testkit';
import { cinder, dir, t, url, useCliApp, writeFleetFiles } from './cliFixture.ts';

/** Slots the chain is moved on at the first send: more than a blockhash's 150 blocks and the relay's 32-block margin. */
const WARP_SLOTS = 300;
const WALLETS = 60;
const RENT = 2_039_280n;
const FEE_PER_SIGNATURE = 5_000n;

let warps = 0;

/** A JSON-RPC proxy to `target` that warps the chain once, at the first sendTransaction, holding every request from then until the warp is done. */
async function expiringProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  let warped: Promise<void> | null = null;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (warped === null && body.includes('"sendTransaction"')) {
      warped = rpcResult(target, 'localnet_warpSlots', [WARP_SLOTS]).then(() => {
        warps++;
      });
    }
    if (warped !== null) await warped;
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(await answer.text());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function appBehindExpiringProxy(): Promise<TestApp> {
  const chain = await startTestChain();
  const proxy = await expiringProxy(chain.localnet.rpcUrl);
  const app = await createTestApp({}, { chain, chainAdapter: { rpcUrl: proxy.url } });
  return {
    ...app,
    async close() {
      await app.close();
      await proxy.close();
      await chain.close();
    },
  };
}

useCliApp('cinder-reclaim-fleet-expiry-', { timeoutMs: 300_000, createApp: appBehindExpiringProxy });

interface StateFile {
  transactions: { signature: string; owners: string[]; closedAccounts: string[]; feeLamports: string; status: string }[];
}

describe('a fleet whose first prepare expires before it lands', () => {
  it('is prepared and relayed again: every account closed once, nothing paid for what expired', async (test) => {
    const owners = await Promise.all(Array.from({ length: WALLETS }, () => createTestKey()));
    for (const owner of owners) {
      await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
      await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_2022_PROGRAM_ADDRESS);
    }
    const { feePayer, destination } = await writeFleetFiles('expiry', owners, 1_000_000_000n);
    const payerBefore = await getLamports(t.chain, feePayer.address);

    const run = await cinder(['reclaim', '--keys-file', 'expiry.keys', '--fee-payer', 'expiry.payer.json', '--destination', destination, '--yes'], { url });
    assert.equal(run.code, 0, run.stdout.slice(-2000) + run.stderr.slice(-2000));
    assert.equal(warps, 1, 'the chain was moved past the first blockhash once');
    assert.match(run.stdout, /^Prepared again \(/m);

    const { transactions } = JSON.parse(await readFile(join(dir, 'expiry.keys.reclaim-state.json'), 'utf8')) as StateFile;
    const landed = transactions.filter((tx) => tx.status === 'success');
    const dropped = transactions.filter((tx) => tx.status === 'dropped');
    assert.equal(landed.length + dropped.length, transactions.length, `only landed or dropped: ${transactions.map((tx) => tx.status).join()}`);
    assert.ok(dropped.length >= 2, 'the first round, more than one relay group of it, did nothing');
    assert.equal(new Set(landed.flatMap((tx) => tx.owners)).size, WALLETS, 'every wallet in a transaction that landed');
    const closed = landed.flatMap((tx) => tx.closedAccounts);
    assert.equal(closed.length, 2 * WALLETS);
    assert.equal(new Set(closed).size, 2 * WALLETS, 'each account closed once');

    const statuses = await t.chain.rpc.getSignatureStatuses(dropped.map((tx) => tx.signature as Signature), { searchTransactionHistory: true }).send();
    assert.ok(statuses.value.every((s) => s === null), 'no transaction of the expired round is known to the chain');
    for (const program of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) {
      for (const owner of owners) {
        assert.equal((await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId: program }, { encoding: 'base64' }).send()).value.length, 0);
      }
    }
    assert.equal(await getLamports(t.chain, destination), 2n * BigInt(WALLETS) * RENT, 'every rent at the destination, once');
    const fees = landed.reduce((sum, tx) => sum + FEE_PER_SIGNATURE * BigInt(1 + tx.owners.length), 0n);
    assert.equal(landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), fees, 'the prepare stated the fees of what landed');
    assert.equal(payerBefore - (await getLamports(t.chain, feePayer.address)), fees, 'the fee payer paid for what landed, nothing for what expired');
    for (const owner of owners) assert.equal(await getLamports(t.chain, owner.address), 0n);
    test.diagnostic(`${WALLETS} wallets: ${dropped.length} transactions expired without landing, ${landed.length} landed once prepared again`);
  });
});
