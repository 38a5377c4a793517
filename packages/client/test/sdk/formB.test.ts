/**
 * The SDK against a server that answers in the specification's Form B, and against scripted
 * answers: normalisation of every burn form, the typed error, retries of 429/503 after
 * Retry-After, the Idempotency-Key of every burn, timeouts and aborts.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CinderApiError, createCinderClient, normaliseBurnResult, parseRetryAfter, type CinderClient } from '../../src/index.ts';
import { FORM_B_TX_HASH, startFormBServer, type FormBServer } from './formBServer.ts';

const KEY = '4wBqpZM9xaSheZzJSMawUKKwhdpChKbZ5eu5ky4Vigw9QbmAgf2Ckg4VdPFBJwEGEbjzm1C8yhbCXBtwQyGPxJKb';
const MINT = 'So11111111111111111111111111111111111111112';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: FormBServer;
let client: CinderClient;

before(async () => {
  server = await startFormBServer();
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  client = createCinderClient({ baseUrl: server.url, retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 2_000 } });
});

function problem(status: number, code: string, detail: string, extra: Record<string, unknown> = {}) {
  return { status, body: { type: `urn:cinder:problem:${code.toLowerCase()}`, title: code, status, detail, code, ...extra }, headers: { 'content-type': 'application/problem+json; charset=utf-8' } };
}

async function rejection(promise: Promise<unknown>): Promise<CinderApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CinderApiError, `expected a CinderApiError, got ${String(error)}`);
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail('expected a rejection');
}

describe('burnTokens against a Form B server', () => {
  it('accepts { tx_hash } only and returns the normalised shape', async () => {
    const result = await client.burnTokens({ mint: MINT, priorityFee: 0.000005, userPrivateKey: KEY });
    assert.deepEqual(result, {
      transactionId: FORM_B_TX_HASH,
      status: 'unknown',
      message: null,
      signatures: [FORM_B_TX_HASH],
      details: null,
      form: 'B',
    });
    const [request] = server.requests;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/api/burn_tokens');
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.match(String(request!.headers['idempotency-key']), UUID);
    assert.deepEqual(JSON.parse(request!.body), { mint: MINT, priorityFee: 0.000005, userPrivateKey: KEY });
  });

  it('accepts Form A and the combined form, and rejects answers of neither form', async () => {
    server.script({ status: 200, body: { transactionId: 'sigA', status: 'failed', message: 'AccountFrozen' } });
    assert.deepEqual(await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }), {
      transactionId: 'sigA',
      status: 'failed',
      message: 'AccountFrozen',
      signatures: ['sigA'],
      details: null,
      form: 'A',
    });
    const details = { signatures: ['s1', 's2'], slot: 7 };
    server.script({ status: 200, body: { transactionId: 's1', tx_hash: 's1', status: 'success', message: 'Burned', details } });
    const combined = await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY });
    assert.equal(combined.form, 'A+B');
    assert.deepEqual(combined.signatures, ['s1', 's2']);
    assert.deepEqual(combined.details, details);

    server.script({ status: 200, body: { ok: true } });
    const error = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(error.code, 'INVALID_RESPONSE');
    assert.equal(error.status, 200);
  });

  it('sends a solana-keygen key (Uint8Array or array) as a JSON array', async () => {
    const bytes = Uint8Array.from({ length: 64 }, (_, i) => i);
    await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: bytes });
    assert.deepEqual(JSON.parse(server.requests[0]!.body).userPrivateKey, [...bytes]);
  });

  it('generates a new Idempotency-Key per call and uses a given one', async () => {
    await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY });
    await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY });
    await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }, { idempotencyKey: 'my-key-1' });
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], 'my-key-1');
  });

  it('retries 429 and 503 after Retry-After with the same Idempotency-Key', async () => {
    server.script(
      problem(429, 'RATE_LIMITED', 'Too many burns', {}),
      { ...problem(503, 'RPC_UNAVAILABLE', 'RPC down'), headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } },
    );
    server.requests.length = 0;
    const waits: number[] = [];
    const counting = createCinderClient({ baseUrl: server.url, retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 2_000, onRetry: ({ delayMs }) => void waits.push(delayMs) } });
    const result = await counting.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY });
    assert.equal(result.transactionId, FORM_B_TX_HASH);
    assert.equal(server.requests.length, 3);
    assert.equal(new Set(server.requests.map((r) => r.headers['idempotency-key'])).size, 1);
    // No Retry-After: the base delay; Retry-After: 0 is taken at its word.
    assert.deepEqual(waits, [1, 0]);
  });

  it('waits as long as Retry-After says', async () => {
    server.script({ ...problem(429, 'RATE_LIMITED', 'slow down'), headers: { 'content-type': 'application/problem+json', 'retry-after': '1' } });
    const started = Date.now();
    await client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY });
    assert.ok(Date.now() - started >= 990, 'waited about one second');
    assert.equal(server.requests.length, 2);
  });

  it('does not wait longer than maxDelayMs: the error carries Retry-After instead', async () => {
    server.script({ ...problem(429, 'RATE_LIMITED', 'Rate limit exceeded'), headers: { 'content-type': 'application/problem+json', 'retry-after': '60' } });
    const error = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'RATE_LIMITED');
    assert.equal(error.retryAfterMs, 60_000);
    assert.equal(server.requests.length, 1);
  });

  it('gives up after the configured number of retries', async () => {
    const limited = { ...problem(503, 'RPC_UNAVAILABLE', 'RPC down'), headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } };
    server.script(limited, limited, limited);
    const twice = createCinderClient({ baseUrl: server.url, retry: { retries: 2 } });
    const error = await rejection(twice.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(error.code, 'RPC_UNAVAILABLE');
    assert.equal(server.requests.length, 3);
    const none = createCinderClient({ baseUrl: server.url, retry: { retries: 0 } });
    server.script(limited);
    server.requests.length = 0;
    await rejection(none.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(server.requests.length, 1);
  });

  it('never retries a burn sent without an Idempotency-Key', async () => {
    server.script({ ...problem(503, 'RPC_UNAVAILABLE', 'RPC down'), headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } });
    const error = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }, { idempotencyKey: '' }));
    assert.equal(error.code, 'RPC_UNAVAILABLE');
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.headers['idempotency-key'], undefined);
  });

  it('throws one typed error with status, code, detail, field errors and request id, never the key', async () => {
    server.script(problem(400, 'INVALID_PRIVATE_KEY', 'userPrivateKey is not base58', { errors: [{ field: 'userPrivateKey', message: 'is not base58' }] }));
    const error = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(error.name, 'CinderApiError');
    assert.equal(error.status, 400);
    assert.equal(error.code, 'INVALID_PRIVATE_KEY');
    assert.equal(error.detail, 'userPrivateKey is not base58');
    assert.deepEqual(error.errors, [{ field: 'userPrivateKey', message: 'is not base58' }]);
    assert.equal(error.requestId, 'req-1');
    assert.equal(error.message, 'INVALID_PRIVATE_KEY (HTTP 400): userPrivateKey is not base58');
    assert.ok(!JSON.stringify({ ...error, message: error.message, stack: error.stack }).includes(KEY));
  });

  it('reports a body that is not problem+json by its HTTP status', async () => {
    server.script({ status: 502, text: '<html><body>Bad gateway</body></html>' });
    const error = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'HTTP_502');
    // Nothing of a body that is not problem+json reaches the error (it may echo the request).
    assert.equal(error.detail, 'HTTP 502 Bad Gateway (the answer is not problem+json; its body is not shown)');
    // A proxy that echoes the request, key included, as JSON with a `code`: still only the status.
    server.script({ status: 400, body: { code: 'ECHO', detail: `you sent ${KEY}` } });
    const echoed = await rejection(client.burnTokens({ mint: MINT, priorityFee: 0, userPrivateKey: KEY }));
    assert.equal(echoed.code, 'HTTP_400');
    assert.ok(!JSON.stringify({ ...echoed, message: echoed.message, stack: echoed.stack }).includes(KEY));
  });
});

describe('generateWallets and getTransaction against a Form B server', () => {
  it('accepts a wallet list of addresses only', async () => {
    const result = await client.generateWallets(3);
    assert.equal(result.wallets.length, 3);
    assert.deepEqual(result.keypairs, []);
    assert.equal(server.requests[0]!.url, '/api/generate_wallets?n=3');
  });

  it('sends the options as query parameters and checks the count', async () => {
    server.script({ status: 200, body: { wallets: ['a'] } });
    const error = await rejection(client.generateWallets(2, { mnemonic: 12, format: 'keygen' }));
    assert.equal(error.code, 'INVALID_RESPONSE');
    assert.equal(server.requests[0]!.url, '/api/generate_wallets?n=2&mnemonic=12&format=keygen');
    const bad = await rejection(client.generateWallets(0));
    assert.equal(bad.code, 'INVALID_ARGUMENT');
    assert.equal(bad.status, 0);
  });

  it('retries a GET after 503', async () => {
    server.script({ ...problem(503, 'SERVICE_UNAVAILABLE', 'busy'), headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } });
    assert.equal((await client.generateWallets(1)).wallets.length, 1);
    assert.equal(server.requests.length, 2);
  });

  it('reads a transaction status from tx_hash', async () => {
    assert.deepEqual(await client.getTransaction('abc'), { transactionId: 'abc', status: 'success', message: null, slot: null });
  });
});

describe('transport', () => {
  it('times out', async () => {
    server.script({ status: 0, hang: true });
    const quick = createCinderClient({ baseUrl: server.url, timeoutMs: 200 });
    const error = await rejection(quick.generateWallets(1));
    assert.equal(error.code, 'TIMEOUT');
    assert.equal(error.status, 0);
  });

  it('stops when the caller aborts', async () => {
    server.script({ status: 0, hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(client.getTransaction('abc', { signal: controller.signal }));
    assert.equal(error.code, 'ABORTED');
  });

  it('reports a server that cannot be reached', async () => {
    const nowhere = createCinderClient({ baseUrl: 'http://127.0.0.1:9' });
    const error = await rejection(nowhere.generateWallets(1));
    assert.equal(error.code, 'NETWORK_ERROR');
    assert.match(error.detail, /^Cannot reach Cinder at http:\/\/127\.0\.0\.1:9/);
  });

  it('uses the given fetch, base path and API key', async () => {
    const seen: { url: string; headers: Headers }[] = [];
    const custom = createCinderClient({
      baseUrl: `${server.url}/`,
      apiKey: 'k-123',
      fetch: (input, init) => {
        seen.push({ url: String(input), headers: new Headers(init?.headers) });
        return fetch(input, init);
      },
    });
    await custom.getTransaction('sig/with?odd chars');
    assert.equal(seen[0]!.url, `${server.url}/api/transactions/sig%2Fwith%3Fodd%20chars`);
    assert.equal(seen[0]!.headers.get('authorization'), 'Bearer k-123');
    assert.equal(custom.baseUrl, server.url);
  });

  it('rejects a bad baseUrl at once', () => {
    assert.throws(() => createCinderClient({ baseUrl: 'ftp://x' }), (error: unknown) => error instanceof CinderApiError && error.code === 'INVALID_ARGUMENT');
    assert.throws(() => createCinderClient({ baseUrl: 'not a url' }), CinderApiError);
  });
});

describe('helpers', () => {
  it('parseRetryAfter reads seconds and HTTP dates', () => {
    assert.equal(parseRetryAfter('3'), 3000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter(null), undefined);
  });

  it('normaliseBurnResult refuses contradicting forms', () => {
    assert.throws(() => normaliseBurnResult({ transactionId: 'a', tx_hash: 'b' }), /differ/);
    assert.throws(() => normaliseBurnResult({ tx_hash: 5 }), /not a string/);
    assert.throws(() => normaliseBurnResult([]), /not a JSON object/);
    assert.equal(normaliseBurnResult({ transactionId: 'a', status: 'confirmed' }).status, 'unknown');
  });
});
