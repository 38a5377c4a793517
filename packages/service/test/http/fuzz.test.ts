/**
 * A generated campaign of hostile requests (fast-check, fixed seed) over real sockets against the
 * running app on the embedded chain: every route the app has (taken from the app itself, so routes
 * added later are fuzzed too), every method, spellings of each path (percent-encoding, dot
 * segments, doubled slashes, absolute form, case), query strings, content types, bodies (keys in
 * every format, unknown fields, invalid JSON, invalid UTF-8, over 16 KiB), headers, chunked
 * framing, HTTP/1.0, a missing Host, pipelined pairs and plain garbage. Requests are always
 * complete (slow ones are edge.test.ts's: they would make the run last minutes).
 *
 * What must hold (contract, "Common rules"): no answer ≥ 500; every error answer problem+json;
 * every connection answered, none slower than 10 s; no key used anywhere in any answer or in any
 * log line (log level trace: the most verbose). The figures are printed at the end.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { routeTable } from '../../src/http/edge.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey, type TestKey } from '@cinder/testkit';
import { findLeaks, keyForms, type KeyForms } from './leaks.ts';
import { exchange, type RawResponse } from './rawHttp.ts';

const SEED = 20_261_122;
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 5_200);
const CONCURRENCY = 8;
const API_KEY = 'fuzz-api-key-abcdefghijklmnop';

let t: TestApp;
let port: number;
const keys: TestKey[] = [];
const forms: KeyForms[] = [];

before(async () => {
  t = await createTestApp({ apiKeys: [API_KEY], logLevel: 'trace', vanityTimeoutMs: 1_000 });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as { port: number }).port;
  // Start the wallet worker threads first (a cold start loads the workers' code, which on a busy
  // 2-core machine can take seconds): the campaign measures answers, not the warm-up.
  for (const query of ['n=64', 'n=16&mnemonic=12', 'n=16&format=keygen']) {
    const warm = await t.app.inject({ method: 'GET', url: `/api/generate_wallets?${query}`, headers: { 'x-api-key': API_KEY } });
    assert.equal(warm.statusCode, 200, warm.body);
  }
  for (let i = 0; i < 3; i++) {
    const key = await createTestKey();
    keys.push(key);
    forms.push(keyForms(`key${i}`, key.secretKey));
  }
});
after(async () => {
  await t.close();
});

/** Every way a key is pasted, as text (for a path, a query, a header) and as a JSON value. */
function keyTexts(key: TestKey): string[] {
  return [key.base58SecretKey, key.base58Seed, Buffer.from(key.secretKey).toString('hex'), key.keygenJson, Buffer.from(key.secretKey).toString('base64')];
}

function percentEncodeSome(text: string, picks: number[]): string {
  return [...text].map((char, i) => (picks.includes(i % 7) && /[A-Za-z0-9_.~-]/.test(char) ? `%${char.charCodeAt(0).toString(16).padStart(2, '0')}` : char)).join('');
}

function requestArbitrary(routes: { url: string; methods: string[] }[]) {
  const key = fc.constantFrom(...keys);
  const keyText = key.chain((k) => fc.constantFrom(...keyTexts(k)));
  const junk = fc.string({ maxLength: 40, unit: 'grapheme-ascii' });
  const paramValue = fc.oneof(
    keyText,
    fc.constant('5'.repeat(88)),
    fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/),
    junk.map((s) => encodeURIComponent(s)),
    fc.constant('%FF%FE'),
    fc.constant('a'.repeat(120)),
  );
  const template = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...routes.map((r) => r.url)) },
    { weight: 1, arbitrary: fc.constantFrom('/api', '/api/', '/api/nope', '/API/burn_tokens', '/docs/static/../../package.json', '/.env', '/metrics', '/x') },
  );
  const path = fc
    .tuple(template, fc.array(paramValue, { minLength: 1, maxLength: 3 }))
    .map(([url, values]) => url.split('/').map((segment, i) => (segment.startsWith(':') ? values[i % values.length]! : segment === '*' ? 'swagger-ui.css' : segment)).join('/'));
  const spelling = fc.constantFrom('plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'encoded', 'double-slash', 'dot-segments', 'absolute', 'upper', 'trailing-slash', 'encoded-slash', 'bad-escape', 'backslash');
  const spelled = fc.tuple(path, spelling, fc.array(fc.nat(6), { maxLength: 3 })).map(([p, how, picks]) => {
    switch (how) {
      case 'encoded':
        return percentEncodeSome(p, picks.length ? picks : [1]);
      case 'double-slash':
        return p.replace('/', '//').replace(/\/(?=[a-z])/g, '//');
      case 'dot-segments':
        return `/x/y/../..${p}`.replace('/api/', '/api/./');
      case 'absolute':
        return `http://127.0.0.1:${port}${p}`;
      case 'upper':
        return p.toUpperCase();
      case 'trailing-slash':
        return `${p}/`;
      case 'encoded-slash':
        return p.replace(/\/([^/]*)$/, '%2F$1');
      case 'bad-escape':
        return `${p}%zz`;
      case 'backslash':
        return p.replace('/', '\\');
      default:
        return p;
    }
  });
  const queryPair = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom('n', 'n', 'format', 'mnemonic'), fc.constantFrom('1', '3', '100', 'keygen', '12')) },
    fc.tuple(fc.constantFrom('n', 'mnemonic', 'prefix', 'suffix', 'ignoreCase', 'format', 'owner', 'withdrawExcess', 'burn', 'priorityFee', 'transactionVersions', 'signer'), fc.oneof(
      fc.constantFrom('1', '2', '0', '-1', '1e3', '10001', '12', '24', 'keygen', 'true', 'A', '9z', '', '0x10', '007', 'auto', 'AUTO', 'legacy,0,1', '1,1', 'legacy,2', 'wallet'),
      keyText,
      junk,
    )),
    fc.tuple(fc.constantFrom('userPrivateKey', 'key', 'secret'), keyText),
    fc.tuple(keyText, fc.constant('')),
    fc.tuple(junk, junk),
  );
  const query = fc.option(fc.array(queryPair, { minLength: 1, maxLength: 4 }), { nil: undefined }).map((pairs) =>
    pairs ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}` : '',
  );
  const jsonBody = fc.record(
    {
      mint: fc.oneof(fc.constantFrom(...keys.map((k) => k.address)), junk, fc.integer(), keyText),
      priorityFee: fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(0, 0.001, 0.01, 1e-10, -1, 'auto', 'AUTO', 'fast'), junk),
      transactionVersions: fc.oneof(fc.array(fc.constantFrom<unknown>('legacy', 0, 1, 2, '1', null, 'v1'), { maxLength: 4 }), junk),
      userPrivateKey: fc.oneof(keyText, key.map((k) => [...k.secretKey]), junk, fc.integer()),
      owner: fc.oneof(fc.constantFrom(...keys.map((k) => k.address)), keyText),
      transactions: fc.array(fc.oneof(junk, fc.base64String({ maxLength: 200 })), { maxLength: 3 }),
      burn: fc.array(junk, { maxLength: 2 }),
      allowNetLoss: fc.boolean(),
      [keys[0]!.base58SecretKey]: fc.integer(),
      junkField: fc.anything({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  );
  // The fields a burn takes, exactly: these reach key parsing and the chain.
  const burnBody = fc.record({
    mint: fc.oneof(fc.constantFrom(...keys.map((k) => k.address)), fc.constant('So11111111111111111111111111111111111111112')),
    priorityFee: fc.constantFrom(0, 0.000001, 0.01, 0.02),
    userPrivateKey: fc.oneof(keyText, key.map((k) => [...k.secretKey])),
  });
  const body = fc.oneof(
    { weight: 6, arbitrary: jsonBody.map((b) => Buffer.from(JSON.stringify(b))) },
    { weight: 4, arbitrary: burnBody.map((b) => Buffer.from(JSON.stringify(b))) },
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
    { weight: 1, arbitrary: junk.map((s) => Buffer.from(`{"userPrivateKey":"${keys[1]!.base58SecretKey}", ${s}`)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }).map((n) => Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]))))) },
    { weight: 1, arbitrary: keyText.map((k) => Buffer.from(JSON.stringify({ userPrivateKey: k, pad: 'x'.repeat(17_000) }))) },
  );
  const contentType = fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/json;charset="UTF-8"',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/problem+json',
    'APPLICATION/JSON',
    '',
    undefined,
  ));
  const extraHeaders = fc.array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constant(['x-api-key', API_KEY]) },
      { weight: 3, arbitrary: fc.constant(['authorization', `Bearer ${API_KEY}`]) },
      fc.constant(['authorization', 'Bearer wrong']),
      keyText.map((k) => ['x-api-key', k]),
      fc.constant(['expect', '100-continue']),
      fc.constant(['expect', 'magic']),
      fc.constantFrom('abc-123', 'bad id', 'x'.repeat(80)).map((id) => ['x-request-id', id]),
      fc.constantFrom('key-1', '', 'ü').map((id) => ['idempotency-key', id]),
      fc.constantFrom('application/xml', '*/*', 'text/html').map((a) => ['accept', a]),
      fc.constantFrom('1.2.3.4', 'garbage').map((a) => ['x-forwarded-for', a]),
      fc.constant(['range', 'bytes=500-1']),
    ),
    { maxLength: 3 },
  );
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...new Set(routes.flatMap((r) => r.methods))) },
    { weight: 3, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') },
    { weight: 1, arbitrary: fc.constantFrom('TRACE', 'CONNECT', 'PROPFIND', 'G E T', 'get') },
  );
  const framing = fc.constantFrom('length', 'length', 'length', 'chunked', 'none');
  const version = fc.oneof({ weight: 12, arbitrary: fc.constant('HTTP/1.1') }, fc.constantFrom('HTTP/1.0', 'HTTP/1.1 no-host', 'HTTP/2.0'));
  const one = fc
    .record({ method, target: fc.tuple(spelled, query).map(([p, q]) => p + q), contentType, body: fc.option(body, { nil: undefined }), extraHeaders, framing, version })
    .map(({ method: m, target, contentType: ct, body: b, extraHeaders: hs, framing: fr, version: v }) => {
      const lines = [`${m} ${target} ${v === 'HTTP/1.1 no-host' ? 'HTTP/1.1' : v}`];
      if (v !== 'HTTP/1.1 no-host' && v !== 'HTTP/1.0') lines.push(`Host: 127.0.0.1:${port}`);
      if (ct !== undefined) lines.push(`Content-Type: ${ct}`);
      for (const [name, value] of hs) lines.push(`${name}: ${value}`);
      // Each connection ends with a request that asks the server to close it (a half-close
      // would make Node abort requests still in progress).
      const close = (last: boolean) => (last ? ['Connection: close'] : []);
      let payload = Buffer.alloc(0);
      if (b !== undefined && fr === 'length') {
        lines.push(`Content-Length: ${b.length}`);
        payload = b;
      } else if (b !== undefined && fr === 'chunked') {
        lines.push('Transfer-Encoding: chunked');
        payload = Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]);
      }
      const bytes = (last: boolean) => Buffer.concat([Buffer.from(`${[...lines, ...close(last)].join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
      return { head: m === 'HEAD', bytes };
    });
  const garbage = fc.oneof(
    // Not starting with CR or LF: HTTP parsers skip empty lines between requests, so such a
    // "request" would only be an idle connection, answered by the 408 of edge.test.ts.
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.concat([Buffer.from('X'), Buffer.from(b), Buffer.from('\r\n\r\n')])),
    keyText.map((k) => Buffer.from(`POST /api/burn_tokens HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n{"userPrivateKey":"${k}"}`)),
  );
  // Well-formed calls of each route (the right method, JSON, the API key), so that the routes'
  // own validation, key parsing and chain reads are fuzzed too, not only the edge.
  const postRoutes = routes.filter((r) => r.methods.includes('POST')).map((r) => r.url);
  const getRoutes = routes.filter((r) => r.methods.includes('GET') && r.url.startsWith('/api/')).map((r) => r.url);
  const fill = (url: string, value: string) => url.replace(/:[^/]+/g, value);
  const wellFormed = fc.oneof(
    fc.tuple(fc.constantFrom(...postRoutes), fc.oneof(burnBody, jsonBody)).map(([url, b]) => {
      const json = JSON.stringify(b);
      return `POST ${url} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`;
    }),
    fc.tuple(fc.constantFrom(...getRoutes), paramValue, query).map(
      ([url, value, q]) => `GET ${fill(url, value)}${q} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nConnection: close\r\n\r\n`,
    ),
  );
  return fc.oneof(
    { weight: 8, arbitrary: wellFormed.map((text) => ({ parts: [Buffer.from(text, 'utf8')], heads: 0 })) },
    { weight: 20, arbitrary: one.map((r) => ({ parts: [r.bytes(true)], heads: r.head ? 1 : 0 })) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(one, fc.oneof(one.map((r) => ({ bytes: r.bytes(true), head: r.head })), garbage.map((g) => ({ bytes: g, head: false }))))
        .map(([a, b]) => ({ parts: [Buffer.concat([a.bytes(false), b.bytes])], heads: (a.head ? 1 : 0) + (b.head ? 1 : 0) })),
    },
    { weight: 1, arbitrary: garbage.map((g) => ({ parts: [g], heads: 0 })) },
  );
}

it(`${REQUESTS} generated hostile requests: no 5xx, only problem+json errors, all answered within 10 s, no key anywhere`, async () => {
  const routes = routeTable(t.app);
  assert.ok(routes.some((r) => r.url === '/api/burn_tokens') && routes.some((r) => r.url === '/api/transactions/:signature'), 'routes come from the app');
  const samples = fc.sample(requestArbitrary(routes), { seed: SEED, numRuns: REQUESTS });

  const byStatus = new Map<number, number>();
  const byCode = new Map<string, number>();
  const serverErrors: string[] = [];
  const notProblem: string[] = [];
  const unanswered: string[] = [];
  const slow: string[] = [];
  const leaks: string[] = [];
  let answers = 0;
  const describe = (bytes: Buffer) => JSON.stringify(bytes.subarray(0, 120).toString('latin1'));
  const check = (response: RawResponse, sent: Buffer) => {
    answers++;
    byStatus.set(response.status, (byStatus.get(response.status) ?? 0) + 1);
    const code = /"code":"([A-Z_]+)"/.exec(response.body)?.[1];
    if (code) byCode.set(code, (byCode.get(code) ?? 0) + 1);
    if (response.status >= 500) serverErrors.push(`${response.status} ${response.body.slice(0, 200)} for ${describe(sent)}`);
    if (response.status >= 400 && !/^application\/problem\+json; charset=utf-8$/.test(response.headers['content-type'] ?? '')) {
      notProblem.push(`${response.status} ${response.headers['content-type']} for ${describe(sent)}`);
    }
    const found = findLeaks(JSON.stringify(response.headers) + response.body, forms);
    if (found.length) leaks.push(`${found.join(', ')} in an answer to ${describe(sent)}`);
    if (found.length && process.env.FUZZ_VERBOSE) console.log('leak', found, JSON.stringify(sent.toString('latin1')), JSON.stringify(response));
  };

  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < samples.length) {
        const sample = samples[next++]!;
        const result = await exchange(port, sample.parts, { timeoutMs: 10_000, headRequests: sample.heads });
        const sent = Buffer.concat(sample.parts);
        if (result.timedOut) slow.push(describe(sent));
        if (process.env.FUZZ_VERBOSE && (result.timedOut || result.elapsedMs > 2000)) console.log('slow', result.elapsedMs, JSON.stringify(sent.toString('latin1')), JSON.stringify(result));
        if (result.responses.length === 0) unanswered.push(describe(sent));
        if (process.env.FUZZ_VERBOSE && result.responses.length === 0) console.log('unanswered', JSON.stringify(sent.toString('latin1')), JSON.stringify(result.rest));
        for (const response of result.responses) check(response, sent);
      }
    }),
  );

  const logs = t.logs();
  const logLeaks = findLeaks(logs, forms);
  const figures = {
    requests: samples.length,
    connections: samples.length,
    answers,
    byStatus: Object.fromEntries([...byStatus].sort(([a], [b]) => a - b)),
    byCode: Object.fromEntries([...byCode].sort(([, a], [, b]) => b - a)),
    serverErrors: serverErrors.length,
    notProblemErrors: notProblem.length,
    unanswered: unanswered.length,
    slowerThan10s: slow.length,
    leaksInAnswers: leaks.length,
    leaksInLogs: logLeaks.length,
    logLines: logs.split('\n').length - 1,
  };
  console.log(`fuzz campaign (seed ${SEED}): ${JSON.stringify(figures)}`);
  assert.deepEqual(serverErrors.slice(0, 5), []);
  assert.deepEqual(notProblem.slice(0, 5), []);
  assert.deepEqual(slow.slice(0, 5), []);
  assert.deepEqual(unanswered.slice(0, 5), []);
  assert.deepEqual(leaks.slice(0, 5), []);
  assert.deepEqual(logLeaks, []);
  assert.ok(!logs.includes('rawPacket'));
  assert.ok(answers >= REQUESTS);
});
