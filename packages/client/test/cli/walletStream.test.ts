/**
 * `cinder wallets` streamed (SDK streamWallets) against the real app on the embedded chain, through
 * a small HTTP relay that records the server's answer byte for byte (and, for one test, cuts the
 * connection part way): the output is exactly what was streamed (JSON: the same document as
 * JSON.stringify of the whole answer; CSV: its lines), in one request; a progress bar is drawn on
 * a terminal (script(1)), with the keys tried of a vanity search; an interrupted stream, and a
 * stream that the server ends with its error line, are a clear error with exit code 1 that leaves
 * no --out file; no key is ever printed on standard error.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp } from '@cinder/testkit';
import { BIN, cinder, dir, t, url, useCliApp, type Run } from './cliFixture.ts';

useCliApp('cinder-stream-');

interface Keypair {
  address: string;
  privateKey: string;
  mnemonic?: string;
}

/** A relay in front of `target`: records each answer's body; `cutAfterBytes` ends the connection after that much of it. */
async function startRelay(target: string, options: { cutAfterBytes?: number } = {}) {
  const answers: { path: string; accept: string; body: Buffer }[] = [];
  const server: Server = createServer((req, res) => {
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      const record = { path: req.url ?? '', accept: String(req.headers.accept), body: Buffer.alloc(0) };
      answers.push(record);
      const parts: Buffer[] = [];
      let size = 0;
      let cut = false;
      answer.on('data', (chunk: Buffer) => {
        // Nothing after the cut: more chunks can arrive before the socket is destroyed, and one
        // written after the head would splice two lines into one that is not JSON.
        if (cut) return;
        if (options.cutAfterBytes !== undefined && size + chunk.length > options.cutAfterBytes) {
          cut = true;
          answer.pause();
          const head = chunk.subarray(0, options.cutAfterBytes - size);
          parts.push(head);
          record.body = Buffer.concat(parts);
          res.write(head, () => {
            res.socket?.destroy();
            answer.destroy();
          });
          return;
        }
        size += chunk.length;
        parts.push(chunk);
        res.write(chunk);
      });
      answer.on('end', () => {
        record.body = Buffer.concat(parts);
        res.end();
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const keypairsOf = (body: Buffer) =>
  body
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Keypair & { keysTried?: number })
    .filter((line): line is Keypair => 'address' in line);

function assertNoKeyIn(text: string, keypairs: readonly Keypair[]) {
  for (const k of keypairs) assert.ok(!text.includes(k.privateKey), 'no key on standard error');
}

/** Runs cinder on a pseudo-terminal (script(1)): what it draws on standard error is in stdout. */
function onTerminal(args: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile('script', ['-qfec', `${BIN} ${args}`, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, TERM: 'xterm' }, timeout: 300_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('cinder wallets, streamed', () => {
  let relay: Awaited<ReturnType<typeof startRelay>>;
  before(async () => {
    relay = await startRelay(url);
  });
  after(() => relay.close());

  it('json --out: the file is the document of exactly the wallets streamed, in one request', { timeout: 300_000 }, async () => {
    relay.answers.length = 0;
    const run = await cinder(['wallets', '-n', '3000', '--out', 'streamed.json', '--url', relay.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(relay.answers.length, 1, 'one streamed request for all 3,000 (plain wallets are not cut into --batch-size streams of 1,000)');
    assert.match(relay.answers[0]!.accept, /application\/x-ndjson/);
    const keypairs = keypairsOf(relay.answers[0]!.body);
    assert.equal(keypairs.length, 3000);
    const file = join(dir, 'streamed.json');
    const text = await readFile(file, 'utf8');
    assert.equal(text, `${JSON.stringify({ wallets: keypairs.map((k) => k.address), keypairs }, null, 2)}\n`, 'the same document as the whole answer');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.deepEqual((await readdir(dir)).filter((name) => name.includes('.tmp')), [], 'the held keypairs file is gone');
    assert.equal(run.stderr, `Wrote 3000 wallets to ${file}\n`);
    assertNoKeyIn(run.stderr, keypairs);
  });

  it('json and csv to standard output: exactly what was streamed', async () => {
    relay.answers.length = 0;
    const json = await cinder(['wallets', '-n', '40', '--url', relay.url]);
    assert.equal(json.code, 0, json.stderr);
    const keypairs = keypairsOf(relay.answers[0]!.body);
    assert.equal(json.stdout, `${JSON.stringify({ wallets: keypairs.map((k) => k.address), keypairs }, null, 2)}\n`);
    const csv = await cinder(['wallets', '-n', '25', '--format', 'csv', '--url', relay.url]);
    assert.equal(csv.code, 0, csv.stderr);
    const streamed = keypairsOf(relay.answers[1]!.body);
    assert.equal(csv.stdout, `address,privateKey\n${streamed.map((k) => `${k.address},${k.privateKey}\n`).join('')}`);
    assert.equal(json.stderr + csv.stderr, '', 'no progress bar off a terminal, and no key');
  });

  it('draws a progress bar on a terminal: wallets made / n, and for a vanity search matches and keys tried', { skip: !hasScript && 'needs script(1)', timeout: 300_000 }, async () => {
    relay.answers.length = 0;
    const plain = await onTerminal(`wallets -n 5000 --format csv --out bar.csv --url ${relay.url}`);
    assert.equal(plain.code, 0, plain.stdout);
    assert.match(plain.stdout, /wallets \[[^\]]*\] 100% \| 5000\/5000/);
    const lines = (await readFile(join(dir, 'bar.csv'), 'utf8')).trimEnd().split('\n');
    assert.equal(lines.length, 5001);
    assert.deepEqual(lines.slice(1), keypairsOf(relay.answers[0]!.body).map((k) => `${k.address},${k.privateKey}`));

    const vanity = await onTerminal(`wallets -n 3 --suffix z --format csv --out vanity.csv --url ${relay.url}`);
    assert.equal(vanity.code, 0, vanity.stdout);
    assert.match(vanity.stdout, /matches \[[^\]]*\] 100% \| 3\/3 \| \S+ \| [\d,]+ keys tried/);
    const found = keypairsOf(relay.answers[1]!.body);
    assert.equal(found.length, 3);
    assert.ok(found.every((k) => k.address.endsWith('z')));
    for (const run of [plain, vanity]) assertNoKeyIn(run.stdout, [...keypairsOf(relay.answers[0]!.body), ...found]);
  });

  it('a stream cut part way is an error (exit 1) that says how far it got, and leaves no file', { timeout: 300_000 }, async () => {
    const cutting = await startRelay(url, { cutAfterBytes: 50_000 });
    try {
      for (const format of ['json', 'csv']) {
        const out = `cut.${format}`;
        const run = await cinder(['wallets', '-n', '20000', '--format', format, '--out', out, '--url', cutting.url]);
        assert.equal(run.code, 1, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(`^cinder: the server's wallet stream stopped after \\d+ of 20000 wallets: NETWORK_ERROR: The stream broke after \\d+ of 20000 wallets: the connection to http://127\\.0\\.0\\.1:\\d+ was cut; ${join(dir, out).replaceAll('.', '\\.')} was removed\\n$`),
        );
        const got = Number(/after (\d+) of/.exec(run.stderr)![1]);
        assert.ok(got > 0 && got < 20000, `some wallets came before the cut (${got})`);
        await assert.rejects(stat(join(dir, out)), { code: 'ENOENT' });
        assertNoKeyIn(run.stderr, keypairsOf(cutting.answers.at(-1)!.body.subarray(0, cutting.answers.at(-1)!.body.lastIndexOf(10) + 1)));
      }
      assert.deepEqual((await readdir(dir)).filter((name) => name.includes('.tmp')), [], 'no held keypairs file is left');
    } finally {
      await cutting.close();
    }
  });

  it("the server's closing error line (a vanity search past VANITY_MAX_MS) is the error, exit 1", { timeout: 300_000 }, async () => {
    const short = await createTestApp({ vanityMaxMs: 300 }, { chain: t.chain });
    try {
      const shortUrl = await short.app.listen({ host: '127.0.0.1', port: 0 });
      const run = await cinder(['wallets', '-n', '1', '--prefix', '1111', '--out', 'never.json', '--url', shortUrl]);
      assert.equal(run.code, 1, run.stderr);
      // After a progress line the stream had begun; before any, it is reported as any answer of the server.
      assert.match(run.stderr, /^cinder: (the server's wallet stream stopped after 0 of 1 wallets: )?VANITY_TIMEOUT \(HTTP 422\): Found 0 of 1 addresses with prefix "1111" in \d+ ms; \d+ keys tried\./);
      await assert.rejects(stat(join(dir, 'never.json')), { code: 'ENOENT' });
    } finally {
      await short.close();
    }
  });
});
