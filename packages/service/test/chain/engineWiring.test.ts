/**
 * How the landing engine is configured and observed: SOLANA_RPC_MAX_RPS is validated and reaches
 * the adapter, and GET /metrics counts the requests that left for the RPC by method and outcome.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';

describe('SOLANA_RPC_MAX_RPS', () => {
  it('is a positive integer; unset means no cap of our own', () => {
    assert.equal(loadConfig({ SOLANA_RPC_MAX_RPS: '20' }).solanaRpcMaxRps, 20);
    assert.equal(loadConfig({}).solanaRpcMaxRps, undefined);
    assert.equal(loadConfig({ SOLANA_RPC_MAX_RPS: '' }).solanaRpcMaxRps, undefined);
    for (const bad of ['0', '-5', '2.5', 'many', '1e3']) {
      assert.throws(() => loadConfig({ SOLANA_RPC_MAX_RPS: bad }), ConfigError, bad);
    }
  });
});

describe('RPC request metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  it('counts each JSON-RPC request that left, by method and outcome', async () => {
    const status = await t.app.inject({ method: 'GET', url: `/api/transactions/${'1'.repeat(64)}` });
    assert.equal(status.statusCode, 404, status.body);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    const line = metrics.body.split('\n').find((l) => l.startsWith('cinder_rpc_requests_total{') && l.includes('method="getSignatureStatuses"'));
    assert.ok(line, 'a cinder_rpc_requests_total sample for getSignatureStatuses');
    assert.match(line, /outcome="ok"/);
    assert.ok(Number(line.split(' ').at(-1)) >= 1);
  });
});
