/**
 * Load test: `npm run load` (options after `--`).
 *
 * Starts Cinder (`src/server.ts`, with its embedded local chain, limits set high, optionally on a
 * Redis of its own with --redis), prepares token holders on that chain, then runs autocannon for
 * 30 s with 200 connections on a mix of traffic:
 *   generate_wallets n=1 and n=100, real burns (each holder once, half of them with an
 *   Idempotency-Key; once the holders are used up, burns are answered 400 NO_TOKEN_ACCOUNT),
 *   transaction status lookups, and bad requests (invalid JSON, n=0, unknown route).
 * Prints requests/s, p50/p99 latency, answers by status (and, from the server's own /metrics, by
 * route and status and burns by outcome), and the server's memory (also from /metrics) before,
 * every 5 s during, and after the run.
 *
 *   npm run load -- --duration 30 --connections 200 --holders 200 [--redis]
 *   npm run load -- --url http://127.0.0.1:8080 --rpc http://127.0.0.1:8899   (an instance already running;
 *     start it with high RATE_LIMIT_* values; --rpc is its chain, where the holders are made)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createSolanaRpc, createSolanaRpcSubscriptions, getBase58Decoder } from '@solana/kit';
import { createAta, createFundedSigner, createTestMint, mintTokens, type TestChain } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    rpc: { type: 'string' },
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '200' },
    holders: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '10' },
    redis: { type: 'boolean', default: false },
  },
});

const duration = Number(args.duration);
const connections = Number(args.connections);
const holderCount = Number(args.holders);
const warmup = Number(args.warmup);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Target {
  url: string;
  rpcUrl: string;
  wsUrl: string;
  child: ChildProcess | null;
  redis: TestRedis | null;
  /** What the server printed (warnings and errors: LOG_LEVEL=warn). */
  output(): string;
}

async function startTarget(): Promise<Target> {
  if (args.url) {
    if (!args.rpc) throw new Error('--url needs --rpc: the chain of that instance, where the token holders are made');
    const rpc = new URL(args.rpc);
    const ws = new URL(args.rpc);
    ws.protocol = rpc.protocol === 'https:' ? 'wss:' : 'ws:';
    ws.port = String(Number(rpc.port) + 1);
    return { url: args.url, rpcUrl: args.rpc, wsUrl: ws.toString(), child: null, redis: null, output: () => '' };
  }
  const redis = args.redis ? await startTestRedis() : null;
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../src/server.ts', import.meta.url))], {
    env: {
      ...process.env,
      PORT: String(await freePort()),
      LOCALNET_PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_BURN_PER_MIN: '100000000',
      RATE_LIMIT_GENERATE_PER_MIN: '100000000',
      RATE_LIMIT_WALLETS_PER_MIN: '100000000000',
      RATE_LIMIT_STATUS_PER_MIN: '100000000',
      // Every simulated client connects from this one address: the per-address limits above and
      // this one would otherwise measure the limits, not the service.
      MAX_CONNECTIONS_PER_CLIENT: '100000',
      ...(redis ? { REDIS_URL: redis.url } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const service = /Cinder listening on (\S+)/.exec(output);
    const chain = /Local Solana chain: RPC (\S+)\s+WebSocket (\S+)/.exec(output);
    if (service && chain) return { url: service[1]!, rpcUrl: chain[1]!, wsUrl: chain[2]!, child, redis, output: () => output };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Cinder did not start:\n${output}`);
    await sleep(50);
  }
}

interface Memory {
  rss: number;
  heapUsed: number;
  /** The server's event-loop delay since the previous scrape (prom-client resets it on each). */
  lagP99: number;
  lagMax: number;
}

async function memoryOf(url: string): Promise<Memory> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ').at(-1) ?? NaN);
  return {
    rss: read('cinder_process_resident_memory_bytes'),
    heapUsed: read('cinder_nodejs_heap_size_used_bytes'),
    lagP99: read('cinder_nodejs_eventloop_lag_p99_seconds'),
    lagMax: read('cinder_nodejs_eventloop_lag_max_seconds'),
  };
}

/** The request and burn counters of the server's /metrics. */
async function countsOf(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!/^cinder_(http_requests_total\{method="(GET|POST)",route="(\/api[^"]*|unmatched)"|burns_total|lamports_reclaimed_total|idempotency_total)/.test(line)) continue;
    const at = line.lastIndexOf(' ');
    counts.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return counts;
}

/** Cumulative latency buckets per method + route (all statuses together), from /metrics. */
async function latencyOf(url: string): Promise<Map<string, Map<number, number>>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const routes = new Map<string, Map<number, number>>();
  for (const line of text.split('\n')) {
    const match = /^cinder_http_request_duration_seconds_bucket\{le="([^"]+)",method="([A-Z]+)",route="([^"]+)",status="\d+"\} (\d+)$/.exec(line);
    if (!match || !match[3]!.startsWith('/api')) continue;
    const key = `${match[2]} ${match[3]}`;
    const bound = match[1] === '+Inf' ? Infinity : Number(match[1]);
    const buckets = routes.get(key) ?? new Map<number, number>();
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[4]));
    routes.set(key, buckets);
  }
  return routes;
}

function diff(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after].map(([sample, count]): [string, number] => [sample, count - (before.get(sample) ?? 0)]).filter(([, n]) => n > 0).sort();
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function makeHolders(chain: TestChain, count: number): Promise<{ mint: string; key: string }[]> {
  const holders: { mint: string; key: string }[] = [];
  const batch = 40;
  for (let i = 0; i < count; i += batch) {
    const made = await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, async () => {
        const { signer, secretKey } = await createFundedSigner(chain, 1_000_000_000n);
        const mint = await createTestMint(chain, signer, { decimals: 6 });
        const ata = await createAta(chain, signer, signer.address, mint);
        await mintTokens(chain, signer, mint, ata, 1_000_000n);
        return { mint: mint as string, key: getBase58Decoder().decode(secretKey) };
      }),
    );
    holders.push(...made);
    process.stdout.write(`\r  token holders ready: ${holders.length}/${count}`);
  }
  process.stdout.write('\n');
  return holders;
}

async function main() {
  console.log(`Cinder load test: ${duration} s, ${connections} connections${args.redis ? ', Redis store' : ''}`);
  const target = await startTarget();
  console.log(`  service ${target.url}, chain ${target.rpcUrl}`);
  try {
    const chain = {
      rpc: createSolanaRpc(target.rpcUrl),
      rpcSubscriptions: createSolanaRpcSubscriptions(target.wsUrl),
    } as unknown as TestChain;
    const holders = await makeHolders(chain, holderCount);
    // The warm-up burns holders of its own, so the measured run starts with all of its holders.
    const warmHolders = warmup > 0 ? await makeHolders(chain, Math.ceil(holderCount / 4)) : [];
    let pool = warmHolders;

    // One real burn first, for a signature to look up during the run.
    const first = holders.shift()!;
    const firstBurn = await fetch(`${target.url}/api/burn_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mint: first.mint, priorityFee: 0.000001, userPrivateKey: first.key }),
    });
    const signature = ((await firstBurn.json()) as { transactionId?: string }).transactionId;
    if (firstBurn.status !== 200 || !signature) throw new Error(`the first burn failed: ${firstBurn.status}\n${target.output().slice(-4000)}`);

    let nextHolder = 0;
    const json = { 'content-type': 'application/json' };
    const burnRequest: autocannon.Request = {
      method: 'POST',
      path: '/api/burn_tokens',
      setupRequest: (request) => {
        const holder = pool[nextHolder++ % pool.length]!;
        const idempotent = nextHolder % 2 === 0;
        return {
          ...request,
          headers: { ...json, ...(idempotent ? { 'idempotency-key': randomUUID() } : {}) },
          body: JSON.stringify({ mint: holder.mint, priorityFee: 0.000001, userPrivateKey: holder.key }),
        };
      },
    };
    const generate1: autocannon.Request = { method: 'GET', path: '/api/generate_wallets?n=1' };
    const generate100: autocannon.Request = { method: 'GET', path: '/api/generate_wallets?n=100' };
    const status: autocannon.Request = { method: 'GET', path: `/api/transactions/${signature}` };
    const badJson: autocannon.Request = { method: 'POST', path: '/api/burn_tokens', headers: json, body: '{"mint":' };
    const badN: autocannon.Request = { method: 'GET', path: '/api/generate_wallets?n=0' };
    const notFound: autocannon.Request = { method: 'GET', path: '/api/nope' };
    // Each connection cycles through this sequence. The invalid JSON comes last: Fastify closes
    // the connection after a body it cannot parse, and autocannon then skips the next request.
    const sequence = [
      generate1, generate1, generate1, generate1, generate1, generate1,
      generate100, generate100,
      burnRequest, burnRequest,
      status, status,
      badN, notFound, badJson,
    ];

    await sleep(1000);
    const cold = await memoryOf(target.url);
    console.log(`  server memory, idle after start: rss ${mib(cold.rss)}, heap used ${mib(cold.heapUsed)}`);
    if (warmup > 0) {
      // Worker threads, JIT and pools start on first use: the measured run starts warm.
      console.log(`  warm-up: ${warmup} s of the same traffic (not measured)`);
      await autocannon({ url: target.url, connections, duration: warmup, requests: sequence, timeout: 30 });
      await sleep(2000);
    }
    pool = holders;
    nextHolder = 0;
    const countsBefore = await countsOf(target.url);
    const latencyBefore = await latencyOf(target.url);
    const before = await memoryOf(target.url);
    console.log(`  server memory at the start of the measured run: rss ${mib(before.rss)}, heap used ${mib(before.heapUsed)}`);
    const samples: Memory[] = [];
    const sampler = setInterval(() => void memoryOf(target.url).then((m) => samples.push(m), () => {}), 5000);
    const result = await autocannon({ url: target.url, connections, duration, requests: sequence, timeout: 30 });
    clearInterval(sampler);
    const end = await memoryOf(target.url);
    await sleep(5000);
    const idle = await memoryOf(target.url);

    console.log('\nResults');
    console.log(`  requests: ${result.requests.total} in ${result.duration} s = ${result.requests.average.toFixed(0)} req/s (mean of per-second counts)`);
    console.log(`  latency: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`);
    console.log(`  by class: 2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}; connection errors ${result.errors}, timeouts ${result.timeouts}`);
    const statusCounts = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}: ${s.count ?? 0}`);
    console.log(`  by status: ${statusCounts.join(', ')}`);
    // Per route and per burn outcome, as the server counted them (its /metrics, before → after).
    const counted = diff(countsBefore, await countsOf(target.url));
    for (const [sample, count] of counted) console.log(`    ${sample.padEnd(80)} ${count}`);
    console.log('  server-side latency by route (from its histogram: the bucket bound that holds p50 / p99):');
    const latencyAfter = await latencyOf(target.url);
    for (const [route, buckets] of latencyAfter) {
      const start = latencyBefore.get(route) ?? new Map<number, number>();
      const counts = [...buckets].map(([bound, count]): [number, number] => [bound, count - (start.get(bound) ?? 0)]).sort((a, b) => a[0] - b[0]);
      const total = counts.at(-1)?.[1] ?? 0;
      if (total === 0) continue;
      const quantile = (q: number) => counts.find(([, c]) => c >= q * total)?.[0] ?? Infinity;
      console.log(`    ${route.padEnd(60)} n=${String(total).padStart(6)}  p50 ≤ ${quantile(0.5)} s  p99 ≤ ${quantile(0.99)} s`);
    }
    console.log(
      `  token holders: ${holders.length}; burns after those reuse them: 400 NO_TOKEN_ACCOUNT, or 200 with status "failed" when one races the first burn of the same holder`,
    );
    console.log('  server memory (rss / heap used), and its event-loop delay over the previous 5 s (p99 / max):');
    console.log(`    before         ${mib(before.rss)} / ${mib(before.heapUsed)}`);
    const ms = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`;
    samples.forEach((m, i) =>
      console.log(`    at ${String((i + 1) * 5).padStart(3)} s       ${mib(m.rss)} / ${mib(m.heapUsed)}   loop delay ${ms(m.lagP99)} / ${ms(m.lagMax)}`),
    );
    console.log(`    end            ${mib(end.rss)} / ${mib(end.heapUsed)}`);
    console.log(`    5 s idle after ${mib(idle.rss)} / ${mib(idle.heapUsed)}`);
    if (result['5xx'] > 0 || result.errors > 0) {
      console.log(`\nFAIL: ${result['5xx']} 5xx answers, ${result.errors} connection errors`);
      console.log(target.output().slice(-4000));
      process.exitCode = 1;
    } else {
      console.log('\nOK: no 5xx, no connection errors');
    }
  } finally {
    if (target.child && target.child.exitCode === null) {
      const exited = new Promise((resolve) => target.child!.once('exit', resolve));
      target.child.kill('SIGTERM');
      await exited;
    }
    await target.redis?.stop();
  }
}

main().then(
  () => process.exit(),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
