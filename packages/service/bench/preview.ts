/**
 * Large-wallet preview benchmark: `npm run bench:preview` (about a minute).
 *
 * Forks bench/previewServer.ts (the real app on the embedded local chain, as `npm start` runs it,
 * with a wallet of BENCH_ACCOUNTS = 3,000 empty token accounts, half of each token program, each of
 * its own mint) and measures from this process, over HTTP on loopback:
 *   1. the baseline: GET /health latency on the idle server;
 *   2. the embedded chain's own part: the reads a preview makes, asked of the chain directly (it
 *      runs on the server's event loop, as with `npm start`);
 *   3. GET /api/reclaim_rent?owner= of the large wallet, one at a time (the first, then the median
 *      of 3);
 *   4. five such previews at once, while GET /health is asked every 20 ms: how long the previews
 *      take, the /health latency throughout (median, p99, max), the server's longest event-loop
 *      stall, and its memory (RSS after, peak RSS, heap).
 * Targets (issue 25): one preview ≤ 0.5 s; /health ≤ 200 ms throughout five at once.
 */
import type { ChildProcess } from 'node:child_process';
import { getAddressDecoder } from '@solana/kit';
import { ask, forkServer } from './childServer.ts';
import type { PreviewServerReady, PreviewServerStats } from './previewServer.ts';

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const median = (xs: number[]) => percentile(xs, 50);
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const addressDecoder = getAddressDecoder();
const sleep = (delay: number) => new Promise((resolve) => setTimeout(resolve, delay));

const startServer = () =>
  forkServer<PreviewServerReady>(new URL('./previewServer.ts', import.meta.url), ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--cpu-prof'))]);

/** One request, timed; the body is read to the end. */
async function timed(url: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body };
}

async function preview(url: string): Promise<number> {
  const answer = await timed(url);
  if (answer.status !== 200) throw new Error(`preview answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  const { summary } = JSON.parse(answer.body) as { summary: { close: number; transactions: number } };
  if (summary.close === 0) throw new Error(`the preview closes nothing: ${answer.body.slice(0, 300)}`);
  return answer.ms;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The chain's part of a preview: getTokenAccountsByOwner of both programs, then getMultipleAccounts of their mints. */
async function timeChainReads(ready: PreviewServerReady): Promise<number> {
  const started = performance.now();
  const programs = ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'];
  const lists = (await Promise.all(
    programs.map((programId) => rpc(ready.rpcUrl, 'getTokenAccountsByOwner', [ready.owner, { programId }, { encoding: 'base64' }])),
  )) as { value: { account: { data: [string, string] } }[] }[];
  // A token account starts with its mint.
  const mints = lists.flatMap((l) => l.value.map((a) => addressDecoder.decode(Buffer.from(a.account.data[0], 'base64').subarray(0, 32))));
  for (let i = 0; i < mints.length; i += 200) {
    await Promise.all([0, 100].map((at) => rpc(ready.rpcUrl, 'getMultipleAccounts', [mints.slice(i + at, i + at + 100), { encoding: 'base64' }])));
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  const { child, ready } = await startServer();
  try {
    await measure(child, ready);
  } finally {
    child.send({ type: 'stop' });
  }
}

async function measure(child: ChildProcess, ready: PreviewServerReady): Promise<void> {
  const previewUrl = `${ready.url}/api/reclaim_rent?owner=${ready.owner}`;
  const healthUrl = `${ready.url}/health`;

  // 1. The baseline: /health on the idle server.
  const idle: number[] = [];
  for (let i = 0; i < 100; i++) idle.push((await timed(healthUrl)).ms);

  // 2. The embedded chain alone: the reads a preview makes (both programs' token accounts, then the
  // mints 100 at a time), timed from here; the chain answers them on the server's event loop.
  const chainRead = await timeChainReads(ready);

  // 3. One preview at a time.
  const first = await preview(previewUrl);
  const single: number[] = [];
  for (let i = 0; i < 3; i++) single.push(await preview(previewUrl));
  const sample = JSON.parse((await timed(previewUrl)).body) as { summary: { accounts: number; close: number; transactions: number } };

  // 4. Five at once, /health asked every 20 ms throughout.
  await ask(child, 'reset');
  let running = true;
  const during: number[] = [];
  const poller = (async () => {
    while (running) {
      during.push((await timed(healthUrl)).ms);
      await sleep(20);
    }
  })();
  const started = performance.now();
  const five = await Promise.all(Array.from({ length: 5 }, () => preview(previewUrl)));
  const fiveWall = performance.now() - started;
  running = false;
  await poller;
  const stats = await ask<PreviewServerStats>(child, 'stats');

  const rows: [string, string, string][] = [
    ['/health latency, idle (baseline): median / max', `${ms(median(idle))} / ${ms(Math.max(...idle))}`, ''],
    [
      '/health latency during 5 previews: median / p99 / max',
      `${ms(median(during))} / ${ms(percentile(during, 99))} / ${ms(Math.max(...during))}`,
      Math.max(...during) <= 200 ? 'target ≤ 200 ms: met' : 'target ≤ 200 ms: NOT met',
    ],
    ['the embedded chain alone: its answers to a preview\'s reads', ms(chainRead), ''],
    ['one preview: first / median of 3', `${ms(first)} / ${ms(median(single))}`, median(single) <= 500 ? 'target ≤ 0.5 s: met' : 'target ≤ 0.5 s: NOT met'],
    ['5 previews at once: slowest / wall', `${ms(Math.max(...five))} / ${ms(fiveWall)}`, ''],
    ['server event loop during the 5: p99 / longest stall', `${ms(stats.loopP99)} / ${ms(stats.loopMax)}`, ''],
    ['server memory after the 5: RSS / peak RSS / heap', `${mib(stats.rss)} / ${mib(stats.maxRss)} / ${mib(stats.heapUsed)}`, ''],
  ];
  console.log(
    `\nPreview of a wallet with ${ready.accounts.toLocaleString('en-US')} empty token accounts (${ready.mints.toLocaleString('en-US')} mints, both programs): ` +
      `${sample.summary.close} to close in ${sample.summary.transactions} transactions\n`,
  );
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [name, value, target] of rows) console.log(`${name.padEnd(width)}  ${value.padEnd(28)}  ${target}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
