/**
 * A newcomer's first hour, on the real app: the server's address is the web app, the docs page is at /docs; the docs
 * page's "Try it out" starts from a body that cannot spend anything; logs are readable lines on a
 * terminal (a real pseudo-terminal, through util-linux `script`) and JSON lines elsewhere, with
 * keys redacted in both.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { BURN_TRY_IT_OUT } from '../../src/http/openapi.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let t: TestApp;
let url: string;
before(async () => {
  t = await createTestApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
after(() => t.close());

it('GET / is the web app (test/e2e/webApp*.test.ts), and the docs page stays at /docs', async () => {
  const response = await fetch(`${url}/`, { redirect: 'manual' });
  assert.equal(response.status, 200);
  assert.match(await response.text(), /<script type="module" src="\/app\/app.js">/);
  const docs = await fetch(`${url}/docs`);
  assert.equal(docs.status, 200);
  assert.match(await docs.text(), /swagger/i);
});

it('the docs page pre-fills the burn with placeholders and no fee, and that body spends nothing', async () => {
  const document = (await (await fetch(`${url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> } }>>;
  };
  const example = document.paths['/api/burn_tokens']!.post!.requestBody!.content['application/json']!.example;
  assert.deepEqual(example, BURN_TRY_IT_OUT);
  assert.equal(BURN_TRY_IT_OUT.priorityFee, 0);
  // No real mint (the old example was mainnet USDC): nothing in it is a base58 address.
  for (const value of Object.values(BURN_TRY_IT_OUT)) assert.doesNotMatch(String(value), /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  // "Execute" as pre-filled: refused before anything is read from the chain or sent.
  const response = await fetch(`${url}/api/burn_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(example) });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { code: string }).code, 'INVALID_MINT');
});

it('LOG_FORMAT is json, pretty, or unset (auto: pretty on a terminal)', () => {
  assert.equal(loadConfig({}).logFormat, 'auto');
  assert.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
  assert.throws(() => loadConfig({ LOG_FORMAT: 'yaml' }), ConfigError);
});

it('the pretty format is one readable line per event, and still redacts keys', async () => {
  let output = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      output += chunk.toString('utf8');
      callback();
    },
  });
  const secret = '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi4k6Rr3ABZzvmE2bcmDKGEsavg6JSjdqdh2bWfdQSkT6Pk';
  const logger = createLogger('info', sink, { pretty: true });
  logger.info({ userPrivateKey: secret, body: { privateKey: secret }, route: '/api/burn_tokens' }, 'request completed');
  logger.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.match(output, /INFO.*request completed/);
  assert.ok(!output.trimStart().startsWith('{'), output);
  assert.ok(!output.includes(secret), 'the key is redacted in the pretty format too');
  assert.match(output, /\[redacted\]/);
});

it('the server writes readable log lines when its standard output is a terminal', { timeout: 120_000 }, async () => {
  // util-linux `script` runs the server on a pseudo-terminal: stdout.isTTY is true, as at a console.
  const child = spawn('script', ['-q', '-e', '-f', '-c', `${process.execPath} --import tsx src/server.ts`, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOCALNET_PORT: '0', TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const closed = new Promise((resolve) => child.once('close', resolve));
  try {
    const deadline = Date.now() + 90_000;
    while (!output.includes('Cinder listening on') && child.exitCode === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(output, /Cinder listening on/, output);
    // eslint-disable-next-line no-control-regex -- colour escapes of the terminal format
    const lines = output.replace(/\u001b\[[0-9;]*m/g, '').split(/\r?\n/);
    const started = lines.find((line) => line.includes('embedded local Solana chain started'));
    assert.ok(started, output);
    assert.match(started, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: embedded local Solana chain started/);
    assert.ok(!lines.some((line) => line.startsWith('{"level"')), `no JSON lines on a terminal:\n${output}`);
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    await closed;
  }
});
