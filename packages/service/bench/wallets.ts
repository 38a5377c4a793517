/**
 * Wallet generation benchmark: `npm run bench` (about 1.5 minutes).
 *
 * Forks bench/walletsServer.ts (the real app on the embedded local chain, two variants of it for
 * the inline/pool crossover, and the typical implementation as a baseline, all on real sockets)
 * and drives them over HTTP with autocannon from this process:
 *   1. the raw libsodium keygen rate (crypto_sign_keypair in a loop, no encoding): one thread, and
 *      all cores at once;
 *   2. wallets/s through GET /api/generate_wallets for n = 1, 100, 10,000 (median of 3 runs), for
 *      Cinder and the baseline (web3.js v1 Keypair.generate + bs58 + JSON.stringify in the handler);
 *   3. /health latency (p99) while n = 10,000 requests are in flight, and the server's event-loop
 *      delay; the server's peak RSS;
 *   4. inline vs pool throughput for small n (where the crossover is);
 *   5. vanity search keys/s (a search that cannot succeed, answered 422 with keysTried);
 *   6. vanity keys/s per core against raw keygen, side by side in this process (one worker thread
 *      each, in turn): crypto_sign_seed_keypair on seeds drawn 128 at a time and nothing else, the
 *      search slice itself (generate.ts, numeric matcher), and the search as it was before
 *      (crypto_sign_keypair, base58 of every address, compare);
 *   7. n = 1,000,000 streamed (Accept: application/x-ndjson) through HTTP, plain and hd: wallets/s
 *      and the server's RSS sampled every 250 ms, next to the JSON answer's n = 10,000 rate.
 * Prints a table and the targets: ≥ 10× the baseline, ≥ 60% of raw keygen × cores, vanity ≥ 90%
 * of raw keygen per core.
 */
import { Agent, get } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism, cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { ask, forkServer } from './childServer.ts';
import type { ServerReady, ServerStats } from './walletsServer.ts';

const REPS = 3;
const cores = availableParallelism();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

// ---------------------------------------------------------------- the server process

const startServer = () => forkServer<ServerReady>(new URL('./walletsServer.ts', import.meta.url));

// ---------------------------------------------------------------- raw libsodium keygen

const RAW_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const sodium = require(workerData.sodium);
const pk = Buffer.alloc(32), sk = sodium.sodium_malloc(64);
for (let i = 0; i < 2000; i++) sodium.crypto_sign_keypair(pk, sk);
parentPort.once('message', () => {
  const start = performance.now(), end = start + workerData.ms;
  let n = 0;
  while (performance.now() < end) { for (let i = 0; i < 256; i++) sodium.crypto_sign_keypair(pk, sk); n += 256; }
  parentPort.postMessage(n / ((performance.now() - start) / 1000));
});
`;

/** Keypairs/s of crypto_sign_keypair, summed over `threads` threads running at once. */
async function rawKeygenRate(threads: number, ms: number): Promise<number> {
  const sodium = createRequire(import.meta.url).resolve('sodium-native');
  const workers = Array.from({ length: threads }, () => new Worker(RAW_WORKER, { eval: true, execArgv: [], workerData: { sodium, ms } }));
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('online', resolve))));
  await sleep(200); // let the warm-up loops finish
  const rates = await Promise.all(
    workers.map((w) => {
      const done = new Promise<number>((resolve) => w.once('message', resolve));
      w.postMessage('go');
      return done;
    }),
  );
  await Promise.all(workers.map((w) => w.terminate()));
  return rates.reduce((a, b) => a + b, 0);
}

// ---------------------------------------------------------------- vanity per core vs raw keygen

const PER_CORE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const sodium = require(workerData.sodium);
(async () => {
  const { register } = await import('tsx/esm/api');
  register();
  const generate = await import(workerData.generate);
  const base58 = await import(workerData.base58);
  const pk = Buffer.alloc(32), sk = sodium.sodium_malloc(64), seeds = sodium.sodium_malloc(32 * 128);
  const views = Array.from({ length: 128 }, (_, i) => seeds.subarray(32 * i, 32 * i + 32));
  const address = new Uint8Array(44), prefix = Uint8Array.from('1111', (c) => c.charCodeAt(0));
  const loops = {
    // Keygen and nothing else, on seeds drawn from the CSPRNG 128 at a time (as the search does).
    raw(ms) {
      const end = performance.now() + ms;
      let n = 0;
      while (performance.now() < end) { sodium.randombytes_buf(seeds); for (let r = 0; r < 128; r++) sodium.crypto_sign_seed_keypair(pk, sk, views[r]); n += 128; }
      return n;
    },
    // The search slice the pool runs (numeric matcher), for a pattern no key of this run matches.
    vanity(ms) {
      const task = { kind: 'vanity', want: 1, prefix: '1111', suffix: '', ignoreCase: false, keygen: false, mnemonic: null, lines: false,
        deadline: Date.now() + ms, sliceMs: ms, control: new SharedArrayBuffer(8) };
      return generate.readBatch(generate.searchVanity(task)).tried;
    },
    // The search before: a fresh keypair (one getrandom each), base58 of every address, compare.
    encodeEach(ms) {
      const end = performance.now() + ms;
      let n = 0;
      while (performance.now() < end) {
        for (let r = 0; r < 128; r++) {
          sodium.crypto_sign_keypair(pk, sk);
          base58.writeBase58Of32(sk, 32, address, 0);
          let match = true;
          for (let i = 0; match && i < 4; i++) match = address[i] === prefix[i];
          sodium.sodium_memzero(sk);
        }
        n += 128;
      }
      return n;
    },
  };
  for (const loop of Object.values(loops)) loop(300); // warm up
  parentPort.on('message', ({ loop, ms }) => {
    const start = performance.now();
    const n = loops[loop](ms);
    parentPort.postMessage(n / ((performance.now() - start) / 1000));
  });
  parentPort.postMessage('ready');
})();
`;

type PerCoreLoop = 'raw' | 'vanity' | 'encodeEach';

/** Keys/s of each loop on one worker thread of this process, in turn, `reps` times each (medians). */
async function perCoreRates(reps: number, ms: number): Promise<Record<PerCoreLoop, number>> {
  const require = createRequire(import.meta.url);
  const worker = new Worker(PER_CORE_WORKER, {
    eval: true,
    execArgv: [],
    workerData: {
      sodium: require.resolve('sodium-native'),
      generate: new URL('../src/wallets/generate.ts', import.meta.url).href,
      base58: new URL('../src/keys/base58.ts', import.meta.url).href,
    },
  });
  const next = () => new Promise<unknown>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  await next(); // ready
  const rates: Record<PerCoreLoop, number[]> = { raw: [], vanity: [], encodeEach: [] };
  for (let rep = 0; rep < reps; rep++) {
    for (const loop of ['raw', 'vanity', 'encodeEach'] as const) {
      const answer = next();
      worker.postMessage({ loop, ms });
      rates[loop].push((await answer) as number);
    }
  }
  await worker.terminate();
  return { raw: median(rates.raw), vanity: median(rates.vanity), encodeEach: median(rates.encodeEach) };
}

// ---------------------------------------------------------------- streamed

interface StreamRun {
  lines: number;
  walletsPerSec: number;
  rssMin: number;
  rssMax: number;
  samples: number;
}

/** GET …?n=N (and `extra`) as application/x-ndjson, counting lines; the server's RSS sampled every 250 ms meanwhile. */
async function streamed(base: string, child: Parameters<typeof ask>[0], n: number, extra = ''): Promise<StreamRun> {
  const rss: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      rss.push((await ask<ServerStats>(child, 'stats')).rss);
      await sleep(250);
    }
  })();
  const started = performance.now();
  const lines = await new Promise<number>((resolve, reject) => {
    get(`${base}/api/generate_wallets?n=${n}${extra}`, { headers: { accept: 'application/x-ndjson' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`streamed n=${n}: HTTP ${res.statusCode}`));
      let count = 0;
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) count++;
      });
      res.on('end', () => resolve(count));
    }).on('error', reject);
  });
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  const wallets = extra.includes('hd=') ? lines - 1 : lines;
  if (wallets !== n) throw new Error(`streamed n=${n}: ${wallets} wallet lines`);
  return { lines, walletsPerSec: n / seconds, rssMin: Math.min(...rss), rssMax: Math.max(...rss), samples: rss.length };
}

// ---------------------------------------------------------------- HTTP load

interface Load {
  walletsPerSec: number;
  requestsPerSec: number;
  p99: number;
}

async function load(base: string, n: number, options: { connections: number; duration: number }): Promise<Load> {
  const result = await autocannon({ url: `${base}/api/generate_wallets?n=${n}`, connections: options.connections, duration: options.duration });
  const good = result['2xx'];
  if (result.non2xx > 0 || result.errors > 0 || good === 0) {
    throw new Error(`${base} n=${n}: ${good} answers 2xx, ${result.non2xx} others, ${result.errors} errors`);
  }
  return { walletsPerSec: (good * n) / result.duration, requestsPerSec: good / result.duration, p99: result.latency.p99 };
}

/**
 * `amount` requests over `connections` keep-alive connections, each body read to the end; timed
 * from the first request to the last byte (autocannon's own clock ticks in whole seconds when it
 * runs a fixed number of requests, too coarse for requests that take a tenth of a second).
 */
async function loadExact(base: string, n: number, connections: number, amount: number): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < amount) {
        next++;
        const t = performance.now();
        const bytes = await new Promise<number>((resolve, reject) => {
          get(`${base}/api/generate_wallets?n=${n}`, { agent }, (res) => {
            let length = 0;
            if (res.statusCode !== 200) reject(new Error(`${base} n=${n}: HTTP ${res.statusCode}`));
            res.on('data', (chunk: Buffer) => (length += chunk.length));
            res.on('end', () => resolve(length));
          }).on('error', reject);
        });
        if (bytes < n * 150) throw new Error(`${base} n=${n}: a body of only ${bytes} bytes`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { walletsPerSec: (amount * n) / seconds, requestsPerSec: amount / seconds, p99: percentile(latencies, 99) };
}

async function sanityCheck(base: string, n: number): Promise<void> {
  const body = (await (await fetch(`${base}/api/generate_wallets?n=${n}`)).json()) as { wallets: string[]; keypairs: { address: string }[] };
  if (body.wallets.length !== n || body.keypairs[n - 1]?.address !== body.wallets[n - 1]) throw new Error(`${base}: a wrong body for n=${n}`);
}

/** Sequential GET /health every ~10 ms until stopped; returns the latencies (ms). */
function probeHealth(base: string): { stop(): Promise<number[]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const start = performance.now();
      await new Promise<void>((resolve, reject) => {
        get(`${base}/health`, { agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        }).on('error', reject);
      });
      latencies.push(performance.now() - start);
      await sleep(10);
    }
    agent.destroy();
  })();
  return {
    async stop() {
      running = false;
      await done;
      return latencies;
    },
  };
}


// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`Cinder wallet benchmark: ${cpus()[0]?.model ?? 'cpu'}, ${cores} cores, Node ${process.version}\n`);
  const { child, ready } = await startServer();
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`\nthe bench server exited unexpectedly (code ${code}, signal ${signal})`);
      process.exit(1);
    }
  });
  try {
    const idle = await ask<ServerStats>(child, 'stats');

    process.stdout.write('raw libsodium keygen… ');
    const raw1 = await rawKeygenRate(1, 1500);
    const rawAll = await rawKeygenRate(cores, 1500);
    console.log(`${fmt(raw1)}/s on 1 thread, ${fmt(rawAll)}/s on ${cores} threads at once`);

    for (const base of [ready.cinder, ready.baseline]) for (const n of [1, 100, 10_000]) await sanityCheck(base, n);

    const sizes = [1, 100, 10_000] as const;
    const runs: Record<'cinder' | 'baseline', Record<number, Load[]>> = { cinder: {}, baseline: {} };
    const health: Record<'cinder' | 'baseline', { probe: number[]; loopP99: number; loopMax: number }> = {
      cinder: { probe: [], loopP99: 0, loopMax: 0 },
      baseline: { probe: [], loopP99: 0, loopMax: 0 },
    };
    let peakAfterCinder = 0;
    for (const impl of ['cinder', 'baseline'] as const) {
      const base = ready[impl];
      for (const n of sizes) {
        process.stdout.write(`${impl} n=${n}… `);
        runs[impl][n] = [];
        for (let rep = 0; rep < REPS; rep++) {
          let probe: ReturnType<typeof probeHealth> | undefined;
          if (n === 10_000) {
            await ask(child, 'reset');
            probe = probeHealth(ready.cinder);
          }
          const result =
            n === 10_000 ? await loadExact(base, n, 2, impl === 'cinder' ? 30 : 2) : await load(base, n, { connections: 8, duration: 2 });
          runs[impl][n]!.push(result);
          if (probe) {
            health[impl].probe.push(...(await probe.stop()));
            const stats = await ask<ServerStats>(child, 'stats');
            health[impl].loopP99 = Math.max(health[impl].loopP99, stats.loopP99);
            health[impl].loopMax = Math.max(health[impl].loopMax, stats.loopMax);
          }
        }
        console.log(runs[impl][n]!.map((r) => fmt(r.walletsPerSec)).join(' / '), 'wallets/s');
      }
      if (impl === 'cinder') peakAfterCinder = (await ask<ServerStats>(child, 'stats')).maxRss;
    }
    const peakAfterAll = (await ask<ServerStats>(child, 'stats')).maxRss;

    console.log('\ninline vs pool: wallets/s for one client (1 connection) and under load (8 connections, with the server event-loop p99):');
    for (const n of [1, 4, 8, 16, 32, 64]) {
      const row: string[] = [];
      for (const connections of [1, 8]) {
        for (const variant of ['inline', 'pool'] as const) {
          await ask(child, 'reset');
          const r = await load(ready[variant], n, { connections, duration: 1 });
          const stats = await ask<ServerStats>(child, 'stats');
          row.push(`${variant} ${fmt(r.walletsPerSec).padStart(6)}${connections === 8 ? ` (${stats.loopP99.toFixed(1)} ms)` : ''}`);
        }
      }
      console.log(`  n=${String(n).padEnd(3)} 1 conn: ${row.slice(0, 2).join('  ')}   8 conn: ${row.slice(2).join('  ')}`);
    }

    process.stdout.write('\nvanity keys/s (a search that cannot succeed, until the 422)… ');
    const vanityStart = performance.now();
    const vanity = await fetch(`${ready.cinder}/api/generate_wallets?n=1&prefix=1111`);
    const vanityMs = performance.now() - vanityStart;
    const vanityBody = (await vanity.json()) as { code: string; keysTried: number };
    if (vanity.status !== 422 || vanityBody.code !== 'VANITY_TIMEOUT') throw new Error(`vanity: expected 422 VANITY_TIMEOUT, got ${vanity.status}`);
    const keysPerSec = vanityBody.keysTried / (ready.vanityTimeoutMs / 1000);
    console.log(`${fmt(keysPerSec)} keys/s (${fmt(vanityBody.keysTried)} in ${ready.vanityTimeoutMs} ms; answered after ${fmt(vanityMs)} ms)`);

    process.stdout.write('\nvanity keys/s per core vs raw keygen (one worker thread each, in turn, median of 3 × 2 s)… ');
    const perCore = await perCoreRates(3, 2000);
    console.log(`raw ${fmt(perCore.raw)}/s, search ${fmt(perCore.vanity)}/s, search as before ${fmt(perCore.encodeEach)}/s`);

    const streamRuns: Record<string, StreamRun> = {};
    for (const [name, extra] of [['plain', ''], ['hd=12', '&hd=12']] as const) {
      process.stdout.write(`streamed n=1,000,000 ${name}… `);
      streamRuns[name] = await streamed(ready.cinder, child, 1_000_000, extra);
      const r = streamRuns[name]!;
      console.log(`${fmt(r.walletsPerSec)} wallets/s, server RSS ${mib(r.rssMin)}–${mib(r.rssMax)} over ${r.samples} samples`);
    }

    // ------------------------------------------------------------ report
    const med = (impl: 'cinder' | 'baseline', n: number) => median(runs[impl][n]!.map((r) => r.walletsPerSec));
    console.log('\n| n | Cinder wallets/s | baseline wallets/s | Cinder / baseline |');
    console.log('|---:|---:|---:|---:|');
    for (const n of sizes) {
      console.log(`| ${fmt(n)} | ${fmt(med('cinder', n))} | ${fmt(med('baseline', n))} | ${(med('cinder', n) / med('baseline', n)).toFixed(1)}× |`);
    }
    const cinder10k = med('cinder', 10_000);
    const target = raw1 * cores;
    console.log(`\nraw libsodium keygen: ${fmt(raw1)}/s × ${cores} cores = ${fmt(target)}/s (measured on ${cores} threads at once: ${fmt(rawAll)}/s)`);
    console.log(
      `/health p99 while n=10,000 requests run: Cinder ${percentile(health.cinder.probe, 99).toFixed(1)} ms ` +
        `(server event-loop delay p99 ${health.cinder.loopP99.toFixed(1)} ms, max ${health.cinder.loopMax.toFixed(1)} ms; ${health.cinder.probe.length} probes); ` +
        `baseline in the same process ${percentile(health.baseline.probe, 99).toFixed(0)} ms`,
    );
    console.log(
      `server RSS: ${mib(idle.rss)} idle after start (app ×3 + local chain); peak ${mib(peakAfterCinder)} after the Cinder runs, ${mib(peakAfterAll)} after the baseline runs`,
    );
    console.log(`vanity: ${fmt(keysPerSec)} keys/s on ${ready.threads} threads`);
    console.log(
      `vanity per core: ${fmt(perCore.vanity)} keys/s = ${((perCore.vanity / perCore.raw) * 100).toFixed(1)}% of raw keygen on the same thread (${fmt(perCore.raw)}/s); ` +
        `encoding every address as before: ${fmt(perCore.encodeEach)}/s (${((perCore.encodeEach / perCore.raw) * 100).toFixed(1)}%)`,
    );
    for (const [name, r] of Object.entries(streamRuns)) {
      console.log(
        `streamed n=1,000,000 ${name}: ${fmt(r.walletsPerSec)} wallets/s (JSON n=10,000 in this run: ${fmt(cinder10k)}/s; raw keygen × cores ${fmt(target)}/s); ` +
          `server RSS ${mib(r.rssMin)}–${mib(r.rssMax)} while streaming (idle ${mib(idle.rss)})`,
      );
    }
    console.log('\nTargets (n = 10,000 through HTTP):');
    const ratioBaseline = cinder10k / med('baseline', 10_000);
    const ratioRaw = cinder10k / target;
    const healthP99 = percentile(health.cinder.probe, 99);
    console.log(`  ≥ 10× baseline:               ${ratioBaseline.toFixed(1)}×  ${ratioBaseline >= 10 ? 'met' : 'NOT met'}`);
    console.log(`  ≥ 60% of raw keygen × cores:  ${(ratioRaw * 100).toFixed(0)}%  ${ratioRaw >= 0.6 ? 'met' : 'NOT met'}`);
    console.log(`  /health p99 < 20 ms:          ${healthP99.toFixed(1)} ms  ${healthP99 < 20 ? 'met' : 'NOT met'}`);
    const vanityRatio = perCore.vanity / perCore.raw;
    console.log(`  vanity ≥ 90% of raw per core: ${(vanityRatio * 100).toFixed(1)}%  ${vanityRatio >= 0.9 ? 'met' : 'NOT met'}`);
    console.log(`\n(${((performance.now() - started) / 1000).toFixed(0)} s)`);
  } finally {
    stopping = true;
    child.send({ type: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
