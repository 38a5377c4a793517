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
 * - delayMs: every response is delayed.
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

export function createFaultController(hooks: { haltBlocks(halted: boolean): void }): FaultController {
  let settings: FaultSettings = { ...NONE };
  let lostAfterSend = false;
  let droppedSends = 0;
  /** Under dropOneTransaction: the signature of the transaction that never executes. */
  let droppedSignature: string | null = null;
  /** Transactions in flight under holdSendsMs, in the order sent. */
  const held: { dueAt: number; execute: () => void }[] = [];
  let holdTimer: NodeJS.Timeout | undefined;

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

    holdSend: (execute) => {
      if (settings.holdSendsMs === 0) return false;
      held.push({ dueAt: Date.now() + settings.holdSendsMs, execute });
      if (!holdTimer) scheduleRelease();
      return true;
    },

    close() {
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
