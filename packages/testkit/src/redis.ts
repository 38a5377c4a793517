/**
 * A real Redis for tests: Debian's `redis-server` (.ci/run installs it when missing) on a free
 * loopback port, without persistence (`--save '' --appendonly no`). `kill()` ends it at once
 * (SIGKILL, like a crash) and `restart()` starts a new, empty one on the same port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Ends the server abruptly (SIGKILL) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and waits until it answers PING. */
  restart(): Promise<void>;
  /** Sends one command (inline protocol) and returns the raw reply. */
  command(line: string): Promise<string>;
  stop(): Promise<void>;
}

function redisServerPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) {
    throw new Error('redis-server is not installed; install it with `apt-get install -y redis-server` (.ci/run does this)');
  }
  return path;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function sendCommand(port: number, line: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('redis command timed out'));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.endsWith('\r\n')) {
        clearTimeout(timer);
        socket.end();
        resolve(reply);
      }
    });
    socket.write(`${line}\r\n`);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startTestRedis(): Promise<TestRedis> {
  const binary = redisServerPath();
  const port = await freePort();
  let child: ChildProcess | null = null;
  let output = '';

  async function start() {
    output = '';
    const proc = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child = proc;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with code ${proc.exitCode}:\n${output}`);
      try {
        if ((await sendCommand(port, 'PING', 500)).startsWith('+PONG')) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer PING on port ${port}:\n${output}`);
      await sleep(20);
    }
  }

  async function kill() {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  const onExit = () => child?.kill('SIGKILL');
  process.once('exit', onExit);
  await start();

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill();
      await start();
    },
    command: (line) => sendCommand(port, line),
    async stop() {
      process.off('exit', onExit);
      await kill();
    },
  };
}
