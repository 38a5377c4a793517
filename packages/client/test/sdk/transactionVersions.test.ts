/**
 * The SDK carries `transactionVersions` (docs/transaction-versions.md): previewReclaim takes it as a
 * list (sent as `legacy,0,1`), prepareReclaim in its body; with 1 listed, on the embedded chain with
 * the v1 gate active, both pack v1 alike (about 60 closes a transaction), and without it legacy.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createCinderClient, CinderApiError, type CinderClient } from '../../src/index.ts';
import { createTestApp, createTestKey, rpcResult, writeEmptyTokenAccounts, type TestApp } from '@cinder/testkit';

let t: TestApp;
let client: CinderClient;
before(async () => {
  t = await createTestApp();
  client = createCinderClient({ baseUrl: await t.app.listen({ host: '127.0.0.1', port: 0 }) });
});
after(() => t.close());

it('previewReclaim and prepareReclaim with the same transactionVersions agree; 1 listed packs fewer transactions than legacy', async () => {
  const owner = await createTestKey();
  await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
  await writeEmptyTokenAccounts(t.chain, owner.address, 100);
  const legacy = await client.previewReclaim({ owner: owner.address, signer: 'wallet', transactionVersions: ['legacy', 0] });
  const v1 = await client.previewReclaim({ owner: owner.address, signer: 'wallet', transactionVersions: ['legacy', 0, 1] });
  // A wallet's room for its guards leaves a legacy transaction fewer than its 25 closes; v1 holds about 60.
  assert.ok(legacy.summary.transactions >= 4, `${legacy.summary.transactions} legacy transactions`);
  assert.equal(v1.summary.transactions, 2);
  const prepared = await client.prepareReclaim({ owner: owner.address, priorityFee: 0, signer: 'wallet', transactionVersions: ['legacy', 0, 1] });
  assert.equal(prepared.transactions.length, v1.summary.transactions);
  assert.equal(prepared.details.summary.netLamports, v1.summary.netLamports);
  assert.ok(prepared.transactions.every((wire) => Buffer.from(wire, 'base64')[0] === 0x81), 'a v1 transaction begins with its message (0x81); its signatures come after');
});

it('a version the API does not know is refused, naming the field', async () => {
  const owner = (await createTestKey()).address;
  const error = await client.prepareReclaim({ owner, priorityFee: 0, transactionVersions: [2 as never] }).then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof CinderApiError);
  assert.equal(error.code, 'VALIDATION_FAILED');
  assert.ok(error.errors.some((e) => e.field.startsWith('transactionVersions')));
});
