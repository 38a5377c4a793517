/**
 * isCinderApiError(error, code): true only for a CinderApiError of that code (any code when none is
 * given), and a match narrows `error.code` to the code asked for and `error.extensions` to the
 * problem members the server's catalogue declares for it (checked by the type check: the
 * assignments below compile only while it narrows). The errors are real ones: a problem+json
 * answer of a scripted server, and the client's own INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CinderApiError, createCinderClient, isCinderApiError } from '../../src/index.ts';
import { startFormBServer, type FormBServer } from './formBServer.ts';

let server: FormBServer;
before(async () => {
  server = await startFormBServer();
});
after(async () => {
  await server.close();
});

it('matches a CinderApiError by its code and narrows error.code', async () => {
  const client = createCinderClient({ baseUrl: server.url, retry: { retries: 0 } });
  server.script({
    status: 400,
    body: { type: 'urn:cinder:problem:nothing-to-reclaim', title: 'Nothing to reclaim', status: 400, detail: 'No account to close', code: 'NOTHING_TO_RECLAIM' },
    headers: { 'content-type': 'application/problem+json' },
  });
  const error: unknown = await client.reclaimRent({ userPrivateKey: 'k', priorityFee: 0 }).then(
    () => assert.fail('expected a rejection'),
    (rejection: unknown) => rejection,
  );
  assert.ok(error instanceof CinderApiError);
  assert.equal(isCinderApiError(error), true);
  assert.equal(isCinderApiError(error, 'NOTHING_TO_RECLAIM'), true);
  assert.equal(isCinderApiError(error, 'RATE_LIMITED'), false);
  if (!isCinderApiError(error, 'NOTHING_TO_RECLAIM')) assert.fail('expected NOTHING_TO_RECLAIM');
  const code: 'NOTHING_TO_RECLAIM' = error.code;
  assert.equal(code, 'NOTHING_TO_RECLAIM');
  assert.equal(error.status, 400);
});

it('matches the client\'s own codes, and nothing that is not a CinderApiError', async () => {
  const client = createCinderClient({ baseUrl: server.url });
  const error: unknown = await client.getTransaction('').catch((rejection: unknown) => rejection);
  assert.equal(isCinderApiError(error, 'INVALID_ARGUMENT'), true);
  if (isCinderApiError(error, 'INVALID_ARGUMENT')) {
    const code: 'INVALID_ARGUMENT' = error.code;
    assert.equal(code, 'INVALID_ARGUMENT');
  }
  const lookalike = Object.assign(new Error('INVALID_ARGUMENT'), { code: 'INVALID_ARGUMENT', status: 0 });
  assert.equal(isCinderApiError(lookalike), false);
  assert.equal(isCinderApiError(lookalike, 'INVALID_ARGUMENT'), false);
  assert.equal(isCinderApiError(undefined), false);
});

it("narrows a code's problem members: error.extensions holds the body's members beyond the standard ones", async () => {
  const client = createCinderClient({ baseUrl: server.url, retry: { retries: 0 } });
  server.script({
    status: 422,
    body: {
      type: 'urn:cinder:problem:vanity-timeout',
      title: 'Vanity search timed out',
      status: 422,
      detail: 'Found 0 of 1 addresses with prefix "abc" in 10 ms; 5120 keys tried.',
      code: 'VANITY_TIMEOUT',
      errors: [{ field: 'prefix', message: 'took too long' }],
      keysTried: 5120,
    },
    headers: { 'content-type': 'application/problem+json' },
  });
  const error: unknown = await client.generateWallets(1, { prefix: 'abc' }).then(
    () => assert.fail('expected a rejection'),
    (rejection: unknown) => rejection,
  );
  if (!isCinderApiError(error, 'VANITY_TIMEOUT')) return assert.fail(`expected VANITY_TIMEOUT, got ${String(error)}`);
  const keysTried: number = error.extensions.keysTried;
  assert.equal(keysTried, 5120);
  assert.deepEqual(error.extensions, { keysTried: 5120 });
  assert.equal(error.problem?.keysTried, 5120);
  assert.deepEqual(error.errors, [{ field: 'prefix', message: 'took too long' }]);

  const own: unknown = await client.getTransaction('').catch((rejection: unknown) => rejection);
  assert.ok(isCinderApiError(own, 'INVALID_ARGUMENT'));
  assert.deepEqual(own.extensions, {});
});
