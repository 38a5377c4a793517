/**
 * A wallet of hundreds of empty token accounts, written straight into the embedded chain's state
 * (`localnet_setAccount`), previewed and reclaimed through the real app. The preview simulates only
 * the first transactions of a large plan (src/operations/compile.ts) and prices the others without
 * a simulation: its net must still be, to the lamport, what the reclaim does, priority fee included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey, type TestKey } from '@cinder/testkit';
import { getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

const ACCOUNTS = 300;

let t: TestApp;
let owner: TestKey;

before(async () => {
  // Before the v1 gate: 300 accounts are more legacy transactions than the preview simulates, which the test needs.
  t = await createTestApp({}, { v1Transactions: false });
  owner = await createTestKey();
  await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
  await writeEmptyTokenAccounts(t.chain, owner.address, ACCOUNTS);
});
after(() => t.close());

describe('a wallet of hundreds of empty accounts', () => {
  it('the preview (most transactions priced without a simulation) nets exactly what the reclaim does, priority fee included', async () => {
    const priorityFee = 0.000012345;
    const previewAnswer = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.address}&priorityFee=${priorityFee}` });
    assert.equal(previewAnswer.statusCode, 200, previewAnswer.body);
    const { summary } = previewAnswer.json();
    assert.equal(summary.close, ACCOUNTS);
    assert.equal(summary.problem, null);
    assert.ok(summary.transactions > 8, `${summary.transactions} transactions: more than the simulated ones`);
    // Every signature's base fee, and the whole priority fee shared between the transactions.
    assert.equal(BigInt(summary.feeLamports), 5_000n * BigInt(summary.transactions) + 12_345n);

    const before = await getLamports(t.chain, owner.address);
    const reclaim = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee } });
    assert.equal(reclaim.statusCode, 200, reclaim.body);
    const body = reclaim.json();
    assert.equal(body.status, 'success', body.message);
    assert.equal(body.details.netLamports, summary.netLamports, 'preview net = reclaim net');
    assert.equal(body.details.feeLamports, summary.feeLamports);
    assert.equal(await getLamports(t.chain, owner.address), before + BigInt(summary.netLamports));
  });
});
