/**
 * `npm start` as a newcomer and as a supervisor use it, with the real npm, the real server and its
 * embedded chain on free ports:
 * - it prints the service URL, the docs page and the exact `npm run demo:token` command for its own
 *   ports; that command, then the curl it prints, burn the demo tokens without editing anything;
 * - SIGTERM or SIGINT sent to the process that `npm start` made (npm itself: what a supervisor or a
 *   terminal's Ctrl-C signals) stops the server gracefully: a request already taken is answered,
 *   the shutdown is logged, the process tree exits 0 and every port is free again.
 *
 * What this relies on: npm forwards SIGTERM and SIGINT to the script's process and exits with its
 * code (@npmcli/run-script), and the script `exec`s node, so there is no shell in between that
 * would die and leave the server running (the bug this guards against).
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Started {
  child: ChildProcess;
  output: () => string;
  closed: Promise<number | null>;
  url: string;
  rpcUrl: string;
  wsUrl: string;
}

async function waitFor(what: string, check: () => boolean, started: { output: () => string }, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen; output so far:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function npmStart(): Promise<Started> {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: '0',
      LOCALNET_PORT: '0',
      LOG_LEVEL: 'info',
      npm_config_update_notifier: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a failed test can stop the whole tree (npm and the server).
    detached: true,
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const started = { output: () => text };
  await waitFor('npm start listening', () => /A wallet with tokens|Solana RPC:/.test(text) || child.exitCode !== null, started);
  const url = /^Cinder listening on (http:\/\/\S+)$/m.exec(text)?.[1];
  const chain = /^Local Solana chain: RPC (http:\/\/\S+) {2}WebSocket (ws:\/\/\S+)$/m.exec(text);
  assert.ok(url && chain, text);
  return { child, output: () => text, closed, url, rpcUrl: chain[1]!, wsUrl: chain[2]! };
}

function killGroup(started: Started): void {
  try {
    process.kill(-started.child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** True when nothing listens on the port any more (binding it succeeds). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Sends the headers of a request and waits until the server has taken it (Node answers
 * `100 Continue` in the same step in which it hands the request to Fastify), holding back the body.
 */
async function requestInFlight(url: string) {
  const body = '{"mint":"So11111111111111111111111111111111111111112"}';
  const socket = connect(portOf(url), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    'POST /api/burn_tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
  );
  await waitFor('100 Continue', () => received.includes('100 Continue'), { output: () => received }, 30_000);
  return {
    finish: async () => {
      socket.write(body);
      await ended;
      return received;
    },
  };
}

async function signalAndCheck(started: Started, signal: 'SIGTERM' | 'SIGINT'): Promise<void> {
  const inFlight = await requestInFlight(started.url);
  started.child.kill(signal); // npm's own process, not the server's
  await waitFor('the shutdown log line', () => started.output().includes('shutting down: finishing in-flight requests'), started, 30_000);
  const answer = await inFlight.finish();
  // The request taken before the signal ran to its real answer (no 503, no reset connection).
  assert.match(answer, /HTTP\/1\.1 400 Bad Request/, answer);
  assert.match(answer, /"code":"MISSING_FIELD"/, answer);
  assert.equal(await started.closed, 0, started.output());
  const log = started.output();
  assert.match(log, new RegExp(`"signal":"${signal}".*"msg":"shutting down: finishing in-flight requests"`), log);
  assert.match(log, /"msg":"stopped"/, log);
  for (const url of [started.url, started.rpcUrl, started.wsUrl]) {
    assert.ok(await isFree(portOf(url)), `${url} is free after the stop\n${log}`);
  }
}

it('npm start prints the docs page and the demo:token command for its ports; that command and its curl burn the demo tokens; SIGTERM stops it gracefully', { timeout: 300_000 }, async () => {
  const started = await npmStart();
  try {
    const text = started.output();
    assert.match(text, new RegExp(`^API documentation \\(with "Try it out"\\): ${started.url}/docs$`, 'm'));
    assert.match(text, new RegExp(`^Guide \\(every route, the money rules, deployment\\): ${started.url}/guide$`, 'm'));
    const demo = /^A wallet with tokens to burn on it, in another terminal: (.+)$/m.exec(text)?.[1];
    assert.ok(demo, text);
    // The command as printed: with free ports, it names the server and the chain it must use.
    assert.ok(demo.includes(`CINDER_URL=${started.url} `) && demo.includes(`LOCALNET_RPC_URL=${started.rpcUrl} `), demo);
    assert.ok((await fetch(`${started.url}/docs`)).ok);
    assert.ok((await fetch(`${started.url}/guide`)).ok);

    const made = await bash(demo, {});
    assert.equal(made.code, 0, `${made.stdout}\n${made.stderr}`);
    const curl = made.stdout.split('\n').find((line) => line.startsWith('curl '));
    assert.ok(curl !== undefined && curl.startsWith(`curl -s ${started.url}/api/burn_tokens `), made.stdout);
    const burned = await bash(curl, {});
    assert.equal(burned.code, 0, burned.stderr);
    const result = JSON.parse(burned.stdout) as { status: string; message: string };
    assert.equal(result.status, 'success', burned.stdout);
    assert.match(result.message, /^Burned 1,234\.5 of \S+ and closed 1 account/);

    await signalAndCheck(started, 'SIGTERM');
  } finally {
    killGroup(started);
  }
});

it('SIGINT to npm start (Ctrl-C) stops it gracefully', { timeout: 180_000 }, async () => {
  const started = await npmStart();
  try {
    await signalAndCheck(started, 'SIGINT');
  } finally {
    killGroup(started);
  }
});
