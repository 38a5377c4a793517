/**
 * Large-wallet preview benchmark: `npm run bench:preview` (a minute or two).
 *
 * Forks bench/previewServer.ts (the real app on the embedded local chain, with a wallet of
 * BENCH_ACCOUNTS = 3,000 empty token accounts, half of each token program, each of its own mint)
 * twice, and measures from this process, over HTTP on loopback, with the chain placed two ways:
 *   - embedded: in the service's process, as `npm start` runs it without SOLANA_RPC_URL: the
 *     chain's work (encoding thousands of accounts as JSON, simulating) shares the event loop;
 *   - separate: in a process of its own, as a real cluster's RPC node is another machine: what
 *     the service itself costs.
 * For each:
 *   1. the baseline: GET /health latency on the idle server;
 *   2. the chain's own part: the reads a preview makes, asked of the chain directly;
 *   3. GET /api/reclaim_rent?owner= of the large wallet, one at a time: the first, then the median
 *      and p95 of SINGLE_RUNS, and the CPU time (user + system) each one costs the service's
 *      process (and the chain's, when separate): unlike the wall time, it does not depend on what
 *      else the machine runs;
 *   4. five such previews at once, while GET /health is asked every 20 ms: how long the previews
 *      take, the /health latency throughout (median, p99, max), the server's longest event-loop
 *      stall, and its memory (RSS after, peak RSS, heap).
 * Targets: one preview ≤ 0.5 s; /health ≤ 200 ms throughout five at once.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { getAddressDecoder } from '@solana/kit';
import { ask, forkServer } from './childServer.ts';
import type { ChainPlacement, PreviewServerReady, PreviewServerStats } from './previewServer.ts';

const SINGLE_RUNS = 20;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const median = (xs: number[]) => percentile(xs, 50);
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const addressDecoder = getAddressDecoder();
const sleep = (delay: number) => new Promise((resolve) => setTimeout(resolve, delay));

function startServer(chain: ChainPlacement) {
  process.env.PREVIEW_CHAIN = chain; // the child's environment
  return forkServer<PreviewServerReady>(new URL('./previewServer.ts', import.meta.url), ['--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--cpu-prof'))]);
}

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

interface Figures {
  idle: number[];
  chainRead: number;
  first: number;
  single: number[];
  /** CPU ms per preview: the service's process (with the chain in it when embedded), and the chain's own process. */
  cpu: number;
  chainCpu: number | null;
  summary: { accounts: number; close: number; transactions: number };
  five: number[];
  fiveWall: number;
  during: number[];
  stats: PreviewServerStats;
}

async function main(): Promise<void> {
  const figures = new Map<ChainPlacement, Figures>();
  let ready: PreviewServerReady | undefined;
  const load = loadavg();
  for (const chain of ['embedded', 'separate'] as const) {
    const server = await startServer(chain);
    ready = server.ready;
    try {
      figures.set(chain, await measure(server.child, server.ready));
    } finally {
      server.child.send({ type: 'stop' });
    }
  }
  report(ready!, figures.get('embedded')!, figures.get('separate')!, load);
}

async function measure(child: ChildProcess, ready: PreviewServerReady): Promise<Figures> {
  const previewUrl = `${ready.url}/api/reclaim_rent?owner=${ready.owner}`;
  const healthUrl = `${ready.url}/health`;

  // 1. The baseline: /health on the idle server.
  const idle: number[] = [];
  for (let i = 0; i < 100; i++) idle.push((await timed(healthUrl)).ms);

  // 2. The chain alone: the reads a preview makes (both programs' token accounts, then the mints
  // 100 at a time), timed from here.
  const chainRead = await timeChainReads(ready);

  // 3. One preview at a time, with the CPU time the processes spend on them.
  const first = await preview(previewUrl);
  const before = await ask<PreviewServerStats>(child, 'stats');
  const single: number[] = [];
  for (let i = 0; i < SINGLE_RUNS; i++) single.push(await preview(previewUrl));
  const after = await ask<PreviewServerStats>(child, 'stats');
  const sample = JSON.parse((await timed(previewUrl)).body) as { summary: Figures['summary'] };

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
  return {
    idle,
    chainRead,
    first,
    single,
    cpu: (after.cpuMs - before.cpuMs) / SINGLE_RUNS,
    chainCpu: after.chainCpuMs === null ? null : (after.chainCpuMs - before.chainCpuMs!) / SINGLE_RUNS,
    summary: sample.summary,
    five,
    fiveWall,
    during,
    stats,
  };
}

function report(ready: PreviewServerReady, embedded: Figures, separate: Figures, load: number[]): void {
  const both = (f: (x: Figures) => string) => [f(embedded), f(separate)] as const;
  const rows: [string, string, string, string][] = [
    ['/health latency, idle (baseline): median / max', ...both((x) => `${ms(median(x.idle))} / ${ms(Math.max(...x.idle))}`), ''],
    [
      `one preview: median / p95 of ${SINGLE_RUNS} (first)`,
      ...both((x) => `${ms(median(x.single))} / ${ms(percentile(x.single, 95))} (${ms(x.first)})`),
      'target ≤ 0.5 s: ' + both((x) => (median(x.single) <= 500 ? 'met' : 'NOT met')).join(' / '),
    ],
    ['CPU (user + sys) per preview: service process', ...both((x) => ms(x.cpu)), 'load-independent'],
    ['CPU (user + sys) per preview: chain process', ...both((x) => (x.chainCpu === null ? '(in the service)' : ms(x.chainCpu))), ''],
    ["the chain alone: its answers to a preview's reads", ...both((x) => ms(x.chainRead)), ''],
    ['5 previews at once: slowest / wall', ...both((x) => `${ms(Math.max(...x.five))} / ${ms(x.fiveWall)}`), ''],
    [
      '/health latency during 5 previews: median / p99 / max',
      ...both((x) => `${ms(median(x.during))} / ${ms(percentile(x.during, 99))} / ${ms(Math.max(...x.during))}`),
      'target ≤ 200 ms: ' + both((x) => (Math.max(...x.during) <= 200 ? 'met' : 'NOT met')).join(' / '),
    ],
    ['server event loop during the 5: p99 / longest stall', ...both((x) => `${ms(x.stats.loopP99)} / ${ms(x.stats.loopMax)}`), ''],
    ['server memory after the 5: RSS / peak RSS / heap', ...both((x) => `${mib(x.stats.rss)} / ${mib(x.stats.maxRss)} / ${mib(x.stats.heapUsed)}`), ''],
  ];
  const { summary } = embedded;
  console.log(
    `\nPreview of a wallet with ${ready.accounts.toLocaleString('en-US')} empty token accounts (${ready.mints.toLocaleString('en-US')} mints, both programs): ` +
      `${summary.close} to close in ${summary.transactions} transactions. Load average at the start: ${load.map((l) => l.toFixed(2)).join(', ')}\n`,
  );
  const width = Math.max(...rows.map((r) => r[0].length));
  const column = Math.max(26, ...rows.flatMap((r) => [r[1].length, r[2].length]));
  console.log(`${''.padEnd(width)}  ${'chain embedded'.padEnd(column)}  ${'chain separate'.padEnd(column)}`);
  for (const [name, a, b, target] of rows) console.log(`${name.padEnd(width)}  ${a.padEnd(column)}  ${b.padEnd(column)}  ${target}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
