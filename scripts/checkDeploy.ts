/**
 * `npm run check:deploy` (CI runs it): the production install and the two deployment recipes, run
 * for real without a container engine or systemd, on the node that runs this script.
 *
 * 1. deploy/Containerfile, instruction by instruction: each stage in a directory of its own (FROM
 *    starts one; WORKDIR, ENV, COPY [--from], RUN as written; USER/EXPOSE noted), from a clean copy
 *    of the project (the files git knows). Then the image's CMD is started as `docker run` would,
 *    next to a real redis-server (as deploy/compose.yaml puts Redis beside it), and checked: no tsx
 *    or TypeScript installed, /health, an API route with and without the API key, the HEALTHCHECK
 *    command, `cinder wallets -n 2` (also on a terminal, where it draws its progress bar), and
 *    SIGTERM (`docker stop`) ending in a clean exit 0.
 * 2. deploy/cinder.service: the build commands of docs/deployment.md in a fresh copy, then ExecStart
 *    as written (WorkingDirectory mapped to that copy, EnvironmentFile = deploy/cinder.env.example
 *    with the ports, Redis and the chain of this machine), stopped with its KillSignal within
 *    TimeoutStopSec.
 *
 * Why a small interpreter of our own Containerfile rather than a container engine: CI machines
 * have none, and "the exact steps" is the point: a step added to the Containerfile runs here too,
 * and an instruction this script does not know fails it instead of being skipped.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The production build, as docs/deployment.md and the Containerfile run it. */
// --legacy-peer-deps on the last step: without it npm keeps `typescript` (24 MB), which
// @solana/kit names as an optional peer; with it npm installs no peer that is not also a
// dependency, which drops typescript and the optional native add-ons of ws (bufferutil,
// utf-8-validate) and nothing the server or the CLI loads (the runs below show it).
export const PRODUCTION_BUILD = 'npm ci --no-audit --no-fund && npm run build && npm ci --omit=dev --legacy-peer-deps --no-audit --no-fund';
const API_KEY = 'check-deploy-api-key';
const SERVER_SECRET = 'check-deploy-server-secret-0123456789abcdef';

const started = Date.now();
const log = (text: string) => process.stderr.write(`check:deploy [${Math.round((Date.now() - started) / 1000)} s]: ${text}\n`);

/**
 * Node 22.6+ can run .ts files itself (type stripping): turned off for what runs the production
 * install, so that a .ts module reached at run time fails here instead of passing unnoticed.
 */
const NO_TYPESCRIPT: Record<string, string> = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  const stripsTypes = major > 22 || (major === 22 && minor >= 6);
  const options: Record<string, string> = {};
  if (stripsTypes) options.NODE_OPTIONS = '--no-experimental-strip-types';
  return options;
})();

/**
 * A production install has no TypeScript loader (tsx, and esbuild under it), no TypeScript
 * compiler (see PRODUCTION_BUILD) and a build with no TypeScript in it.
 */
function assertNoTypeScriptAtRunTime(app: string): void {
  for (const tool of ['tsx', 'esbuild', 'typescript']) assert.ok(!existsSync(join(app, 'node_modules', tool)), `${tool} is not installed`);
  const built = execFileSync('sh', ['-c', 'find packages/*/dist packages/*/bin -type f'], { cwd: app, encoding: 'utf8' }).trim().split('\n');
  for (const file of ['packages/service/dist/server.js', 'packages/service/dist/wallets/worker.js', 'packages/localnet/dist/index.js', 'packages/client/dist/cli.js']) {
    assert.ok(built.includes(file), `the build is there: ${file}`);
  }
  const typescript = built.filter((file) => /\.(ts|mts|cts)$/.test(file) && !file.endsWith('.d.ts'));
  assert.deepEqual(typescript, [], 'no TypeScript in the build');
  log(`no tsx, esbuild or typescript installed; ${built.length} built files, none TypeScript`);
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

/** The project as `git clone` gives it (plus files not committed yet), without node_modules or builds. */
function cleanCopy(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(ROOT, file), join(to, file));
  }
}

// prefer-offline: packages already in npm's cache (the lockfile's exact versions, integrity-checked
// as always) are not revalidated one by one with the registry; the steps are the same, faster.
const NPM_ENV = { npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };

function checkOutput(command: string, status: number | null, output: string): void {
  process.stderr.write(output);
  assert.equal(status, 0, `failed: ${command}`);
  // On the Node lines the image uses and later, an install must not warn about engines: every dependency supports them.
  if (/\bnpm (ci|install)\b/.test(command) && Number(process.versions.node.split('.')[0]) >= 24) {
    assert.doesNotMatch(output, /EBADENGINE/, `${command} warned about engines on Node ${process.version}`);
  }
}

function sh(command: string, cwd: string, env: Record<string, string>): void {
  log(`RUN ${command}   (in ${cwd})`);
  const result = spawnSync('sh', ['-c', command], { cwd, env: { ...process.env, ...NPM_ENV, ...env }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  checkOutput(command, result.status, result.stdout + result.stderr);
}

/** As sh(), in the background (the installs wait on the network and the disk more than on the CPU). */
function shInBackground(command: string, cwd: string): Promise<void> {
  const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, ...NPM_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve, reject) =>
    child.once('close', (status) => {
      log(`RUN ${command}   (in ${cwd}, in the background)`);
      try {
        checkOutput(command, status, output);
        resolve();
      } catch (error) {
        reject(error as Error);
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Containerfile

interface Stage {
  name: string;
  image: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  cmd?: string[];
  healthcheck?: string[];
  user?: string;
}

function instructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [, op, args] = /^(\S+)\s*(.*)$/.exec(line)!;
      return { op: op!.toUpperCase(), args: args! };
    });
}

function parseEnv(args: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[match[1]!] = match[2]!.replace(/^"|"$/g, '');
  return env;
}

function buildImage(context: string, work: string): Stage {
  const stages: Stage[] = [];
  const inside = (stage: Stage, path: string) => join(stage.root, path.startsWith('/') ? path : join(stage.workdir, path));
  for (const { op, args } of instructions(readFileSync(join(ROOT, 'deploy', 'Containerfile'), 'utf8'))) {
    const stage = stages.at(-1);
    if (op !== 'FROM') assert.ok(stage, `${op} before FROM`);
    switch (op) {
      case 'FROM': {
        const [image, as, name] = args.split(/\s+/);
        const index = stages.length;
        stages.push({ name: as?.toUpperCase() === 'AS' ? name! : String(index), image: image!, root: join(work, `stage-${index}`), workdir: '/', env: {} });
        mkdirSync(join(work, `stage-${index}`), { recursive: true });
        const major = /^node:(\d+)/.exec(image!)?.[1];
        if (major && major !== process.versions.node.split('.')[0]) log(`note: ${image} has Node ${major}; this check runs on ${process.version}`);
        break;
      }
      case 'WORKDIR':
        stage!.workdir = args.startsWith('/') ? args : join(stage!.workdir, args);
        mkdirSync(join(stage!.root, stage!.workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(stage!.env, parseEnv(args));
        break;
      case 'COPY': {
        const words = args.split(/\s+/);
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
        const paths = words.filter((w) => !w.startsWith('--'));
        const dest = paths.pop()!;
        const source = from === undefined ? undefined : stages.find((s) => s.name === from);
        if (from !== undefined) assert.ok(source, `COPY --from=${from}: no such stage`);
        for (const path of paths) {
          const src = source ? join(source.root, path) : join(context, path);
          assert.ok(existsSync(src), `COPY ${path}: not in the ${source ? `stage ${from}` : 'build context'}`);
          const target = dest.endsWith('/') || paths.length > 1 ? join(inside(stage!, dest), path.split('/').at(-1)!) : inside(stage!, dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(src, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        sh(args, join(stage!.root, stage!.workdir), stage!.env);
        break;
      case 'USER':
        stage!.user = args;
        break;
      case 'CMD':
        stage!.cmd = JSON.parse(args) as string[];
        break;
      case 'HEALTHCHECK':
        stage!.healthcheck = JSON.parse(args.replace(/^.*?\bCMD\s+/, '')) as string[];
        break;
      case 'EXPOSE':
      case 'LABEL':
        break;
      default:
        throw new Error(`deploy/Containerfile: ${op} is not something this check knows how to run; teach it (scripts/checkDeploy.ts)`);
    }
  }
  const image = stages.at(-1)!;
  assert.ok(image.cmd, 'the image has a CMD in exec form');
  return image;
}

// ---------------------------------------------------------------------------------------------
// Running what was built

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  url: string;
}

async function start(command: string[], cwd: string, env: Record<string, string>): Promise<Running> {
  log(`start ${command.join(' ')}   (in ${cwd})`);
  const child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  while (!/Cinder listening on/.test(text) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.match(text, /Cinder listening on/, `the server did not start:\n${text}`);
  return { child, output: () => text, exited, url: `http://127.0.0.1:${env.PORT}` };
}

async function checkServer(running: Running): Promise<void> {
  const health = await fetch(`${running.url}/health`);
  assert.equal(health.status, 200, 'GET /health');
  // The docs pages, rendered at start from the docs/ the install holds.
  assert.equal((await fetch(`${running.url}/guide/deployment`)).status, 200, 'GET /guide/deployment');
  const refused = await fetch(`${running.url}/api/generate_wallets?n=2`);
  assert.equal(refused.status, 401, 'an API route without the API key');
  // 100 wallets: more than the event loop makes itself, so the worker threads (packages/service/dist/wallets/worker.js) run too.
  const wallets = await fetch(`${running.url}/api/generate_wallets?n=100`, { headers: { authorization: `Bearer ${API_KEY}` } });
  assert.equal(wallets.status, 200, 'an API route with the API key');
  assert.equal(((await wallets.json()) as { wallets: string[] }).wallets.length, 100);
  log(`${running.url}: /health 200, /guide/deployment 200, /api/generate_wallets 401 without the key, 200 with it (100 wallets, on the worker threads)`);
}

function checkCli(cwd: string, url: string): void {
  const env = { PATH: process.env.PATH!, HOME: cwd, CINDER_URL: url, CINDER_API_KEY: API_KEY, ...NO_TYPESCRIPT };
  const plain = spawnSync(process.execPath, ['packages/client/bin/cinder.js', 'wallets', '-n', '2'], { cwd, env, encoding: 'utf8' });
  assert.equal(plain.status, 0, `cinder wallets -n 2: ${plain.stderr}`);
  assert.equal((JSON.parse(plain.stdout) as { wallets: string[] }).wallets.length, 2);
  log('cinder wallets -n 2: 2 wallets');
  if (spawnSync('script', ['--version']).status !== 0) {
    log('note: no script(1): cinder on a terminal not checked');
    return;
  }
  // On a terminal the CLI loads cli-progress for its bar: it must be installed in production.
  const tty = spawnSync('script', ['-qfec', `${process.execPath} packages/client/bin/cinder.js wallets -n 2 --format csv --out tty.csv`, '/dev/null'], {
    cwd,
    env: { ...env, TERM: 'xterm' },
    encoding: 'utf8',
  });
  assert.equal(tty.status, 0, `cinder wallets -n 2 on a terminal: ${tty.stdout}${tty.stderr}`);
  assert.match(tty.stdout, /wallets \[[^\]]*\] 100% \| 2\/2/, tty.stdout);
  assert.equal(readFileSync(join(cwd, 'tty.csv'), 'utf8').trimEnd().split('\n').length, 3);
  rmSync(join(cwd, 'tty.csv'));
  log('cinder wallets -n 2 on a terminal: progress bar drawn');
}

async function stop(running: Running, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  running.child.kill(signal);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), timeoutMs);
  const code = await running.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `exit code after ${signal}:\n${running.output()}`);
  assert.match(running.output(), /"msg":"stopped"/, running.output());
  log(`${signal}: stopped cleanly (exit 0)`);
}

async function startRedis(work: string): Promise<{ url: string; close: () => void }> {
  const port = await freePort();
  const dir = join(work, 'redis');
  mkdirSync(dir);
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const deadline = Date.now() + 20_000;
  while (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() !== 'PONG') {
    assert.ok(Date.now() < deadline && child.exitCode === null, 'redis-server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `redis://127.0.0.1:${port}`, close: () => child.kill('SIGTERM') };
}

/** The [Service] settings of the unit: name → values, in order. */
function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line.startsWith('#') || line === '') continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) section = header[1]!;
    else if (section === 'Service') {
      const [, key, value] = /^([^=]+)=(.*)$/.exec(line)!;
      settings.set(key!, [...(settings.get(key!) ?? []), value!]);
    }
  }
  return settings;
}

function envFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'cinder-deploy-'));
  const redis = await startRedis(work);
  try {
    const context = join(work, 'context');
    cleanCopy(context);
    // The systemd install's build (step 2) runs meanwhile.
    const opt = join(work, 'opt-cinder');
    cleanCopy(opt);
    const optBuilt = shInBackground(PRODUCTION_BUILD, opt);
    optBuilt.catch(() => {}); // awaited in step 2

    // 1. The container image.
    log('--- deploy/Containerfile');
    const image = buildImage(context, work);
    const app = join(image.root, image.workdir);
    assertNoTypeScriptAtRunTime(app);
    const port = await freePort();
    const containerEnv = {
      PATH: process.env.PATH!,
      ...NO_TYPESCRIPT,
      HOME: join(work, 'home-node'),
      ...image.env,
      PORT: String(port),
      LOCALNET_PORT: '0',
      API_KEYS: API_KEY,
      SERVER_SECRET,
      REDIS_URL: redis.url,
      STATE_DIR: join(work, 'container-state'),
    };
    const container = await start(
      image.cmd!.map((word) => (word === 'node' ? process.execPath : word)),
      app,
      containerEnv,
    );
    try {
      await checkServer(container);
      if (image.healthcheck) {
        const health = spawnSync(process.execPath, image.healthcheck.slice(1), { cwd: app, env: containerEnv });
        assert.equal(health.status, 0, 'the HEALTHCHECK command succeeds');
        log('HEALTHCHECK: healthy');
      }
      checkCli(app, container.url);
      await stop(container, 'SIGTERM', 75_000);
    } finally {
      container.child.kill('SIGKILL');
    }

    // 2. The systemd unit, over the build of docs/deployment.md.
    log('--- deploy/cinder.service');
    const unit = unitSettings(readFileSync(join(ROOT, 'deploy', 'cinder.service'), 'utf8'));
    await optBuilt;
    assertNoTypeScriptAtRunTime(opt);
    const workingDirectory = unit.get('WorkingDirectory')![0]!;
    const execStart = unit.get('ExecStart')![0]!.split(/\s+/);
    assert.equal(execStart[0], '/usr/bin/node', 'ExecStart runs node itself (no npm, no shell)');
    const environment = Object.assign({}, ...(unit.get('Environment') ?? []).map(parseEnv)) as Record<string, string>;
    assert.equal(unit.get('EnvironmentFile')?.[0], '/etc/cinder/cinder.env');
    const servicePort = await freePort();
    const serviceEnv = {
      PATH: process.env.PATH!,
      ...NO_TYPESCRIPT,
      ...envFile(readFileSync(join(ROOT, 'deploy', 'cinder.env.example'), 'utf8')),
      ...environment,
      // This machine's: free ports, its Redis, the embedded chain (no cluster here), a real key.
      PORT: String(servicePort),
      LOCALNET_PORT: '0',
      SOLANA_RPC_URL: '',
      REDIS_URL: redis.url,
      API_KEYS: API_KEY,
      SERVER_SECRET,
      STATE_DIR: join(work, 'service-state'),
    };
    const service = await start([process.execPath, ...execStart.slice(1)], workingDirectory.replace(/^\/opt\/cinder$/, opt), serviceEnv);
    try {
      await checkServer(service);
      checkCli(opt, service.url);
      const signal = (unit.get('KillSignal')?.[0] ?? 'SIGTERM') as NodeJS.Signals;
      await stop(service, signal, Number(unit.get('TimeoutStopSec')?.[0] ?? 90) * 1000);
    } finally {
      service.child.kill('SIGKILL');
    }
    log(`all deployment checks passed on Node ${process.version}`);
  } finally {
    redis.close();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`check:deploy: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
