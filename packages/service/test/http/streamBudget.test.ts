/**
 * The wallets budget of a streamed generate_wallets request over a real socket (see
 * docs/api-keys-and-limits.md): with RATE_LIMIT_WALLETS_PER_MIN = 50, a stream of n = 60 is not
 * refused; it pauses once its client has 50 wallets (the window is a minute, so this test waits
 * for one reset), while another client's request is served at once and the same client's JSON
 * request is a 429; then it completes. A JSON request above the budget keeps its up-front 429.
 * Waits on conditions (the route's log line, the stream's end), never on durations.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '@cinder/testkit';

const BUDGET = 50;

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('a streamed request pays its wallets as it goes', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ rateLimit: { burnPerMin: 10, generatePerMin: 100, walletsPerMin: BUDGET }, apiKeys: ['key-a', 'key-b', 'key-c'] });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t?.close());

  const json = (n: number, key: string) => fetch(`${base}/api/generate_wallets?n=${n}`, { headers: { authorization: `Bearer ${key}` } });

  it(`n = 60 with a budget of ${BUDGET}: pauses at the budget (another client unaffected), then completes after the window resets`, { timeout: 300_000 }, async () => {
    const lines: string[] = [];
    let status = 0;
    let over = false;
    const ended = new Promise<void>((resolve, reject) => {
      const req = get(`${base}/api/generate_wallets?n=60`, { headers: { accept: 'application/x-ndjson', authorization: 'Bearer key-a' } }, (res) => {
        status = res.statusCode ?? 0;
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const parts = (rest + chunk).split('\n');
          rest = parts.pop()!;
          lines.push(...parts);
        });
        res.on('end', () => {
          over = true;
          resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
    });

    const paused = () => t.logs().includes('wallets stream paused');
    await until(() => paused() || over, 'the stream to pause at its budget');
    assert.ok(paused(), `the stream paused (HTTP ${status}, ${lines.length} lines)`);
    assert.ok(lines.length <= BUDGET, `no more wallets than the budget before the window resets (${lines.length})`);
    const sameClient = await json(1, 'key-a');
    assert.equal(sameClient.status, 429, 'the same client has nothing left in this window');
    const other = await json(BUDGET, 'key-b');
    assert.equal(other.status, 200, 'another client has its whole budget');
    assert.equal(((await other.json()) as { wallets: string[] }).wallets.length, BUDGET);

    await ended;
    assert.equal(status, 200);
    const wallets = lines.map((line) => (JSON.parse(line) as { address: string }).address);
    assert.equal(wallets.length, 60, 'the stream completed');
    assert.equal(new Set(wallets).size, 60);
  });

  it('a JSON answer is still charged up front: n above the budget is a 429 at once', async () => {
    const response = await json(BUDGET + 1, 'key-c');
    assert.equal(response.status, 429);
    assert.match(((await response.json()) as { detail: string }).detail, /^n=51 is more than the budget of 50 wallets per minute per client/);
  });
});
