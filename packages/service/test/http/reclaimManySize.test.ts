/**
 * A keyless many-owner prepare is refused for its size from the packing, before any simulation:
 * it needs no key, so its owners may be strangers' wallets, and the operator's RPC must not pay for
 * a job that is then refused. Three owners of 2,500 empty accounts each (written straight into the
 * chain's state) need more transactions than one prepare holds; the RPC calls are counted where they
 * reach the chain.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { createFundedSigner, createTestApp, rpcResult, startTestChain, writeEmptyTokenAccounts, type TestApp, type TestChain } from '@cinder/testkit';
import { MAX_PREPARED_TRANSACTIONS } from '../../src/operations/reclaimMany.ts';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';

const OWNERS = 3;
const ACCOUNTS_PER_OWNER = 2500;
/** What the refusal may cost: 2 getTokenAccountsByOwner per owner, one getMultipleAccounts, one blockhash, and slack for a refresh. */
const MAX_RPC_CALLS = 10;

let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let owners: Address[];
let feePayer: Address;

before(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
  t = await createTestApp({}, { chain, chainAdapter: { rpcUrl: proxy.url } });
  owners = await Promise.all(Array.from({ length: OWNERS }, async () => (await generateKeyPairSigner()).address));
  await Promise.all(owners.map((owner) => writeEmptyTokenAccounts(chain, owner, ACCOUNTS_PER_OWNER)));
  // A fee payer that could pay every fee: the refusal is for the size alone.
  feePayer = (await createFundedSigner(chain, 100_000_000_000n)).signer.address;
});
after(async () => {
  await t?.close();
  await proxy?.close();
  await chain?.close();
});

describe('POST /api/reclaim_rent/prepare with owners, over the transactions one prepare holds', () => {
  it(`is refused after at most ${MAX_RPC_CALLS} RPC calls, none a simulation`, async () => {
    const destination = (await generateKeyPairSigner()).address;
    proxy.reset();
    const response = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owners, feePayer, destination } });
    const calls = proxy.requests.map((r) => r.method);
    assert.equal(response.statusCode, 400, response.body.slice(0, 500));
    const body = response.json();
    assert.equal(body.code, 'VALIDATION_FAILED');
    const needed = Number(/need (\d+) transactions/.exec(body.detail)?.[1]);
    assert.ok(needed > MAX_PREPARED_TRANSACTIONS, body.detail);
    assert.match(body.detail, new RegExp(`at most ${MAX_PREPARED_TRANSACTIONS}\\b`));
    assert.deepEqual(body.errors.map((e: { field: string }) => e.field), ['owners']);
    assert.equal(proxy.count('simulateTransaction'), 0, calls.join(', '));
    assert.ok(calls.length <= MAX_RPC_CALLS, `${calls.length} RPC calls: ${calls.join(', ')}`);
    assert.equal(proxy.count('getTokenAccountsByOwner'), 2 * OWNERS);
    console.log(`refused (${needed} transactions) after ${calls.length} RPC calls: ${calls.join(', ')}`);
  });

  it('prepares the same wallets when fewer of them fit: one owner of 2,500 accounts', async () => {
    const destination = (await generateKeyPairSigner()).address;
    proxy.reset();
    const response = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owners: owners.slice(0, 1), feePayer, destination } });
    assert.equal(response.statusCode, 200, response.body.slice(0, 500));
    const body = response.json();
    const closed = body.transactions.reduce((n: number, tx: { closedAccounts: string[] }) => n + tx.closedAccounts.length, 0);
    assert.equal(closed, ACCOUNTS_PER_OWNER);
    assert.ok(body.transactions.length <= MAX_PREPARED_TRANSACTIONS);
    // One simulation per transaction of the answer, none more.
    assert.equal(proxy.count('simulateTransaction'), body.transactions.length);
  });

  it('one owner\'s prepare: an owner that cannot pay even the base fees is refused before any simulation', async () => {
    const owner = (await generateKeyPairSigner()).address;
    await writeEmptyTokenAccounts(chain, owner, 60);
    // 9,000 lamports: less than the base fees of the 3 transactions its 60 closes need.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [owner, { lamports: 9_000, data: '', owner: '11111111111111111111111111111111' }]);
    proxy.reset();
    const response = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner, priorityFee: 0 } });
    assert.equal(response.statusCode, 400, response.body.slice(0, 500));
    assert.equal(response.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.equal(proxy.count('simulateTransaction'), 0, proxy.requests.map((r) => r.method).join(', '));
  });
});
