/**
 * GET /api/generate_wallets with Accept: application/x-ndjson, over a real socket:
 * 200,000 wallets as lines (every line parses, every address is unique, keys match addresses), the
 * hd stream, a vanity stream's progress and matches, the final error line, errors before the first
 * line as problem+json, and a client that leaves stopping the work (the generator's counters, no
 * timing).
 */
import assert from 'node:assert/strict';
import { get, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { mnemonicToSeedSync } from '@scure/bip39';
import bs58 from 'bs58';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { addressOfSeed, checkSigns, referenceSlip10 } from '@cinder/testkit';

const NDJSON = 'application/x-ndjson';
const H = 0x80000000;

interface Line {
  address?: string;
  privateKey?: string;
  path?: string;
  mnemonic?: string;
  keysTried?: number;
  error?: { code: string; status: number; detail: string };
}

/** Opens the stream; `onLine` sees each line as it arrives and may return false to hang up. */
function stream(base: string, query: string, onLine: (line: string) => boolean | void = () => {}): Promise<{ res: IncomingMessage; lines: string[]; hungUp: boolean }> {
  return new Promise((resolve, reject) => {
    const req = get(`${base}/api/generate_wallets${query}`, { headers: { accept: NDJSON } }, (res) => {
      const lines: string[] = [];
      let rest = '';
      let hungUp = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (hungUp) return;
        const parts = (rest + chunk).split('\n');
        rest = parts.pop()!;
        for (const line of parts) {
          lines.push(line);
          if (onLine(line) === false) {
            hungUp = true;
            req.destroy();
            resolve({ res, lines, hungUp });
            return;
          }
        }
      });
      res.on('end', () => {
        if (rest !== '') lines.push(rest);
        resolve({ res, lines, hungUp });
      });
      res.on('error', (error) => (hungUp ? undefined : reject(error)));
    });
    req.on('error', (error) => (error.message.includes('aborted') ? undefined : reject(error)));
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('generate_wallets streamed (application/x-ndjson)', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ vanityMaxMs: 1500, vanityTimeoutMs: 300 });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t?.close());

  it('n = 200,000 (20 times MAX_WALLETS_PER_REQUEST): one wallet per line, all parse, all unique, keys match', async () => {
    const n = 200_000;
    const { res, lines } = await stream(base, `?n=${n}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.ok(res.headers['x-request-id']);
    assert.equal(res.headers['content-length'], undefined, 'streamed, not sized in advance');
    assert.equal(lines.length, n);
    const addresses = new Set<string>();
    lines.forEach((text, i) => {
      const line = JSON.parse(text) as Line;
      assert.deepEqual(Object.keys(line), ['address', 'privateKey']);
      addresses.add(line.address!);
      if (i % 1000 === 0) {
        const secret = bs58.decode(line.privateKey!);
        assert.equal(bs58.encode(secret.subarray(32)), line.address);
        if (i % 20_000 === 0) checkSigns(secret.subarray(0, 32), line.address!);
      }
    });
    assert.equal(addresses.size, n);
  });

  it('hd=12: the phrase first, then the wallets in order, each at its path', async () => {
    const { res, lines } = await stream(base, '?n=2500&hd=12');
    assert.equal(res.statusCode, 200);
    const [first, ...wallets] = lines.map((l) => JSON.parse(l) as Line);
    assert.deepEqual(Object.keys(first!), ['mnemonic']);
    assert.equal(wallets.length, 2500);
    const seed = mnemonicToSeedSync(first!.mnemonic!);
    wallets.forEach((w, i) => {
      assert.equal(w.path, `m/44'/501'/${i}'/0'`);
      if (i % 250 === 0 || i === 2499) assert.equal(addressOfSeed(referenceSlip10(seed, [44 + H, 501 + H, i + H, H])), w.address);
    });
  });

  it('a vanity search streams its matches and its progress, the total last', async () => {
    // Its own app, whose search bound no busy machine reaches: this app's 1.5 s bound is for the
    // timeout test, and three matches of "Zz" take about 2,500 keys, which a loaded machine may not
    // try in 1.5 s.
    const roomy = await createTestApp({ vanityMaxMs: 300_000 });
    const roomyBase = await roomy.app.listen({ host: '127.0.0.1', port: 0 });
    const { res, lines } = await stream(roomyBase, '?n=3&suffix=Zz&ignoreCase=true').finally(() => roomy.close());
    assert.equal(res.statusCode, 200);
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    const matches = parsed.filter((l) => l.address !== undefined);
    assert.equal(matches.length, 3);
    for (const m of matches) assert.match(m.address!, /[zZ][zZ]$/);
    const progress = parsed.filter((l) => l.keysTried !== undefined);
    assert.ok(progress.length >= 1);
    assert.deepEqual(Object.keys(parsed.at(-1)!), ['keysTried']);
    assert.ok(parsed.at(-1)!.keysTried! >= 3);
  });

  it('past VANITY_MAX_MS (not the 30 s of the JSON answer): a last line {"error": VANITY_TIMEOUT problem}', async () => {
    // vanityTimeoutMs is 300 ms here: the stream outlives it and ends at vanityMaxMs (1.5 s).
    const { res, lines } = await stream(base, '?n=1&prefix=1111');
    assert.equal(res.statusCode, 200);
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    assert.ok(parsed.slice(0, -1).every((l) => typeof l.keysTried === 'number'), 'progress lines before the error');
    const last = parsed.at(-1)!;
    assert.equal(last.error?.code, 'VANITY_TIMEOUT');
    assert.equal(last.error?.status, 422);
    assert.match(last.error!.detail, /in 1500 ms/);
  });

  it('errors before the first line are problem+json; the streamed limit is MAX_WALLETS_STREAMED', async () => {
    const over = await stream(base, '?n=1000001');
    assert.equal(over.res.statusCode, 400);
    assert.equal(over.res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.match(JSON.parse(over.lines.join('\n')).detail as string, /^n must be at most 1000000 when streamed \(MAX_WALLETS_STREAMED\)$/);
    // Vanity and mnemonic= keep the general limit when streamed.
    const vanity = await stream(base, '?n=10001&suffix=a');
    assert.equal(vanity.res.statusCode, 400);
    assert.match(JSON.parse(vanity.lines.join('\n')).detail as string, /MAX_WALLETS_PER_REQUEST/);
  });

  it('a client that hangs up ends the stream: the handler sees it and stops', async () => {
    let seen = 0;
    const { hungUp } = await stream(base, '?n=1000000', () => ++seen < 2000);
    assert.ok(hungUp);
    await until(() => t.logs().includes('client closed the connection during its wallets stream'), 'the route to notice');
  });
});

describe('WalletGenerator.stream: a consumer that leaves stops the work', () => {
  const generator = createWalletGenerator({ vanityTimeoutMs: 30_000, threads: 2 });
  after(() => generator.close());

  it('1,000,000 asked, aborted after 2,000 lines: the tasks in flight finish, no more start, the queue empties', async () => {
    const controller = new AbortController();
    let lines = 0;
    const streaming = generator.stream({ n: 1_000_000, signal: controller.signal }, async (chunk) => {
      lines += chunk.reduce((count, byte) => count + (byte === 0x0a ? 1 : 0), 0);
      chunk.fill(0);
      if (lines >= 2000) controller.abort(new Error('consumer left'));
    });
    await assert.rejects(streaming, /consumer left/);
    await until(() => generator.activity().streamTasksRunning === 0, 'the pool to go idle');
    const { queuedWallets, streamTasksStarted } = generator.activity();
    assert.equal(queuedWallets, 0);
    // 1,000,000 wallets are ~3,900 tasks of 256; the stream started only those ahead of the consumer.
    assert.ok(streamTasksStarted < 100, `${streamTasksStarted} tasks started`);
    const started = streamTasksStarted;
    // Nothing starts later either: another request runs and the count does not move.
    assert.equal((await generator.generate({ n: 2000 })).count, 2000);
    assert.equal(generator.activity().streamTasksStarted, started);
  });
});
