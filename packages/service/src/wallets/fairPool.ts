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
 * few wallets (those run inline) never starts them. Starting them takes a while (each loads its
 * modules; from source, through tsx), so until every thread has answered a first task the tasks
 * run on the main thread, one at a time between other events, vanity slices cut to 10 ms: the
 * first large request is served at the inline pace instead of waiting for the threads.
 *
 * Written by hand: piscina's own task queue is pluggable but synchronous and per task, with no
 * notion of whom a task is for; this is the few lines that add one.
 */
import { Piscina } from 'piscina';
import { CinderError } from '../errors.ts';
import { runTask, type WalletTask } from './generate.ts';

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

/** A vanity slice run on the main thread while the threads start: short, as the event loop waits for it. */
const INLINE_SLICE_MS = 10;

export const shuttingDown = () => new CinderError('SERVICE_UNAVAILABLE', { reason: 'shuttingDown' }, { headers: { 'retry-after': '5' } });

export function createFairPool(options: FairPoolOptions): FairPool {
  const { threads } = options;
  let pool: Piscina<WalletTask, Uint8Array> | undefined;
  let closed = false;
  let running = 0;
  let waiting = 0;
  /** Each client's waiting tasks; the Map's order is the order of turns (a served client goes to the back). */
  const queues = new Map<string, Job[]>();

  /** True once every thread has run a first task (until then, tasks run inline). */
  let started = false;

  function getPool(): Piscina<WalletTask, Uint8Array> {
    if (pool) return pool;
    // Workers are unref'd by piscina while idle, so the pool never keeps the process alive.
    const created = new Piscina<WalletTask, Uint8Array>({
      filename: options.filename,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      niceIncrement: options.niceIncrement,
    });
    pool = created;
    const probe = (): WalletTask => ({ kind: 'keys', count: 1, keygen: false, mnemonic: null, lines: false });
    Promise.all(Array.from({ length: threads }, () => created.run(probe())))
      .then((batches) => batches.forEach((b) => b.fill(0)))
      .catch(() => {}) // a pool that cannot start fails the tasks handed to it, each with its error
      .finally(() => {
        started = true;
        dispatch();
      });
    return created;
  }

  /**
   * One task on the main thread, after the events already waiting. A task handed to a thread is a
   * copy (structured clone), and an hd task wipes its parent node once used: inline, it gets a
   * copy of its own too, so the other tasks of the request still have the node.
   */
  function runInline(task: WalletTask): Promise<Uint8Array> {
    const own: WalletTask =
      task.kind === 'vanity' ? { ...task, sliceMs: Math.min(task.sliceMs, INLINE_SLICE_MS) } : task.kind === 'hd' ? { ...task, parent: task.parent.slice() } : task;
    return new Promise((resolve, reject) => {
      setImmediate(() => {
        try {
          resolve(runTask(own));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  function dispatch(): void {
    if (closed) return;
    const p = getPool();
    // Inline: one task at a time (it holds the event loop); on the threads: one per thread.
    while (running < (started ? threads : 1) && queues.size > 0) {
      const [client, jobs] = queues.entries().next().value as [string, Job[]];
      const job = jobs.shift()!;
      queues.delete(client);
      if (jobs.length > 0) queues.set(client, jobs); // to the back of the turns
      waiting--;
      running++;
      const result = started ? p.run(job.task) : runInline(job.task);
      result.then(job.resolve, job.reject).finally(() => {
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
