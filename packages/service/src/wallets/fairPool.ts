/**
 * The worker pool, shared out round robin by client. Piscina runs its queue first come, first
 * served: a client that queues many tasks (a vanity search queues one 100 ms slice per thread,
 * again and again) would make everyone else wait behind all of them. So tasks wait here instead,
 * one queue per client, and at most one task per thread is handed to piscina at a time; each time
 * a thread is free it takes the head task of the next client in turn. A search then gets whole
 * threads only while no other client wants them, and another client's request waits at most for
 * the slices already running (one per thread), whatever the searches queued.
 *
 * The threads start on the first task, not before: a service that is never asked for more than a
 * few wallets (those run inline) never starts them.
 *
 * Written by hand: piscina's own task queue is pluggable but synchronous and per task, with no
 * notion of whom a task is for; this is the few lines that add one.
 */
import { Piscina } from 'piscina';
import { CinderError } from '../errors.ts';
import type { WalletTask } from './generate.ts';

interface Job {
  task: WalletTask;
  resolve(batch: Uint8Array): void;
  reject(error: unknown): void;
}

export interface FairPoolOptions {
  threads: number;
  /** The worker module (URL). */
  filename: string;
  /** Nice increment of the worker threads (Linux). */
  niceIncrement: number;
}

export interface FairPool {
  /** Runs `task` on a thread when `client`'s turn comes. */
  run(client: string, task: WalletTask): Promise<Uint8Array>;
  /** Worker threads started so far (0 until the first task). */
  workers(): number;
  /** Tasks waiting for their turn, all clients. */
  waiting(): number;
  close(): Promise<void>;
}

export const shuttingDown = () => new CinderError('SERVICE_UNAVAILABLE', 'The server is shutting down.', { headers: { 'retry-after': '5' } });

export function createFairPool(options: FairPoolOptions): FairPool {
  const { threads } = options;
  let pool: Piscina<WalletTask, Uint8Array> | undefined;
  let closed = false;
  let running = 0;
  let waiting = 0;
  /** Each client's waiting tasks; the Map's order is the order of turns (a served client goes to the back). */
  const queues = new Map<string, Job[]>();

  function getPool(): Piscina<WalletTask, Uint8Array> {
    // Workers are unref'd by piscina while idle, so the pool never keeps the process alive.
    pool ??= new Piscina<WalletTask, Uint8Array>({
      filename: options.filename,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      niceIncrement: options.niceIncrement,
    });
    return pool;
  }

  function dispatch(): void {
    while (running < threads && queues.size > 0) {
      const [client, jobs] = queues.entries().next().value as [string, Job[]];
      const job = jobs.shift()!;
      queues.delete(client);
      if (jobs.length > 0) queues.set(client, jobs); // to the back of the turns
      waiting--;
      running++;
      let started: Promise<Uint8Array>;
      try {
        started = getPool().run(job.task);
      } catch (error) {
        started = Promise.reject(error);
      }
      started.then(job.resolve, job.reject).finally(() => {
        running--;
        dispatch();
      });
    }
  }

  return {
    run(client, task) {
      if (closed) return Promise.reject(shuttingDown());
      return new Promise<Uint8Array>((resolve, reject) => {
        const jobs = queues.get(client);
        if (jobs) jobs.push({ task, resolve, reject });
        else queues.set(client, [{ task, resolve, reject }]);
        waiting++;
        dispatch();
      });
    },
    workers: () => pool?.threads.length ?? 0,
    waiting: () => waiting,
    async close() {
      closed = true;
      for (const jobs of queues.values()) for (const job of jobs) job.reject(shuttingDown());
      queues.clear();
      waiting = 0;
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
}
