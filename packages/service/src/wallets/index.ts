/**
 * Wallet generation for GET /api/generate_wallets: small requests run inline on the main thread,
 * larger ones are split into batches on a piscina pool sized to the cores, started on the first
 * such request, whose threads take tasks round robin by client (fairPool.ts); vanity searches run
 * there in time slices, so other clients' requests keep their turn. `hd` wallets share one new phrase: one
 * PBKDF2 (off the event loop), m/44'/501' derived once, then two HMACs and a keygen per wallet on
 * the pool. `stream` writes the streamed answer (one JSON line per wallet) as the pool makes it,
 * a bounded number of batches ahead of the socket, so memory does not grow with n. The pool's queue is bounded (503 when
 * full), and each client has a share of it (429 beyond), so no one client can fill it. The result is the response's JSON text
 * as a list of byte arrays, to be written out as they are (no concatenation of large bodies) and
 * wiped once sent. See generate.ts for the batch format.
 */
import { availableParallelism } from 'node:os';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import { createFairPool, shuttingDown } from './fairPool.ts';
import { CONTROL_FOUND, CONTROL_STOP, generateKeys, readBatch, type BatchView, type HdTask, type KeysTask, type VanityTask, type WalletTask } from './generate.ts';
import { generateMnemonic, mnemonicToSeed, solanaParentNode, type MnemonicWords, type Slip10Node } from './mnemonic.ts';

export interface WalletGeneratorOptions {
  /** Worker threads; default os.availableParallelism(). */
  threads?: number;
  /** A vanity search gives up (422 VANITY_TIMEOUT) after this long. */
  vanityTimeoutMs: number;
  /**
   * Plain requests of at most this many wallets run inline on the main thread (default 8): below
   * it a lone request is faster without the thread hop, above it the pool wins under load
   * (measured by `npm run bench`).
   */
  inlineMaxWallets?: number;
  /** Wallets waiting for or running on the pool beyond which new requests get 503 (default 200,000). */
  maxQueuedWallets?: number;
  /**
   * One client's share of that queue (default a quarter of it): beyond it the client gets 429,
   * so one client's searches can never fill the queue for everyone else.
   */
  maxQueuedWalletsPerClient?: number;
  /**
   * Nice increment of the worker threads (Linux; default 5): the event loop, which answers every
   * other request, wins the CPU over key generation when both want it.
   */
  workerNice?: number;
}

/** The generator's options from the configuration: one place, so the service and its test apps build the same. */
export function walletGeneratorOptions(config: Pick<Config, 'vanityTimeoutMs' | 'walletLimits'>): WalletGeneratorOptions {
  return {
    vanityTimeoutMs: config.vanityTimeoutMs,
    maxQueuedWallets: config.walletLimits.maxQueuedWallets,
    maxQueuedWalletsPerClient: config.walletLimits.maxQueuedWalletsPerClient,
  };
}

export interface VanityPattern {
  /** base58 characters the address starts with ('' for none). */
  prefix: string;
  /** base58 characters the address ends with ('' for none). */
  suffix: string;
  ignoreCase: boolean;
}

export interface GenerateWalletsRequest {
  n: number;
  /** Add a BIP39 phrase of 12 or 24 words (m/44'/501'/0'/0'). */
  mnemonic?: MnemonicWords | null;
  /** One new phrase of 12 or 24 words for all: wallet i at m/44'/501'/i'/0'. */
  hd?: MnemonicWords | null;
  /** Add `secretKeyBytes` (solana-keygen id.json array). */
  keygen?: boolean;
  vanity?: VanityPattern | null;
  /** This search's deadline instead of vanityTimeoutMs (a streamed search: VANITY_MAX_MS). */
  vanityTimeoutMs?: number;
  /** Abandons a vanity search (the client went away). */
  signal?: AbortSignal;
  /** Who asks (the rate limiter's client id): work on the pool is shared out per client. */
  client?: string;
  /** A stream of plain or hd wallets: awaited before each batch is made, with its size (the wallets budget, charged as it goes). */
  charge?: (wallets: number, signal?: AbortSignal) => Promise<void>;
}

/** The JSON body `{"wallets":[…],"keypairs":[…]}`, as parts to be written in order. */
export interface GeneratedWallets {
  count: number;
  byteLength: number;
  parts: Uint8Array[];
  /** Keys generated to find them (vanity), or `count`. */
  keysTried: number;
  /** Zero every byte holding key material; call once the body has been sent. */
  wipe(): void;
}

/** Takes the bytes of whole lines; resolves when more may be written. The bytes are the writer's to wipe once sent. */
export type LineWriter = (chunk: Uint8Array) => Promise<void>;

export interface WalletGenerator {
  readonly threads: number;
  generate(request: GenerateWalletsRequest): Promise<GeneratedWallets>;
  /**
   * The streamed answer (application/x-ndjson): `{"mnemonic":…}` first with `hd`, then one
   * `{"address",…}` line per wallet; a vanity search also writes `{"keysTried":…}` about once a
   * second and once at the end. Resolves once all are written; rejects when it cannot finish
   * (VANITY_TIMEOUT past vanityMaxMs, the signal's reason when abandoned). Nothing is written
   * before the request is admitted (429/503 reject before the first line).
   */
  stream(request: GenerateWalletsRequest, write: LineWriter): Promise<{ count: number; keysTried: number }>;
  /**
   * What is under way: wallets counted in the queue, streamed batches started on the pool (in all,
   * and not yet done), and the worker threads started so far (none before the first large request).
   */
  activity(): { queuedWallets: number; streamTasksStarted: number; streamTasksRunning: number; workers: number };
  /** Start the worker threads now rather than on the first large request (benchmarks: a warm pool). */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const WALLETS_OPEN = ascii('{"wallets":[');
const KEYPAIRS_OPEN = ascii('],"keypairs":[');
const MNEMONIC_OPEN = ascii('{"mnemonic":"');
const MNEMONIC_LINE_CLOSE = ascii('"}\n');
const MNEMONIC_CLOSE = ascii('","wallets":[');
const BODY_CLOSE = ascii(']}');

/** Plain keys per pool task (≈ 20 ms of work) and mnemonic keys per task (≈ 25 ms). */
const KEYS_PER_TASK = 1024;
const MNEMONIC_KEYS_PER_TASK = 8;
const MIN_KEYS_PER_TASK = 32;
const VANITY_SLICE_MS = 100;
/** A streamed vanity search writes its progress about this often. */
const PROGRESS_EVERY_MS = 1000;
/** Batches a stream keeps ahead of its socket, per thread: the pool never idles, memory stays bounded. */
const STREAM_TASKS_PER_THREAD = 2;

// Built (dist/, plain JavaScript: `npm run build`): the worker module itself. From source: an entry
// that registers tsx first, since a worker does not inherit a loader registered through tsx's API.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './workerEntry.mjs' : './worker.js', import.meta.url).href;

/** `{"mnemonic":"<phrase>"` followed by `closing` (English BIP39 words are lowercase ASCII: nothing to escape). */
function mnemonicBytes(phrase: string, closing: Uint8Array): Uint8Array {
  return Uint8Array.from([...MNEMONIC_OPEN, ...ascii(phrase), ...closing]);
}

/**
 * Joins batches into the response body: each list's first item loses its leading comma. With
 * `mnemonic`, the body starts with it (the hd answer).
 */
export function assembleBody(batches: BatchView[], keysTried: number, mnemonic?: string): GeneratedWallets {
  const filled = batches.filter((b) => b.count > 0);
  const parts: Uint8Array[] = [mnemonic === undefined ? WALLETS_OPEN : mnemonicBytes(mnemonic, MNEMONIC_CLOSE)];
  filled.forEach((b, i) => parts.push(i === 0 ? b.addresses.subarray(1) : b.addresses));
  parts.push(KEYPAIRS_OPEN);
  filled.forEach((b, i) => parts.push(i === 0 ? b.keypairs.subarray(1) : b.keypairs));
  parts.push(BODY_CLOSE);
  let wiped = false;
  return {
    count: filled.reduce((sum, b) => sum + b.count, 0),
    byteLength: parts.reduce((sum, p) => sum + p.byteLength, 0),
    parts,
    keysTried,
    wipe() {
      if (wiped) return;
      wiped = true;
      wipeAll(batches);
      if (mnemonic !== undefined) parts[0]!.fill(0);
    },
  };
}

/** Splits n into task sizes of at most `perTask`, at least one task per thread when n allows. */
export function splitWork(n: number, threads: number, perTask: number, minPerTask: number): number[] {
  let tasks = Math.max(Math.ceil(n / perTask), Math.min(threads, Math.ceil(n / minPerTask)));
  if (tasks > threads) tasks = Math.ceil(tasks / threads) * threads; // whole rounds: no thread left idle at the end
  tasks = Math.min(tasks, n);
  const base = Math.floor(n / tasks);
  const extra = n % tasks;
  return Array.from({ length: tasks }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Wallets a stream counts in the queue while it runs: the batches it keeps ahead of its socket. */
export function streamReservation(threads: number, mnemonic = false): number {
  return threads * STREAM_TASKS_PER_THREAD * (mnemonic ? MNEMONIC_KEYS_PER_TASK : KEYS_PER_TASK / 4);
}

function wipeAll(batches: BatchView[]): void {
  for (const b of batches) b.buffer.fill(0);
}

export function createWalletGenerator(options: WalletGeneratorOptions): WalletGenerator {
  const threads = Math.max(1, options.threads ?? availableParallelism());
  const inlineMaxWallets = options.inlineMaxWallets ?? 8;
  const maxQueuedWallets = options.maxQueuedWallets ?? 200_000;
  const maxQueuedWalletsPerClient = options.maxQueuedWalletsPerClient ?? Math.max(1, Math.floor(maxQueuedWallets / 4));
  // The threads start on the first task that needs them (fairPool.ts), not with the generator.
  const pool = createFairPool({ threads, filename: WORKER_URL, niceIncrement: options.workerNice ?? 5 });
  let queuedWallets = 0;
  let streamTasksStarted = 0;
  let streamTasksRunning = 0;
  const queuedByClient = new Map<string, number>();
  let closed = false;

  async function runAll(client: string, tasks: WalletTask[]): Promise<BatchView[]> {
    const settled = await Promise.allSettled(tasks.map((t) => pool.run(client, t)));
    const batches = settled.flatMap((s) => (s.status === 'fulfilled' ? [readBatch(s.value)] : []));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      wipeAll(batches);
      throw failed.reason;
    }
    return batches;
  }

  /** Runs `work` with `wallets` counted in the queue: the client's share first (429), then the whole (503). */
  async function reserve<T>(client: string, wallets: number, work: () => Promise<T>): Promise<T> {
    const ownQueued = queuedByClient.get(client) ?? 0;
    if (ownQueued + wallets > maxQueuedWalletsPerClient) {
      throw new CinderError('RATE_LIMITED', { reason: 'queuedWallets', queued: ownQueued, share: maxQueuedWalletsPerClient }, { headers: { 'retry-after': '1' } });
    }
    if (queuedWallets + wallets > maxQueuedWallets) {
      throw new CinderError('SERVICE_UNAVAILABLE', { reason: 'walletCapacity' }, { headers: { 'retry-after': '1' } });
    }
    queuedWallets += wallets;
    queuedByClient.set(client, ownQueued + wallets);
    try {
      return await work();
    } finally {
      queuedWallets -= wallets;
      const left = (queuedByClient.get(client) ?? wallets) - wallets;
      if (left === 0) queuedByClient.delete(client);
      else queuedByClient.set(client, left);
    }
  }

  /**
   * Runs a vanity search on every thread until n are found, the deadline or the signal; each
   * slice's batch goes to `onBatch` (awaited before the lane's next slice). Rejects with
   * VANITY_TIMEOUT past the deadline, the signal's reason when abandoned.
   */
  async function runVanity(
    request: GenerateWalletsRequest,
    pattern: VanityPattern,
    options: { lines: boolean; timeoutMs: number; onBatch(batch: BatchView, tried: number): Promise<void> | void },
  ): Promise<number> {
    const control = new SharedArrayBuffer(8);
    const flags = new Int32Array(control);
    const task: VanityTask = {
      kind: 'vanity',
      want: request.n,
      prefix: pattern.prefix,
      suffix: pattern.suffix,
      ignoreCase: pattern.ignoreCase,
      keygen: request.keygen ?? false,
      mnemonic: null,
      lines: options.lines,
      deadline: Date.now() + options.timeoutMs,
      sliceMs: VANITY_SLICE_MS,
      control,
    };
    const stop = () => Atomics.store(flags, CONTROL_STOP, 2);
    if (request.signal?.aborted) stop();
    request.signal?.addEventListener('abort', stop, { once: true });
    let tried = 0;
    const client = request.client ?? '';
    const lane = async () => {
      try {
        while (Atomics.load(flags, CONTROL_STOP) === 0 && Date.now() < task.deadline) {
          const batch = readBatch(await pool.run(client, task));
          tried += batch.tried;
          await options.onBatch(batch, tried);
        }
      } catch (error) {
        stop(); // the other lanes end their slice and stop too
        throw error;
      }
    };
    const lanes = await Promise.allSettled(Array.from({ length: threads }, lane));
    request.signal?.removeEventListener('abort', stop);
    const failed = lanes.find((l) => l.status === 'rejected');
    if (failed) throw failed.reason;
    if (request.signal?.aborted) throw request.signal.reason;
    const found = Math.min(Atomics.load(flags, CONTROL_FOUND), request.n);
    if (found < request.n) {
      throw new CinderError('VANITY_TIMEOUT', {
        found,
        n: request.n,
        prefix: pattern.prefix,
        suffix: pattern.suffix,
        ignoreCase: pattern.ignoreCase,
        timeoutMs: options.timeoutMs,
        keysTried: tried,
      });
    }
    return tried;
  }

  async function vanitySearch(request: GenerateWalletsRequest, pattern: VanityPattern): Promise<GeneratedWallets> {
    const batches: BatchView[] = [];
    try {
      const tried = await runVanity(request, pattern, { lines: false, timeoutMs: request.vanityTimeoutMs ?? options.vanityTimeoutMs, onBatch: (batch) => void batches.push(batch) });
      return assembleBody(batches, tried);
    } catch (error) {
      wipeAll(batches);
      throw error;
    }
  }

  /** One new phrase and its m/44'/501' node, the PBKDF2 on libuv's thread pool. */
  async function newPhrase(words: MnemonicWords): Promise<{ mnemonic: string; parent: Slip10Node }> {
    const mnemonic = generateMnemonic(words);
    const seed = await mnemonicToSeed(mnemonic);
    try {
      return { mnemonic, parent: solanaParentNode(seed) };
    } finally {
      seed.fill(0);
    }
  }

  /** The tasks of n wallets (plain, mnemonic= or hd), in order, `perTask` wallets at most each. */
  function walletTasks(request: GenerateWalletsRequest, lines: boolean, parent: Slip10Node | null, perTask?: number): (KeysTask | HdTask)[] {
    const keygen = request.keygen ?? false;
    const mnemonic = request.mnemonic ?? null;
    const sizes =
      mnemonic !== null
        ? splitWork(request.n, threads, MNEMONIC_KEYS_PER_TASK, 1)
        : splitWork(request.n, threads, perTask ?? KEYS_PER_TASK, Math.min(perTask ?? MIN_KEYS_PER_TASK, MIN_KEYS_PER_TASK));
    let from = 0;
    return sizes.map((count): KeysTask | HdTask => {
      const task: KeysTask | HdTask =
        parent === null
          ? { kind: 'keys', count, keygen, mnemonic, lines }
          : { kind: 'hd', parent, from, count, keygen, mnemonic: null, lines };
      from += count;
      return task;
    });
  }

  /**
   * Plain, mnemonic= and hd wallets, streamed: at most STREAM_TASKS_PER_THREAD tasks per thread in
   * flight, written in order, the next task started only when the socket took the last batch.
   */
  async function streamWallets(request: GenerateWalletsRequest, write: LineWriter): Promise<number> {
    const { signal } = request;
    const client = request.client ?? '';
    let parent: Slip10Node | null = null;
    try {
      if (request.hd) {
        const phrase = await newPhrase(request.hd);
        parent = phrase.parent;
        await write(mnemonicBytes(phrase.mnemonic, MNEMONIC_LINE_CLOSE));
      }
      // Tasks small enough that the first lines go out at once, large enough to amortise the thread hop.
      const tasks = walletTasks(request, true, parent, KEYS_PER_TASK / 4);
      const window = threads * STREAM_TASKS_PER_THREAD;
      const running: Promise<Uint8Array>[] = [];
      let next = 0;
      let written = 0;
      try {
        while (written < tasks.length) {
          while (running.length < window && next < tasks.length) {
            await request.charge?.(tasks[next]!.count, signal);
            streamTasksStarted++;
            streamTasksRunning++;
            const task = pool.run(client, tasks[next++]!).finally(() => streamTasksRunning--);
            // Its rejection is read when its turn comes (the await below); until then, while this
            // stream waits on a slow reader, the pool may reject it (the service closing), and that
            // must not count as an unhandled rejection.
            task.catch(() => {});
            running.push(task);
          }
          const batch = readBatch(await running.shift()!);
          if (signal?.aborted) {
            batch.buffer.fill(0);
            throw signal.reason;
          }
          await write(batch.keypairs);
          written++;
        }
      } finally {
        // Abandoned: the tasks already on the pool finish (a few ms each); their keys are wiped.
        for (const task of running) void task.then((b) => b.fill(0), () => {});
      }
      return request.n;
    } finally {
      parent?.fill(0);
    }
  }

  /** A vanity search, streamed: each slice's finds as they come, and its progress. */
  async function streamVanity(request: GenerateWalletsRequest, pattern: VanityPattern, write: LineWriter): Promise<number> {
    let lastProgress = 0;
    const tried = await runVanity(request, pattern, {
      lines: true,
      timeoutMs: request.vanityTimeoutMs ?? options.vanityTimeoutMs,
      onBatch: async (batch, triedSoFar) => {
        if (batch.count > 0) await write(batch.keypairs);
        else batch.buffer.fill(0);
        if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = Date.now();
          await write(ascii(`{"keysTried":${triedSoFar}}\n`));
        }
      },
    });
    await write(ascii(`{"keysTried":${tried}}\n`));
    return tried;
  }

  return {
    threads,

    async generate(request) {
      const { n } = request;
      const client = request.client ?? '';
      if (!Number.isSafeInteger(n) || n < 1) throw new RangeError('n must be a positive integer');
      const mnemonic = request.mnemonic ?? null;
      const keygen = request.keygen ?? false;
      if (request.vanity) {
        if (mnemonic !== null) throw new RangeError('a vanity search cannot derive mnemonics');
        const pattern = request.vanity;
        return reserve(client, n, () => vanitySearch(request, pattern));
      }
      if (request.hd) {
        if (mnemonic !== null) throw new RangeError('hd wallets share one phrase: mnemonic= does not apply');
        const words = request.hd;
        return reserve(client, n, async () => {
          const { mnemonic: phrase, parent } = await newPhrase(words);
          try {
            return assembleBody(await runAll(client, walletTasks(request, false, parent)), n, phrase);
          } finally {
            parent.fill(0);
          }
        });
      }
      if (mnemonic === null && n <= inlineMaxWallets) {
        if (closed) throw shuttingDown();
        return assembleBody([readBatch(generateKeys({ kind: 'keys', count: n, keygen, mnemonic, lines: false }))], n);
      }
      const tasks = walletTasks(request, false, null);
      return reserve(client, n, async () => assembleBody(await runAll(client, tasks), n));
    },

    async stream(request, write) {
      const { n } = request;
      const client = request.client ?? '';
      if (!Number.isSafeInteger(n) || n < 1) throw new RangeError('n must be a positive integer');
      if (request.vanity) {
        if (request.mnemonic || request.hd) throw new RangeError('a vanity search cannot derive mnemonics');
        const pattern = request.vanity;
        const keysTried = await reserve(client, n, () => streamVanity(request, pattern, write));
        return { count: n, keysTried };
      }
      if (request.hd && request.mnemonic) throw new RangeError('hd wallets share one phrase: mnemonic= does not apply');
      // What is queued at once is the window of tasks in flight, not n.
      const inFlight = Math.min(n, streamReservation(threads, request.mnemonic != null));
      const count = await reserve(client, inFlight, () => streamWallets(request, write));
      return { count, keysTried: count };
    },

    activity() {
      return { queuedWallets, streamTasksStarted, streamTasksRunning, workers: pool.workers() };
    },

    async warmUp() {
      const batches = await runAll('', Array.from({ length: threads }, (): KeysTask => ({ kind: 'keys', count: 1, keygen: false, mnemonic: null, lines: false })));
      wipeAll(batches);
    },

    async close() {
      closed = true;
      await pool.close();
    },
  };
}
