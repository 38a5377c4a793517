/** Process-level behaviour: close() releases everything; the standalone entry point. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = fileURLToPath(new URL('../', import.meta.url));

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test('after close() nothing keeps the process alive (timer, keep-alive HTTP, open WebSockets)', async (t) => {
  const proc = run(['test/fixtures/closeLetsProcessExit.ts']);
  t.after(() => proc.child.kill('SIGKILL'));
  await within(
    (async () => {
      while (!proc.output().stdout.includes('closed')) await new Promise((r) => setTimeout(r, 20));
    })(),
    20_000,
    'fixture',
  );
  assert.equal(await within(proc.exited, 3_000, 'process after close()'), 0, proc.output().stderr);
  const closeMs = Number(/closed in (\d+) ms/.exec(proc.output().stdout)?.[1]);
  // What close() must not wait for is an idle keep-alive connection, which Node holds for 5 s.
  assert.ok(closeMs < 4_000, `close() took ${closeMs} ms`);
});

test('npm run localnet: rejects a bad LOCALNET_PORT', async (t) => {
  const proc = run(['src/main.ts'], { LOCALNET_PORT: '8899x' });
  t.after(() => proc.child.kill('SIGKILL'));
  assert.equal(await within(proc.exited, 20_000, 'main'), 1);
  assert.match(proc.output().stderr, /The port \(--port or LOCALNET_PORT\) must be an integer from 0 to 65534 .*got "8899x"/);
});

test('npm run localnet: prints both URLs and stops on SIGTERM', async (t) => {
  const proc = run(['src/main.ts'], { LOCALNET_PORT: '0' });
  t.after(() => proc.child.kill('SIGKILL'));
  await within(
    (async () => {
      while (!/Solana WebSocket: ws:\/\/127\.0\.0\.1:\d+/.test(proc.output().stdout)) await new Promise((r) => setTimeout(r, 50));
    })(),
    20_000,
    'startup',
  );
  const rpcUrl = /Solana JSON-RPC: (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.output().stdout)?.[1];
  assert.ok(rpcUrl);
  const reply = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' });
  assert.deepEqual(await reply.json(), { jsonrpc: '2.0', result: 'ok', id: 1 });
  proc.child.kill('SIGTERM');
  assert.equal(await within(proc.exited, 10_000, 'shutdown'), 0);
});
