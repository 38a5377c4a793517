/**
 * The SDK's many-wallet methods against scripted answers (the server side is tested on the chain in
 * test/cli/reclaimMany.test.ts): what each sends, the keyed reclaim's keys in the routes' form and
 * its Idempotency-Key kept across retries, the retry policy's onRetry notice, and answers checked.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CinderApiError, createCinderClient, type RetryNotice } from '../../src/index.ts';
import { startFormBServer, type FormBServer } from './formBServer.ts';

const OWNER = 'So11111111111111111111111111111111111111112';
const KEY = '4wBqpZM9xaSheZzJSMawUKKwhdpChKbZ5eu5ky4Vigw9QbmAgf2Ckg4VdPFBJwEGEbjzm1C8yhbCXBtwQyGPxJKb';
const json = { 'content-type': 'application/json' };

let server: FormBServer;
before(async () => {
  server = await startFormBServer();
});
after(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe('SDK: many wallets', () => {
  it('reclaimRentMany: keys as the routes take them, one Idempotency-Key across retries, each wait told to onRetry', async () => {
    const notices: RetryNotice[] = [];
    const client = createCinderClient({ baseUrl: server.url, retry: { baseDelayMs: 1, onRetry: (n) => void notices.push(n) } });
    const busy = { status: 503, body: { type: 'about:blank', title: 'busy', status: 503, detail: 'busy', code: 'SERVICE_UNAVAILABLE' }, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } };
    const answer = { transactionId: 'S1', status: 'success', message: 'ok', tx_hash: 'S1', details: { signatures: ['S1', 'S2'], transactions: [] } };
    server.script(busy, { status: 200, body: answer, headers: json });
    const bytes = new Uint8Array(64).fill(7);
    const result = await client.reclaimRentMany({ userPrivateKeys: [KEY, bytes], feePayerPrivateKey: bytes, destination: OWNER, priorityFee: 0 });
    assert.deepEqual([result.status, result.signatures], ['success', ['S1', 'S2']]);
    assert.equal(server.requests.length, 2);
    const [first, second] = server.requests;
    assert.equal(first!.url, '/api/reclaim_rent');
    assert.match(String(first!.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    assert.equal(second!.headers['idempotency-key'], first!.headers['idempotency-key']);
    assert.deepEqual(JSON.parse(first!.body), { destination: OWNER, priorityFee: 0, userPrivateKeys: [KEY, Array(64).fill(7)], feePayerPrivateKey: Array(64).fill(7) });
    assert.deepEqual(notices.map((n) => [n.error.code, n.attempt, n.retries, n.delayMs]), [['SERVICE_UNAVAILABLE', 1, 3, 0]]);
  });

  it('previewReclaimMany and prepareReclaimMany send the request as given; an answer without signers is refused', async () => {
    const client = createCinderClient({ baseUrl: server.url });
    server.script({ status: 200, body: { owners: [], totalReclaimableLamports: '0' }, headers: json });
    await client.previewReclaimMany({ owners: [OWNER], mints: [OWNER] });
    assert.deepEqual([server.requests[0]!.url, JSON.parse(server.requests[0]!.body)], ['/api/reclaim_rent/preview', { owners: [OWNER], mints: [OWNER] }]);

    const request = { owners: [OWNER], feePayer: OWNER, destination: OWNER };
    server.script({ status: 200, body: { transactions: [{ transaction: 'AQ==', signers: [OWNER], owners: [OWNER] }] }, headers: json });
    const prepared = await client.prepareReclaimMany(request);
    assert.deepEqual(prepared.transactions[0]!.signers, [OWNER]);
    assert.deepEqual([server.requests[1]!.url, JSON.parse(server.requests[1]!.body)], ['/api/reclaim_rent/prepare', request]);

    server.script({ status: 200, body: { transactions: ['AQ=='] }, headers: json });
    const error = await client.prepareReclaimMany(request).catch((e: unknown) => e);
    assert.ok(error instanceof CinderApiError);
    assert.equal(error.code, 'INVALID_RESPONSE');
  });
});
