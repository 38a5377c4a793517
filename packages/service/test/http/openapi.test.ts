/**
 * GET /openapi.json and GET /docs on the real app: the document is valid OpenAPI 3.1 (checked by
 * @readme/openapi-parser), describes both operations of the specification, and lists every status
 * and problem `code` each route answers, which is checked by provoking those answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { validate, compileErrors } from '@readme/openapi-parser';
import { ERROR_CODES, statusOf, type CinderErrorCode } from '../../src/errors.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createFundedSigner, createTestMint } from '@cinder/testkit';

interface Response {
  description: string;
  content?: Record<string, { schema: { allOf?: [{ $ref: string }, { properties: { code: { enum: string[] } } }] } }>;
  'x-problem-codes'?: string[];
  headers?: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  tags: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, Response>;
  security?: unknown[];
  'x-problem-codes'?: CinderErrorCode[];
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

let t: TestApp;
let doc: Document;

const BURN = { method: 'post', path: '/api/burn_tokens' } as const;
const WALLETS = { method: 'get', path: '/api/generate_wallets' } as const;
const STATUS = { method: 'get', path: '/api/transactions/{signature}' } as const;

function operation(where: { method: string; path: string }): Operation {
  const op = doc.paths[where.path]?.[where.method];
  assert.ok(op, `${where.method.toUpperCase()} ${where.path} is in the document`);
  return op;
}

before(async () => {
  t = await createTestApp();
  const response = await t.app.inject('/openapi.json');
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  doc = response.json();
});
after(async () => {
  await t.close();
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Cinder');
    const result = await validate(structuredClone(doc) as never);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  });

  it('describes both operations of the specification, and the transaction status, from the route schemas', () => {
    const burn = operation(BURN);
    assert.equal(burn.operationId, 'burn_tokens');
    const bodySchema = (burn.requestBody?.content['application/json'] as { schema: { required: string[]; additionalProperties: boolean } }).schema;
    assert.deepEqual(bodySchema.required, ['mint', 'priorityFee', 'userPrivateKey']);
    assert.equal(bodySchema.additionalProperties, false);
    const burn200 = burn.responses['200']!.content!['application/json']!.schema as unknown as { required: string[] };
    assert.deepEqual(burn200.required, ['transactionId', 'status', 'message', 'tx_hash', 'details']);
    assert.ok(burn.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key' && !p.required));
    // Every route the Idempotency-Key applies to documents it, and no other.
    const reclaim = operation({ method: 'post', path: '/api/reclaim_rent' });
    assert.ok(reclaim.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key' && !p.required));
    assert.ok(!operation({ method: 'get', path: '/api/reclaim_rent' }).parameters?.some((p) => p.name === 'Idempotency-Key'));

    const wallets = operation(WALLETS);
    assert.equal(wallets.operationId, 'generate_wallets');
    const n = wallets.parameters?.find((p) => p.name === 'n');
    assert.deepEqual([n?.in, n?.required], ['query', true]);
    assert.ok(wallets.responses['200']!.content!['application/json']);

    assert.equal(operation(STATUS).operationId, 'get_transaction');
    // The docs' own routes are not operations.
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/docs') || p === '/openapi.json'), []);
  });

  it('resolves the shared Problem schema into components and describes every error response with it', () => {
    assert.ok(doc.components.schemas.Problem);
    assert.ok(!JSON.stringify(doc).includes('def-'), 'no anonymous def-N components');
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const schema = response.content?.['application/problem+json']?.schema;
          assert.equal(schema?.allOf?.[0].$ref, '#/components/schemas/Problem', where);
          const codes = response['x-problem-codes'] ?? [];
          assert.ok(codes.length > 0, `${where} names its codes`);
          assert.deepEqual(schema?.allOf?.[1].properties.code.enum, codes, where);
          for (const code of codes) {
            assert.ok(ERROR_CODES.includes(code as CinderErrorCode), `${where}: ${code} is a code of src/errors.ts`);
            assert.equal(statusOf(code as CinderErrorCode), Number(status), `${where}: ${code} has this status in src/errors.ts`);
            assert.ok(response.description.includes(`\`${code}\``), `${where}: ${code} is in the description`);
          }
        }
      }
    }
  });

  it('lists, for each operation, the codes its route config declares, under exactly their statuses', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.values(ops).map((op) => ({ path, op })));
    for (const { path, op } of operations.filter(({ path }) => path.startsWith('/api/') || path === '/ready' || path === '/health')) {
      const codes = op['x-problem-codes'];
      assert.ok(Array.isArray(codes), `${op.operationId} (${path}) declares its problem codes in its route config`);
      const errorStatuses = Object.keys(op.responses).filter((s) => Number(s) >= 400).sort();
      assert.deepEqual(errorStatuses, [...new Set(codes.map((c) => String(statusOf(c))))].sort(), op.operationId);
      for (const status of errorStatuses) assert.deepEqual(op.responses[status]!['x-problem-codes'], codes.filter((c) => String(statusOf(c)) === status));
    }
    const burn = operations.find(({ op }) => op.operationId === 'burn_tokens')!.op;
    assert.ok(burn['x-problem-codes']!.includes('BURN_IN_PROGRESS'));
  });

  it('names no security scheme and no lock without API_KEYS; both schemes on every /api operation with them', async () => {
    // Without keys there is nothing to authorize: the docs page must show no lock.
    assert.equal(doc.components.securitySchemes, undefined);
    for (const operations of Object.values(doc.paths)) for (const op of Object.values(operations)) assert.equal(op.security, undefined, op.operationId);

    const keyed = await createTestApp({ apiKeys: ['test-key-1'] }, { chain: t.chain });
    try {
      const guarded = (await keyed.app.inject('/openapi.json')).json<Document>();
      assert.deepEqual(Object.keys(guarded.components.securitySchemes).sort(), ['apiKeyHeader', 'bearerAuth']);
      for (const [path, operations] of Object.entries(guarded.paths)) {
        for (const op of Object.values(operations)) {
          assert.deepEqual(op.security, path.startsWith('/api/') ? [{ bearerAuth: [] }, { apiKeyHeader: [] }] : undefined, op.operationId);
        }
      }
      const problems = await validate(structuredClone(guarded) as never);
      assert.ok(problems.valid, compileErrors(problems));
    } finally {
      await keyed.close();
    }
  });
});

describe('every status and problem code a route answers is in the document', () => {
  const observed: { where: { method: string; path: string }; status: number; code: string }[] = [];

  async function provoke(where: { method: string; path: string }, request: InjectOptions, app = t.app) {
    const response = await app.inject(request);
    const body = response.json() as { code: string };
    observed.push({ where, status: response.statusCode, code: body.code });
    return body.code;
  }

  it('burn_tokens', async () => {
    const { signer } = await createFundedSigner(t.chain);
    const mint = await createTestMint(t.chain, signer, { decimals: 6 });
    const key = 'x'.repeat(88);
    const owner = await createTestKey();
    const post = (payload: string, headers: Record<string, string> = {}) => ({
      method: 'POST' as const,
      url: BURN.path,
      headers: { 'content-type': 'application/json', ...headers },
      payload,
    });
    const body = (fields: Record<string, unknown>) => JSON.stringify({ mint, priorityFee: 0, userPrivateKey: key, ...fields });
    const codes = [
      await provoke(BURN, post('{')),
      await provoke(BURN, post('[]')),
      await provoke(BURN, post('{}')),
      await provoke(BURN, post(body({ extra: 1 }))),
      await provoke(BURN, post(body({ mint: 'not-a-mint' }))),
      await provoke(BURN, post(body({ priorityFee: -1 }))),
      await provoke(BURN, post(body({}))),
      await provoke(BURN, post(body({ mint: owner.address, userPrivateKey: owner.base58SecretKey }))),
      await provoke(BURN, post(body({ userPrivateKey: owner.base58SecretKey }))),
      await provoke(BURN, post(body({}), { 'idempotency-key': '\u00e9' })),
      await provoke(BURN, post('x'.repeat(17 * 1024))),
      await provoke(BURN, { method: 'POST', url: BURN.path, headers: { 'content-type': 'text/plain' }, payload: 'hello' }),
    ];
    assert.deepEqual(new Set(codes), new Set(['INVALID_JSON', 'VALIDATION_FAILED', 'MISSING_FIELD', 'UNKNOWN_FIELD', 'INVALID_MINT', 'INVALID_PRIORITY_FEE', 'INVALID_PRIVATE_KEY', 'MINT_NOT_FOUND', 'NO_TOKEN_ACCOUNT', 'INVALID_IDEMPOTENCY_KEY', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']));
  });

  it('generate_wallets', async () => {
    const get = (query: string) => ({ method: 'GET' as const, url: `${WALLETS.path}${query}` });
    const codes = [await provoke(WALLETS, get('')), await provoke(WALLETS, get('?n=0')), await provoke(WALLETS, get('?n=1&mnemonic=13')), await provoke(WALLETS, get('?n=1&x=1'))];
    assert.deepEqual(codes, ['MISSING_FIELD', 'INVALID_N', 'INVALID_PARAMETER', 'UNKNOWN_FIELD']);
  });

  it('get_transaction', async () => {
    const unknown = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';
    assert.equal(await provoke(STATUS, { method: 'GET', url: '/api/transactions/nope' }), 'INVALID_SIGNATURE');
    assert.equal(await provoke(STATUS, { method: 'GET', url: `/api/transactions/${unknown}` }), 'TRANSACTION_NOT_FOUND');
  });

  it('authentication and rate limits', async () => {
    const strict = await createTestApp({ apiKeys: ['test-key-1'], rateLimit: { burnPerMin: 1, generatePerMin: 1, walletsPerMin: 5 } }, { chain: t.chain });
    try {
      for (const where of [BURN, WALLETS, STATUS]) {
        const url = where === WALLETS ? `${where.path}?n=1` : where.path.replace('{signature}', 'x');
        assert.equal(await provoke(where, { method: where.method.toUpperCase() as 'GET', url }, strict.app), 'UNAUTHORIZED');
      }
      const authorised = { authorization: 'Bearer test-key-1' };
      await strict.app.inject({ method: 'GET', url: `${WALLETS.path}?n=1`, headers: authorised });
      assert.equal(await provoke(WALLETS, { method: 'GET', url: `${WALLETS.path}?n=1`, headers: authorised }, strict.app), 'RATE_LIMITED');
    } finally {
      await strict.close();
    }
  });

  it('all of them are listed under their status', () => {
    assert.ok(observed.length >= 20);
    for (const { where, status, code } of observed) {
      const response = operation(where).responses[String(status)];
      assert.ok(response, `${where.method.toUpperCase()} ${where.path} documents status ${status} (seen with ${code})`);
      assert.ok(response['x-problem-codes']?.includes(code), `${where.method.toUpperCase()} ${where.path} ${status} lists ${code}`);
    }
  });
});

describe('GET /docs', () => {
  it('loads the document from /openapi.json, the address the README gives', async () => {
    const initializer = await t.app.inject('/docs/static/swagger-initializer.js');
    assert.equal(initializer.statusCode, 200);
    assert.match(initializer.body, /"urls":\[\{"url":"\/openapi\.json","name":"\/openapi\.json"\}\]/);
  });

  it('serves Swagger UI and its assets from this server (no CDN)', async () => {
    const page = await t.app.inject('/docs');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('swagger-ui-bundle.js')));
    for (const asset of assets) {
      assert.ok(!/^(https?:)?\/\//.test(asset), `${asset} is served locally`);
      const response = await t.app.inject(asset.startsWith('/') ? asset : `/docs/${asset}`);
      assert.equal(response.statusCode, 200, asset);
    }
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /connect-src 'self'/);
  });
});
