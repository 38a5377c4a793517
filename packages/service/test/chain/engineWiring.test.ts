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
    // Each status request sends one getSignatureStatuses. On a loaded machine one may time out
    // (counted as such); the samples must then add up all the same, and one of them be ok.
    let asked = 0;
    let samples: { outcome: string; count: number }[] = [];
    while (!samples.some((s) => s.outcome === 'ok') && asked < 10) {
      const status = await t.app.inject({ method: 'GET', url: `/api/transactions/${'1'.repeat(64)}` });
      assert.ok([404, 503].includes(status.statusCode), status.body);
      asked++;
      const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
      samples = metrics.body
        .split('\n')
        .filter((l) => l.startsWith('cinder_rpc_requests_total{') && l.includes('method="getSignatureStatuses"'))
        .map((l) => ({ outcome: /outcome="([a-z_]+)"/.exec(l)?.[1] ?? '', count: Number(l.split(' ').at(-1)) }));
    }
    assert.ok(samples.some((s) => s.outcome === 'ok' && s.count >= 1), `samples ${JSON.stringify(samples)}`);
    assert.ok(samples.reduce((sum, s) => sum + s.count, 0) >= asked, 'every request that left is counted');
  });
});
