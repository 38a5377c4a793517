/**
 * A JSON-RPC proxy on loopback in front of the local chain, for the landing-engine tests and the
 * burn benchmark. It records every request that reaches it (method, params, arrival time) and can
 * act like a real provider and cluster:
 * - `maxRps`: a provider's budget: beyond that many requests in the last second (sliding window),
 *   it answers 429 with `Retry-After: 1` and counts the refusal;
 * - `confirmation`: real-cluster confirmation timing: a sent signature reads as unknown for
 *   `unknownMs` and at most `processed` until `processedUntilMs` after it was first sent (the
 *   chain itself confirms at once);
 * - `refuse`: answer 429 (with `retryAfter`, seconds) to the next N requests;
 * - `beforeForward`: run a test's step (change the chain, say) before a request reaches the chain.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getBase58Decoder } from '@solana/kit';

export interface ProxyRequest {
  method: string;
  params: unknown[];
  at: number;
}

export interface RpcProxyOptions {
  maxRps?: number;
  confirmation?: { unknownMs: number; processedUntilMs: number };
}

export interface RpcProxy {
  url: string;
  /** Requests that reached the chain (refused ones are not in it). */
  readonly requests: ProxyRequest[];
  /** Arrival times of the requests answered 429. */
  readonly refusals: number[];
  /** Answer 429 (Retry-After: `retryAfterSeconds`, none when null) to the next `count` requests. */
  refuse(count: number, retryAfterSeconds: number | null): void;
  setMaxRps(maxRps: number | undefined): void;
  /** Run `step` before each request is forwarded, with its calls' methods (null: none). */
  beforeForward(step: ((methods: string[]) => Promise<void>) | null): void;
  /** Forget what was recorded so far. */
  reset(): void;
  count(method: string): number;
  close(): Promise<void>;
}

const base58 = getBase58Decoder();

/** The first signature of a base64 wire transaction: after the compact-u16 count (one byte below 128). */
function signatureOfWire(wire: string): string | null {
  const bytes = Buffer.from(wire, 'base64');
  return bytes.length >= 65 ? base58.decode(bytes.subarray(1, 65)) : null;
}

export async function startRpcProxy(target: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const requests: ProxyRequest[] = [];
  const refusals: number[] = [];
  let maxRps = options.maxRps;
  let refuseNext = 0;
  let refuseRetryAfter: number | null = null;
  /** Arrival times of the accepted requests in the last second (the provider's sliding window). */
  let window: number[] = [];
  const sentAt = new Map<string, number>();
  let beforeForward: ((methods: string[]) => Promise<void>) | null = null;

  function refuse(res: http.ServerResponse, retryAfter: number | null, n: number) {
    for (let i = 0; i < n; i++) refusals.push(Date.now());
    res.writeHead(429, { 'content-type': 'text/plain', ...(retryAfter === null ? {} : { 'retry-after': String(retryAfter) }) });
    res.end('Too many requests');
  }

  function delayStatuses(params: unknown[], result: { value: ({ confirmationStatus: string; confirmations: number | null } | null)[] }) {
    const { unknownMs, processedUntilMs } = options.confirmation!;
    const signatures = params[0] as string[];
    result.value = result.value.map((status, i) => {
      const sent = sentAt.get(signatures[i]!);
      if (!status || sent === undefined) return status;
      const age = Date.now() - sent;
      if (age < unknownMs) return null;
      if (age < processedUntilMs) return { ...status, confirmationStatus: 'processed', confirmations: 0 };
      return status;
    });
  }

  /**
   * Forwarded over node:http on kept-alive sockets rather than fetch, whose streams cost more than
   * the chain's own answer: in the benchmarks the proxy shares a thread with the chain or the app.
   */
  const agent = new http.Agent({ keepAlive: true });
  const forward = (body: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 502, text: Buffer.concat(parts).toString('utf8') }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const now = Date.now();
        let calls: { method?: string; params?: unknown[] }[] = [];
        try {
          const parsed = JSON.parse(body.toString('utf8')) as unknown;
          calls = (Array.isArray(parsed) ? parsed : [parsed]) as typeof calls;
        } catch {
          calls = [{}];
        }
        if (refuseNext > 0) {
          refuseNext--;
          return refuse(res, refuseRetryAfter, calls.length);
        }
        if (maxRps !== undefined) {
          window = window.filter((t) => t > now - 1000);
          if (window.length + calls.length > maxRps) return refuse(res, 1, calls.length);
          for (let i = 0; i < calls.length; i++) window.push(now);
        }
        for (const call of calls) {
          const params = Array.isArray(call.params) ? call.params : [];
          requests.push({ method: String(call.method ?? ''), params, at: now });
          if (call.method === 'sendTransaction' && typeof params[0] === 'string') {
            const signature = signatureOfWire(params[0]);
            if (signature && !sentAt.has(signature)) sentAt.set(signature, now);
          }
        }
        try {
          await beforeForward?.(calls.map((c) => String(c.method ?? '')));
          const upstream = await forward(body);
          let text = upstream.text;
          const single = calls.length === 1 ? calls[0]! : undefined;
          if (options.confirmation && single?.method === 'getSignatureStatuses' && upstream.status === 200) {
            const answer = JSON.parse(text) as { result?: { value: [] } };
            if (answer.result) delayStatuses(single.params ?? [], answer.result);
            text = JSON.stringify(answer);
          }
          res.writeHead(upstream.status, { 'content-type': 'application/json' });
          res.end(text);
        } catch {
          res.socket?.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    refusals,
    refuse(count, retryAfterSeconds) {
      refuseNext = count;
      refuseRetryAfter = retryAfterSeconds;
    },
    beforeForward(step) {
      beforeForward = step;
    },
    setMaxRps(value) {
      maxRps = value;
      window = [];
    },
    reset() {
      requests.length = 0;
      refusals.length = 0;
    },
    count: (method) => requests.filter((r) => r.method === method).length,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The most requests that arrived within any one second (a sliding window over arrival times). */
export function maxPerSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= 1000) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
