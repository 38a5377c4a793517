/**
 * Raw HTTP/1.1 over a real socket, for the edge tests and the fuzz campaign: requests that no
 * HTTP client library would send (malformed lines, absolute form, pipelining, partial bodies),
 * and every response on the connection parsed, until the server closes it.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes received that are not a complete response. */
  rest: string;
  /** Time from the first byte sent until the server closed the connection (or the client gave up). */
  elapsedMs: number;
  timedOut: boolean;
}

function decodeChunked(data: Buffer): { body: Buffer; used: number } | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return null;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) return null;
    at = lineEnd + 2;
    if (size === 0) {
      const end = data.indexOf('\r\n\r\n', at - 2);
      return end === -1 ? null : { body: Buffer.concat(parts), used: end + 4 };
    }
    if (data.length < at + size + 2) return null;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

/** Splits the bytes of a connection into the responses it holds. */
export function parseResponses(data: Buffer, headRequests = 0): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let rest = data;
  let heads = headRequests;
  for (;;) {
    const headerEnd = rest.indexOf('\r\n\r\n');
    if (headerEnd === -1) break;
    const lines = rest.subarray(0, headerEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isInteger(status)) break;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const after = rest.subarray(headerEnd + 4);
    if (status === 100) {
      rest = after;
      continue;
    }
    let body: Buffer;
    let used: number;
    if (heads > 0 || status === 204 || status === 304) {
      heads = Math.max(0, heads - 1);
      body = Buffer.alloc(0);
      used = 0;
    } else if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
      const decoded = decodeChunked(after);
      if (!decoded) break;
      ({ body, used } = decoded);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (after.length < length) break;
      body = after.subarray(0, length);
      used = length;
    } else {
      body = after; // until the connection closed
      used = after.length;
    }
    responses.push({ status, headers, body: body.toString('utf8') });
    rest = after.subarray(used);
  }
  return { responses, rest };
}

/**
 * Sends `parts` (written one after the other, `gapMs` apart) and collects what comes back until
 * the server closes the connection, `timeoutMs` passes, or `closeOn` resolves (the client goes away).
 */
export function exchange(
  port: number,
  parts: (string | Buffer)[],
  options: { timeoutMs?: number; gapMs?: number; headRequests?: number; endAfterWrite?: boolean; closeOn?: Promise<unknown> } = {},
): Promise<RawExchange> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const { responses, rest } = parseResponses(Buffer.concat(chunks), options.headRequests);
      resolve({ responses, rest: rest.toString('utf8'), elapsedMs: Date.now() - started, timedOut });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', finish);
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
        if (socket.destroyed) return;
        socket.write(part);
      }
      if (options.endAfterWrite) socket.end();
      if (options.closeOn) void options.closeOn.then(() => socket.destroy());
    });
  });
}

/** One request on its own connection, `Connection: close`. */
export async function request(
  port: number,
  method: string,
  target: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawResponse & { elapsedMs: number }> {
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: 'close', ...options.headers };
  if (body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['content-length'] = String(body.length);
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  const result = await exchange(port, [body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : head], {
    timeoutMs: options.timeoutMs,
    headRequests: method === 'HEAD' ? 1 : 0,
  });
  const response = result.responses[0];
  if (!response) throw new Error(`no response to ${method} ${target} (timed out: ${result.timedOut}; got ${JSON.stringify(result.rest.slice(0, 200))})`);
  return { ...response, elapsedMs: result.elapsedMs };
}
