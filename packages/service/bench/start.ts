/**
 * `npm run bench:start`: how long the service takes from spawn to its first `GET /health` that
 * answers 200, and the RSS of its process tree at rest (3 s after that answer), beside a bare
 * Fastify server with one route measured in the same run, the starts interleaved so that a busy
 * machine slows every contestant alike. Each is started BENCH_STARTS times (default 5); the median
 * is the figure, the range beside it.
 *
 * - `node` (bare Fastify): one route, what any Fastify service pays;
 * - `npm start` (repository root): what a newcomer runs, npm itself included (its process is part of the tree);
 * - the launcher (`node packages/service/bin/cinder-service.js`) running the build, with its embedded chain;
 * - the same with SOLANA_RPC_URL set: a local chain started here, in this process, beforehand.
 *
 * Linux only: the process tree's RSS is read from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalnet } from '@cinder/localnet';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVICE = fileURLToPath(new URL('../', import.meta.url));
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const REST_MS = 3000;

const BARE_FASTIFY = `
import Fastify from 'fastify';
const app = Fastify();
app.get('/health', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

interface Contestant {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

interface Run {
  ms: number;
  /** CPU time of the tree until the first 200: what the start costs whatever else runs on the machine. */
  cpuMs: number;
  rssMiB: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** 200 from GET /health, false for anything else (refused, not yet routed, an error status). */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.once('timeout', () => req.destroy());
    req.end();
  });
}

/** A process and every descendant of it: their RSS in MiB, and the CPU time they have used in ms (from /proc). */
function treeUsage(root: number): { rssMiB: number; cpuMs: number } {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (2nd field) is in parentheses and may contain spaces: the ppid follows the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  let kib = 0;
  let ticks = 0;
  const visit = (pid: number) => {
    try {
      const rss = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kib += Number(rss?.[1] ?? 0);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // utime, stime, cutime, cstime: fields 14-17 (the children's times of those it waited for, such as npm's shell).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    } catch {
      // gone meanwhile
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  // Linux's USER_HZ is 100 on every architecture Node runs on.
  return { rssMiB: kib / 1024, cpuMs: ticks * 10 };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid!, 'SIGTERM'); // the whole group: npm and the server it runs
  } catch {
    // already gone
  }
  const killer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 15_000);
  await exited;
  clearTimeout(killer);
}

async function measure(contestant: Contestant): Promise<Run> {
  const port = await freePort();
  const stateDir = mkdtempSync(join(tmpdir(), 'cinder-bench-start-'));
  let output = '';
  const started = performance.now();
  const child = spawn(contestant.command, contestant.args, {
    cwd: contestant.cwd,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: String(port), STATE_DIR: stateDir, LOCALNET_PORT: '0', LOG_LEVEL: 'warn', npm_config_update_notifier: 'false', ...contestant.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  try {
    while (!(await healthy(port))) {
      if (child.exitCode !== null) throw new Error(`${contestant.name} exited (${child.exitCode}):\n${output}`);
      if (performance.now() - started > 60_000) throw new Error(`${contestant.name}: no 200 from /health in 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const ms = performance.now() - started;
    const { cpuMs } = treeUsage(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, REST_MS));
    return { ms, cpuMs, rssMiB: treeUsage(child.pid!).rssMiB };
  } finally {
    await stop(child);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const localnet = await startLocalnet({ port: 0 });
const launcher = join(SERVICE, 'bin/cinder-service.js');
const contestants: Contestant[] = [
  { name: 'bare Fastify, one route (node)', command: process.execPath, args: ['--input-type=module', '-e', BARE_FASTIFY], cwd: SERVICE, env: {} },
  { name: 'npm start (embedded chain)', command: 'npm', args: ['start'], cwd: ROOT, env: {} },
  { name: 'build, embedded chain (node bin/cinder-service.js)', command: process.execPath, args: [launcher], cwd: ROOT, env: {} },
  { name: 'build, SOLANA_RPC_URL set', command: process.execPath, args: [launcher], cwd: ROOT, env: { SOLANA_RPC_URL: localnet.rpcUrl } },
];

const runs = new Map<Contestant, Run[]>(contestants.map((c) => [c, []]));
try {
  // One start of each first, not counted: the launcher refreshes a build older than its sources,
  // and the first read of every file fills the page cache.
  for (const contestant of contestants) await measure(contestant);
  for (let i = 0; i < STARTS; i++) {
    for (const contestant of contestants) {
      const run = await measure(contestant);
      runs.get(contestant)!.push(run);
      process.stderr.write(`bench:start ${i + 1}/${STARTS} ${contestant.name}: ${Math.round(run.ms)} ms (CPU ${run.cpuMs} ms), ${run.rssMiB.toFixed(0)} MiB\n`);
    }
  }
} finally {
  await localnet.close();
}

const [baseline] = contestants;
const baseMs = median(runs.get(baseline!)!.map((r) => r.ms));
const baseRss = median(runs.get(baseline!)!.map((r) => r.rssMiB));
const baseCpu = median(runs.get(baseline!)!.map((r) => r.cpuMs));
const rows = contestants.map((contestant) => {
  const ms = runs.get(contestant)!.map((r) => r.ms);
  const rss = runs.get(contestant)!.map((r) => r.rssMiB);
  const cpu = runs.get(contestant)!.map((r) => r.cpuMs);
  return [
    contestant.name,
    `${Math.round(median(ms))} ms (${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))})`,
    `${(median(ms) / baseMs).toFixed(1)}×`,
    `${Math.round(median(cpu))} ms`,
    `${(median(cpu) / baseCpu).toFixed(1)}×`,
    `${median(rss).toFixed(0)} MiB (${Math.min(...rss).toFixed(0)}–${Math.max(...rss).toFixed(0)})`,
    `${(median(rss) / baseRss).toFixed(1)}×`,
  ];
});
const header = ['what', 'to /health: median (range)', 'ratio', 'CPU until then', 'ratio', 'RSS at rest, tree', 'ratio'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
process.stdout.write(`Node ${process.version}, ${STARTS} starts each (median), RSS ${REST_MS / 1000} s after the first 200\n`);
process.stdout.write(`${line(header)}\n${rows.map(line).join('\n')}\n`);
