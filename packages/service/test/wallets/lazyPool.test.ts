/**
 * The wallet pool's threads start on the first request that needs them, not at start-up
 * (docs/wallets.md): a service that only ever answers small requests (run inline) never starts
 * them. Counted two ways: the generator's own count of workers, and the worker threads a service
 * started as `npm start` runs it constructs (with an RPC URL, so that no local chain runs in the
 * process), each reported on stderr by a wrapper of `worker_threads.Worker` loaded before it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { until } from '../http/unreadClients.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the wallet pool starts on demand', () => {
  it('the generator: no worker after inline requests; its threads once a request needs the pool', async () => {
    const generator = createWalletGenerator({ vanityTimeoutMs: 1000, threads: 2 });
    try {
      assert.equal(generator.activity().workers, 0);
      for (let i = 0; i < 3; i++) (await generator.generate({ n: 8 })).wipe();
      assert.equal(generator.activity().workers, 0, 'n ≤ 8 runs inline');
      (await generator.generate({ n: 1000 })).wipe();
      assert.equal(generator.activity().workers, 2);
    } finally {
      await generator.close();
    }
  });

  describe('the service as started', () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'cinder-lazy-pool-'));
    // Every Worker the main thread constructs writes a line (the builtin's export is replaced before
    // any module of the service imports it).
    const countWorkers = join(stateDir, 'count-workers.mjs');
    writeFileSync(
      countWorkers,
      `import threads from 'node:worker_threads';
      import { syncBuiltinESMExports } from 'node:module';
      const Original = threads.Worker;
      // Workers inherit this --import: only the main thread's are counted.
      if (threads.isMainThread) threads.Worker = class extends Original {
        constructor(...args) {
          super(...args);
          process.stderr.write('test: worker thread started\\n');
        }
      };
      syncBuiltinESMExports();
      `,
    );
    let child: ChildProcess | undefined;
    after(() => {
      child?.kill('SIGKILL');
      rmSync(stateDir, { recursive: true, force: true });
    });

    it('starts no worker thread until the first large request, then its pool', { timeout: 180_000 }, async () => {
      child = spawn(process.execPath, ['--import', countWorkers, '--import', 'tsx', 'src/server.ts'], {
        cwd: root,
        env: { ...process.env, SOLANA_RPC_URL: 'http://127.0.0.1:9', HOST: '127.0.0.1', PORT: '0', STATE_DIR: stateDir, LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = child;
      let stderr = '';
      proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const workers = () => stderr.split('test: worker thread started').length - 1;
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const match = /Cinder listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        proc.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
      });
      const get = async (path: string) => {
        const response = await fetch(`${url}${path}`);
        await response.arrayBuffer();
        return response.status;
      };
      assert.equal(await get('/health'), 200);
      assert.equal(await get('/api/generate_wallets?n=1'), 200);
      assert.equal(await get('/api/generate_wallets?n=8'), 200);
      assert.equal(workers(), 0, 'listening, and small requests answered: no worker thread');
      assert.equal(await get('/api/generate_wallets?n=1000'), 200);
      // The first large request starts the pool, one worker per core (their lines arrive on another pipe than the answer).
      await until(() => workers() >= availableParallelism(), 'the pool\'s workers to start');
      assert.equal(workers(), availableParallelism());
    });
  });
});
