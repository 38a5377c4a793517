/**
 * The preview of 1,000 owners (MAX_OWNERS_PER_REQUEST), each holding an empty token account
 * written straight into the chain's state: every owner answered, the total to the lamport, and the
 * RPC calls counted where they reach the chain (2 per owner + one getMultipleAccounts per 100
 * addresses). Its time and calls are printed (docs/many-wallets.md quotes them), not asserted.
 * Then the two bounds on such requests: one preview slot per request (PREVIEWS_PER_CLIENT) and
 * the per-client owners budget (RATE_LIMIT_OWNERS_PER_MIN).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, getBase64Decoder, type Address } from '@solana/kit';
import { AccountState, getMintEncoder, getTokenEncoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { startTestChain, type TestChain } from '@cinder/testkit';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';

const OWNERS = 1000;
const RENT = 2_039_280n;

let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let owners: Address[];

async function setAccount(address: Address, lamports: bigint, data: Uint8Array): Promise<void> {
  const response = await fetch(chain.localnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_setAccount', params: [address, { lamports: Number(lamports), data: getBase64Decoder().decode(data), owner: TOKEN_PROGRAM_ADDRESS }] }),
  });
  const answer = (await response.json()) as { error?: unknown };
  if (answer.error) throw new Error(`localnet_setAccount: ${JSON.stringify(answer.error)}`);
}

before(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
  // The deadline of an operation is the product's promise to a client, not what this test is
  // about: 2,000 RPC calls take seconds here and more on a machine whose cores are all busy.
  t = await createTestApp({ previewsPerClient: 1, rateLimitOwnersPerMin: 1500, operationDeadlineMs: 300_000 }, { chain, chainAdapter: { rpcUrl: proxy.url } });
  const mint = (await generateKeyPairSigner()).address;
  await setAccount(mint, 1_461_600n, new Uint8Array(getMintEncoder().encode({ mintAuthority: null, supply: 0n, decimals: 0, isInitialized: true, freezeAuthority: null })));
  owners = await Promise.all(Array.from({ length: OWNERS }, async () => (await generateKeyPairSigner()).address));
  for (let i = 0; i < OWNERS; i += 50) {
    await Promise.all(
      owners.slice(i, i + 50).map(async (owner) => {
        const data = getTokenEncoder().encode({ mint, owner, amount: 0n, delegate: null, state: AccountState.Initialized, isNative: null, delegatedAmount: 0n, closeAuthority: null });
        await setAccount((await generateKeyPairSigner()).address, RENT, new Uint8Array(data));
      }),
    );
  }
});
after(async () => {
  await t?.close();
  await proxy?.close();
  await chain?.close();
});

const preview = (list: readonly Address[]) => t.app.inject({ method: 'POST', url: '/api/reclaim_rent/preview', payload: { owners: list } });

describe('POST /api/reclaim_rent/preview of 1,000 owners', () => {
  it('answers every owner, to the lamport, in 2 getTokenAccountsByOwner per owner and ⌈(owners + mints + 1) / 100⌉ getMultipleAccounts', async () => {
    proxy.reset();
    const started = performance.now();
    const response = await preview(owners);
    const ms = performance.now() - started;
    assert.equal(response.statusCode, 200, response.body.slice(0, 500));
    const body = response.json();
    assert.equal(body.owners.length, OWNERS);
    assert.deepEqual(body.owners.map((o: { owner: string }) => o.owner), owners);
    assert.ok(body.owners.every((o: { reclaimableLamports: string }) => o.reclaimableLamports === RENT.toString()));
    assert.equal(body.totalReclaimableLamports, (RENT * BigInt(OWNERS)).toString());
    assert.equal(proxy.count('getTokenAccountsByOwner'), 2 * OWNERS);
    // The owners, the one mint, the Rent sysvar and (until it is known) the v1 gate's account, 100 per call.
    assert.equal(proxy.count('getMultipleAccounts'), Math.ceil((OWNERS + 1 + 1 + 1) / 100));
    const calls = proxy.requests.length;
    console.log(
      `preview of ${OWNERS} owners: ${Math.round(ms)} ms, ${calls} RPC calls (${(calls / OWNERS).toFixed(3)} per owner), ` +
        `${body.transactions} transactions of a reclaim, ${response.body.length} bytes answered`,
    );
  });

  it('takes one of the client\'s preview slots for the whole request (PREVIEWS_PER_CLIENT=1: a second one meanwhile is 429)', async () => {
    const [first, second] = await Promise.all([preview(owners.slice(0, 3)), preview(owners.slice(3, 6))]);
    const statuses = [first.statusCode, second.statusCode].sort();
    assert.deepEqual(statuses, [200, 429]);
    const refused = first.statusCode === 429 ? first : second;
    assert.match(refused.json().detail, /reclaim previews of this client are running/);
  });

  it('counts every owner against the client\'s owners budget (RATE_LIMIT_OWNERS_PER_MIN=1500): of two 1,000-owner requests at once, one is 429', async () => {
    // A client of its own, and both requests at once: each is charged when it arrives, so the rule
    // is shown whatever the earlier previews took (on a busy machine, more than the minute).
    const remoteAddress = '10.9.8.7';
    const both = await Promise.all([0, 1].map(() => t.app.inject({ method: 'POST', url: '/api/reclaim_rent/preview', payload: { owners }, remoteAddress })));
    assert.deepEqual(both.map((r) => r.statusCode).sort(), [200, 429], both.map((r) => r.body.slice(0, 200)).join('\n'));
    const refused = both.find((r) => r.statusCode === 429)!;
    assert.equal(refused.json().code, 'RATE_LIMITED');
    assert.match(refused.json().detail, /Owner budget reached: 1500 owners per minute/);
  });
});
