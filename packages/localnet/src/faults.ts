/**
 * Fault injection for tests (test mode only): what public RPCs and a congested cluster do to a
 * client. Switched with the test-only methods `localnet_setFaults` / `localnet_clearFaults`, which
 * are never themselves affected, so a test can always switch faults off again.
 *
 * - dropSends: the next N sendTransaction calls answer the signature but never execute it (a
 *   leader that dropped the packet);
 * - dropOneTransaction: the first transaction sent after it is set is dropped on every send (a
 *   leader that never includes it), every other transaction executes: one of several lands;
 * - haltBlocks: no new slots, and every sent transaction is dropped (a stalled cluster), so nothing
 *   lands and no blockhash expires;
 * - holdSendsMs: every sendTransaction that passes preflight is answered with its signature at
 *   once and executed N ms later (in flight to the leader), in the order sent, in whatever slot is
 *   current then: one whose blockhash expired meanwhile never lands, one that landed meanwhile (a
 *   resend) is not executed twice. A change of the setting, or clearing the faults, applies to
 *   later sends only: held transactions still land on schedule (they are already in flight). So a
 *   test can hold a service's send, set holdSendsMs back to 0 and race another transaction past it;
 * - failRequests + failStatus (+ retryAfterSeconds): the next N HTTP requests answer 429 / 500 / 503;
 * - failAfterSend: once a sendTransaction has been answered, every later request answers
 *   failStatus (the RPC was lost right after sending);
 * - closeConnections: the next N HTTP requests get their connection destroyed without an answer;
 * - delayMs: every response is delayed;
 * - busyCluster { medianMicroLamports, waitSlots }: a congested cluster. getRecentPrioritizationFees
 *   reports, for every recent slot, a fee spread around that median (half of it to one and a half
 *   times it, the same for a slot at every call), or what really landed there when that is more; a
 *   sent transaction whose compute-unit price is below the median waits `waitSlots` slots before it
 *   executes (the leaders fill their blocks with better-paying ones), so one that waits past its
 *   blockhash's lifetime never lands; one paying the median or more executes as usual. Switching
 *   it off (null, or clearing the faults) lets waiting transactions execute when next looked at.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeTransactionText, signaturesOf } from './wire.ts';
import type { RpcInterceptor } from './rpcDispatcher.ts';
import type { SendHold } from './transactions.ts';
import { invalidParams } from './rpcErrors.ts';

export interface FaultSettings {
  dropSends: number;
  dropOneTransaction: boolean;
  haltBlocks: boolean;
  holdSendsMs: number;
  failRequests: number;
  failStatus: 429 | 500 | 503;
  retryAfterSeconds: number | null;
  failAfterSend: boolean;
  closeConnections: number;
  delayMs: number;
  busyCluster: BusyCluster | null;
}

export interface BusyCluster {
  medianMicroLamports: number;
  waitSlots: number;
}

const NONE: FaultSettings = {
  dropSends: 0,
  dropOneTransaction: false,
  haltBlocks: false,
  holdSendsMs: 0,
  failRequests: 0,
  failStatus: 503,
  retryAfterSeconds: null,
  failAfterSend: false,
  closeConnections: 0,
  delayMs: 0,
  busyCluster: null,
};

export interface FaultController {
  readonly settings: Readonly<FaultSettings>;
  set(changes: unknown): FaultSettings;
  clear(): void;
  /** Number of sendTransaction calls dropped so far. */
  readonly droppedSends: number;
  /** The JSON-RPC level: dropped sends, and "lost after send". */
  intercept: RpcInterceptor;
  /**
   * Under holdSendsMs: queues the execution of a sent transaction that passed preflight and returns
   * true (the caller answers the signature without executing it); false = execute it now.
   */
  readonly holdSend: SendHold;
  /** Forgets held transactions that have not executed yet (the chain is closing). */
  close(): void;
  /** The HTTP level, before dispatch; true when the request was answered (or killed) here. */
  interceptHttp(body: string, req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function methodsOf(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as unknown;
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    return calls.map((c) => String((c as { method?: unknown } | null)?.method ?? ''));
  } catch {
    return [];
  }
}

function validated(changes: unknown, current: FaultSettings): FaultSettings {
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) throw invalidParams('Invalid params: faults must be an object.');
  const next = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    switch (key) {
      case 'dropSends':
      case 'failRequests':
      case 'closeConnections':
      case 'delayMs':
      case 'holdSendsMs':
        if (!Number.isInteger(value) || (value as number) < 0) throw invalidParams(`Invalid params: ${key} must be an integer ≥ 0.`);
        next[key] = value as number;
        break;
      case 'haltBlocks':
      case 'dropOneTransaction':
      case 'failAfterSend':
        if (typeof value !== 'boolean') throw invalidParams(`Invalid params: ${key} must be a boolean.`);
        next[key] = value;
        break;
      case 'failStatus':
        if (value !== 429 && value !== 500 && value !== 503) throw invalidParams('Invalid params: failStatus must be 429, 500 or 503.');
        next.failStatus = value;
        break;
      case 'busyCluster':
        next.busyCluster = busyClusterOf(value);
        break;
      case 'retryAfterSeconds':
        if (value !== null && (!Number.isInteger(value) || (value as number) < 0)) throw invalidParams('Invalid params: retryAfterSeconds must be an integer ≥ 0 or null.');
        next.retryAfterSeconds = value as number | null;
        break;
      default:
        throw invalidParams(`Invalid params: unknown fault ${key}.`);
    }
  }
  return next;
}

/** The busy-cluster setting, validated: null switches it off. */
function busyClusterOf(value: unknown): BusyCluster | null {
  if (value === null) return null;
  const { medianMicroLamports, waitSlots, ...rest } = (typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  const valid = (n: unknown, min: number) => Number.isSafeInteger(n) && (n as number) >= min;
  if (typeof value !== 'object' || Array.isArray(value) || Object.keys(rest).length > 0 || !valid(medianMicroLamports, 1) || !valid(waitSlots, 1)) {
    throw invalidParams('Invalid params: busyCluster must be null or { medianMicroLamports: integer ≥ 1, waitSlots: integer ≥ 1 }.');
  }
  return { medianMicroLamports: medianMicroLamports as number, waitSlots: waitSlots as number };
}

/**
 * The fee a busy cluster reports for `slot`: spread evenly from half the median to one and a half
 * times it (a fixed pseudo-random step of the slot), so that the median of many slots is about the
 * median asked for, and the same slot reads the same at every call, as a real node's cache does.
 */
export function busySlotFee(busy: BusyCluster, slot: number): bigint {
  const step = (slot * 37) % 101; // 0 … 100, spread over the slots
  return (BigInt(busy.medianMicroLamports) * BigInt(50 + step)) / 100n;
}

export function createFaultController(hooks: { haltBlocks(halted: boolean): void; currentSlot(): number }): FaultController {
  let settings: FaultSettings = { ...NONE };
  let lostAfterSend = false;
  let droppedSends = 0;
  /** Under dropOneTransaction: the signature of the transaction that never executes. */
  let droppedSignature: string | null = null;
  /** Transactions in flight under holdSendsMs, in the order sent. */
  const held: { dueAt: number; execute: () => void }[] = [];
  let holdTimer: NodeJS.Timeout | undefined;
  /** Transactions that pay less than a busy cluster's median, each with the slot from which it executes. */
  const waiting: { fromSlot: number; execute: () => void }[] = [];
  let waitTimer: NodeJS.Timeout | undefined;

  /** Executes, in the order sent, the waiting transactions whose slot has come (all of them once the cluster is no longer busy). */
  function releaseWaiting() {
    if (waiting.length === 0) return;
    const slot = hooks.currentSlot();
    for (let i = 0; i < waiting.length; ) {
      if (settings.busyCluster === null || waiting[i]!.fromSlot <= slot) waiting.splice(i, 1)[0]!.execute();
      else i++;
    }
    if (waiting.length === 0) {
      clearInterval(waitTimer);
      waitTimer = undefined;
    }
  }

  const scheduleRelease = () => {
    holdTimer = setTimeout(releaseHeld, Math.max(0, held[0]!.dueAt - Date.now()));
    // Held transactions must never keep a process (a test runner) alive.
    holdTimer.unref();
  };
  /** Executes every held transaction that is due, in order; one sent later never overtakes it. */
  function releaseHeld() {
    holdTimer = undefined;
    while (held.length > 0 && held[0]!.dueAt <= Date.now()) {
      const { execute } = held.shift()!;
      // A halted cluster includes nothing, in flight or not.
      if (settings.haltBlocks) droppedSends++;
      else execute();
    }
    if (held.length > 0) scheduleRelease();
  }

  return {
    get settings() {
      return settings;
    },
    get droppedSends() {
      return droppedSends;
    },
    set(changes) {
      const next = validated(changes, settings);
      if (next.haltBlocks !== settings.haltBlocks) hooks.haltBlocks(next.haltBlocks);
      settings = next;
      if (!settings.failAfterSend) lostAfterSend = false;
      if (!settings.dropOneTransaction) droppedSignature = null;
      return settings;
    },
    clear() {
      if (settings.haltBlocks) hooks.haltBlocks(false);
      settings = { ...NONE };
      lostAfterSend = false;
      droppedSignature = null;
    },

    async intercept(call, next) {
      // Every request first sees what a busy cluster let through by now (a warp moves slots at once).
      releaseWaiting();
      if (call.method === 'getRecentPrioritizationFees' && settings.busyCluster) {
        const busy = settings.busyCluster;
        const reply = await next(call);
        if (!('result' in reply) || !Array.isArray(reply.result)) return reply;
        const entries = reply.result as { slot: number; prioritizationFee: bigint }[];
        return {
          ...reply,
          result: entries.map(({ slot, prioritizationFee }) => {
            const fee = busySlotFee(busy, slot);
            return { slot, prioritizationFee: prioritizationFee > fee ? prioritizationFee : fee };
          }),
        };
      }
      if (call.method !== 'sendTransaction') return next(call);
      if (settings.dropSends > 0 || settings.haltBlocks || settings.dropOneTransaction) {
        const params = Array.isArray(call.params) ? call.params : [];
        const encoding = (params[1] as { encoding?: string } | undefined)?.encoding === 'base64' ? 'base64' : 'base58';
        let signature: string | undefined;
        try {
          signature = signaturesOf(decodeTransactionText(String(params[0]), encoding))[0];
        } catch {
          // Malformed: the real method reports it.
        }
        let drop = signature !== undefined;
        if (drop && settings.dropSends === 0 && !settings.haltBlocks) {
          droppedSignature ??= signature!; // dropOneTransaction: only that one, on every send
          drop = signature === droppedSignature;
        } else if (drop && !settings.haltBlocks) settings = { ...settings, dropSends: settings.dropSends - 1 };
        if (drop) {
          droppedSends++;
          if (settings.failAfterSend) lostAfterSend = true;
          return { result: signature };
        }
      }
      const reply = await next(call);
      if (settings.failAfterSend) lostAfterSend = true;
      return reply;
    },

    holdSend: (execute, sent) => {
      const busy = settings.busyCluster;
      if (busy && sent.computeUnitPrice < BigInt(busy.medianMicroLamports)) {
        waiting.push({ fromSlot: hooks.currentSlot() + busy.waitSlots, execute });
        if (!waitTimer) {
          waitTimer = setInterval(releaseWaiting, 50);
          // Waiting transactions must never keep a process (a test runner) alive.
          waitTimer.unref();
        }
        return true;
      }
      if (settings.holdSendsMs === 0) return false;
      held.push({ dueAt: Date.now() + settings.holdSendsMs, execute });
      if (!holdTimer) scheduleRelease();
      return true;
    },

    close() {
      clearInterval(waitTimer);
      waitTimer = undefined;
      waiting.length = 0;
      clearTimeout(holdTimer);
      holdTimer = undefined;
      held.length = 0;
    },

    async interceptHttp(body, _req, res) {
      const methods = methodsOf(body);
      if (methods.length > 0 && methods.every((m) => m.startsWith('localnet_'))) return false;
      if (settings.delayMs > 0) await sleep(settings.delayMs);
      if (settings.closeConnections > 0) {
        settings = { ...settings, closeConnections: settings.closeConnections - 1 };
        res.socket?.destroy();
        return true;
      }
      if (settings.failRequests > 0 || lostAfterSend) {
        if (settings.failRequests > 0) settings = { ...settings, failRequests: settings.failRequests - 1 };
        const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
        if (settings.retryAfterSeconds !== null) headers['retry-after'] = String(settings.retryAfterSeconds);
        res.writeHead(settings.failStatus, headers);
        res.end(settings.failStatus === 429 ? 'Too many requests' : 'Injected failure');
        return true;
      }
      return false;
    },
  };
}
