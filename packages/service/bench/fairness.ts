/**
 * What another client waits for while someone tries to hold generate_wallets: `npm run
 * bench:fairness` (about 2 minutes). Starts the service as `npm start` does (`src/server.ts`,
 * with an RPC URL so that no local chain shares the process; the wallets routes never call it)
 * and, from distinct loopback addresses (127.0.0.x, one client each), measures:
 *   1. the first large request after start (the pool's threads start then; its tasks run on the
 *      main thread until they are up) against the next ones;
 *   2. another client's n=9 and n=1000 (and a search for `ab`) with no attack;
 *   3. the same under "unread streams": 48 streams of n=1,000,000 from each of 5 addresses, each
 *      reading the response head and nothing more;
 *   4. the same under "vanity streams": 55 streamed searches for `zzzz` (n=1) from each of 2
 *      addresses;
 * with the default limits, and again with the per-client caps raised to let the whole attack in
 * (what remains is the read timeout, set to 5 s there, and the pool's turns; the queue there is
 * sized so that 10 unread streams fill it). Each figure is the
 * median of 5 requests made one after another; all in the same run, on the same machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const REPS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);

interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startService(env: Record<string, string>): Promise<Server> {
  const stateDir = mkdtempSync(join(tmpdir(), 'cinder-bench-fairness-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      SOLANA_RPC_URL: 'http://127.0.0.1:9',
      HOST: '127.0.0.1',
      PORT: '0',
      STATE_DIR: stateDir,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      API_KEYS: '',
      REDIS_URL: '',
      // The attack is about the pool, not the budgets: these would refuse it long before.
      RATE_LIMIT_GENERATE_PER_MIN: '1000000',
      RATE_LIMIT_WALLETS_PER_MIN: '1000000000',
      RATE_LIMIT_STATUS_PER_MIN: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /Cinder listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code})`)));
  });
  return {
    url,
    child,
    async stop() {
      process.off('exit', orphan);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** One GET from `localAddress`, read to the end: its status and how long it took. */
function timedGet(base: string, path: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { localAddress, headers, agent: false }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A stream that reads its head and nothing more; its status once the head has arrived. */
function unreadStream(base: string, query: string, localAddress: string): Promise<{ status: number; socket: Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let head = '';
    socket.on('error', () => {});
    socket.setEncoding('latin1');
    socket.write(`GET /api/generate_wallets${query} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: application/x-ndjson\r\n\r\n`);
    const onData = (chunk: string) => {
      head += chunk;
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), socket });
    };
    socket.on('data', onData);
    socket.once('close', () => resolve({ status: 0, socket }));
  });
}

/**
 * A streamed search its client reads (and so keeps running until VANITY_MAX_MS or the client
 * leaves); `status` resolves with the response head (an admitted search sends it with its first
 * progress line, after its first slice).
 */
function readStream(base: string, query: string, localAddress: string): { status: Promise<number>; close(): void } {
  let headed: (status: number) => void = () => {};
  const status = new Promise<number>((resolve) => (headed = resolve));
  const req = httpRequest(`${base}/api/generate_wallets${query}`, { localAddress, agent: false, headers: { accept: 'application/x-ndjson' } }, (res) => {
    headed(res.statusCode ?? 0);
    res.on('data', () => {});
    res.on('error', () => {});
  });
  req.on('error', () => headed(0));
  req.end();
  return { status, close: () => req.destroy() };
}

const OTHER = '127.0.0.99';
const PROBES = [
  { name: 'n=9', path: '/api/generate_wallets?n=9', headers: {} },
  { name: 'n=1000', path: '/api/generate_wallets?n=1000', headers: {} },
  { name: 'search `ab` (streamed)', path: '/api/generate_wallets?n=1&prefix=ab', headers: { accept: 'application/x-ndjson' } },
] as const;

/** Each probe REPS times in turn: the median wait, and the statuses seen. */
async function probe(base: string): Promise<Map<string, { ms: number; statuses: string }>> {
  const result = new Map<string, { ms: number; statuses: string }>();
  for (const p of PROBES) {
    const runs: { status: number; ms: number }[] = [];
    for (let i = 0; i < REPS; i++) runs.push(await timedGet(base, p.path, OTHER, p.headers));
    const counts = new Map<number, number>();
    for (const r of runs) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
    result.set(p.name, { ms: median(runs.map((r) => r.ms)), statuses: [...counts].map(([s, c]) => `${c}×${s}`).join(' ') });
  }
  return result;
}

/** Polls another client's n=1000 until it is a 200: how long that took from `since`. */
async function untilServed(base: string, since: number, limitMs: number): Promise<number | null> {
  while (performance.now() - since < limitMs) {
    if ((await timedGet(base, '/api/generate_wallets?n=1000', OTHER)).status === 200) return performance.now() - since;
    await sleep(100);
  }
  return null;
}

interface Attack {
  name: string;
  start(base: string): Promise<{ admitted: number; refused: Record<string, number>; stop(): void }>;
}

const ATTACKS: Attack[] = [
  {
    name: 'unread streams: 5 addresses × 48 of n=1,000,000',
    async start(base) {
      const opened = await Promise.all(
        [21, 22, 23, 24, 25].flatMap((a) => Array.from({ length: 48 }, () => unreadStream(base, '?n=1000000', `127.0.0.${a}`))),
      );
      return tally(opened.map((o) => o.status), () => opened.forEach((o) => o.socket.destroy()));
    },
  },
  {
    name: 'vanity streams: 2 addresses × 55 for zzzz (n=1)',
    async start(base) {
      const streams = [41, 42].flatMap((a) => Array.from({ length: 55 }, () => readStream(base, '?n=1&prefix=zzzz', `127.0.0.${a}`)));
      const statuses = await Promise.all(streams.map((s) => s.status));
      return tally(statuses, () => streams.forEach((s) => s.close()));
    },
  },
];

function tally(statuses: number[], stop: () => void) {
  const refused: Record<string, number> = {};
  for (const s of statuses) if (s !== 200) refused[String(s)] = (refused[String(s)] ?? 0) + 1;
  return { admitted: statuses.filter((s) => s === 200).length, refused, stop };
}

function printProbes(label: string, results: Map<string, { ms: number; statuses: string }>, baseline?: Map<string, { ms: number; statuses: string }>) {
  for (const [name, r] of results) {
    const base = baseline?.get(name);
    const ratio = base ? ` (${(r.ms / base.ms).toFixed(1)}× the no-attack wait)` : '';
    console.log(`  ${label.padEnd(14)} ${name.padEnd(24)} ${ms(r.ms).padStart(9)}  ${r.statuses}${ratio}`);
  }
}

async function firstLargeRequest(): Promise<void> {
  console.log(`\n1. The first large request after start (its tasks run on the main thread while the pool's ${availableParallelism()} threads start), 3 starts:`);
  const firsts: number[] = [];
  const nexts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const server = await startService({});
    try {
      await timedGet(server.url, '/health', OTHER);
      await timedGet(server.url, '/api/generate_wallets?n=8', OTHER); // inline: warms the route, not the pool
      firsts.push((await timedGet(server.url, '/api/generate_wallets?n=1000', OTHER)).ms);
      const after: number[] = [];
      for (let r = 0; r < REPS; r++) after.push((await timedGet(server.url, '/api/generate_wallets?n=1000', OTHER)).ms);
      nexts.push(median(after));
    } finally {
      await server.stop();
    }
  }
  const first = median(firsts);
  const next = median(nexts);
  console.log(`  first n=1000: ${firsts.map(ms).join(', ')} (median ${ms(first)}); the next ones: median ${ms(next)}; the first pays about ${ms(first - next)}`);
}

async function scenario(title: string, env: Record<string, string>): Promise<void> {
  console.log(`\n${title}`);
  const server = await startService(env);
  try {
    await timedGet(server.url, '/api/generate_wallets?n=1000', OTHER); // the pool started
    const baseline = await probe(server.url);
    printProbes('no attack', baseline);
    for (const attack of ATTACKS) {
      const { admitted, refused, stop } = await attack.start(server.url);
      // From the moment the attack is in place (every stream admitted or refused).
      const started = performance.now();
      try {
        console.log(`  ${attack.name}: ${admitted >= 0 ? `${admitted} admitted, ` : ''}refused ${JSON.stringify(refused)}`);
        const served = attack.name.startsWith('unread') ? await untilServed(server.url, started, 120_000) : 0;
        if (served === null) console.log('  another client\'s n=1000: still refused after 120 s');
        else if (served > 0) console.log(`  another client's n=1000 first answered 200 ${ms(served)} after the attack was in place`);
        printProbes('under attack', await probe(server.url), baseline);
      } finally {
        stop();
      }
      await sleep(2000); // the abandoned work ends
    }
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  console.log(`bench:fairness: another client's wait (median of ${REPS}) under each attack, beside its wait with no attack; ${availableParallelism()} cores`);
  await firstLargeRequest();
  await scenario('2. Default limits (4 streams and 2 vanity searches per client; 64 and 16 in all; read timeout 30 s):', {});
  await scenario('3. Per-client caps raised to admit the whole attack (read timeout 5 s): what the read timeout and the pool\'s turns do alone', {
    MAX_WALLET_STREAMS_PER_CLIENT: '64',
    MAX_WALLET_STREAMS: '1000',
    MAX_VANITY_SEARCHES_PER_CLIENT: '64',
    MAX_VANITY_SEARCHES: '1000',
    WALLET_STREAM_READ_TIMEOUT_MS: '5000',
    // A queue that 10 unread streams fill (each holds 2 batches of 256 per thread), so that the
    // attack fills it without first making millions of wallets into its sockets' kernel buffers.
    MAX_QUEUED_WALLETS: String(10 * availableParallelism() * 512),
    MAX_QUEUED_WALLETS_PER_CLIENT: String(2 * availableParallelism() * 512),
  });
}

await main();
