/**
 * Clients of generate_wallets for the tests of what one client may hold (streams, searches, the
 * pool's turns): each from an address of its own on the loopback network (127.0.0.x), so that the
 * service counts them as different clients, as it would distinct hosts.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';

/** A stream whose client reads the response head, then nothing more: its socket stays open, paused. */
export interface UnreadStream {
  status: number;
  socket: Socket;
  /** Resumes reading; resolves once the server has closed the connection (never, if it does not). */
  drainUntilClosed(): Promise<void>;
}

/** Opens `GET /api/generate_wallets<query>` (Accept: application/x-ndjson) from `localAddress` and stops reading once the head has arrived. */
export function openUnreadStream(base: string, query: string, localAddress: string): Promise<UnreadStream> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let head = '';
    let closed = false;
    const closing = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('close', () => (closed = true));
    socket.on('error', () => {}); // a reset by the server is how an unread stream may end
    socket.setEncoding('latin1');
    socket.write(`GET /api/generate_wallets${query} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: application/x-ndjson\r\n\r\n`);
    const onData = (chunk: string) => {
      head += chunk;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause(); // from here on the client reads nothing: the kernel's buffers fill, then the server's writes wait
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({
        status,
        socket,
        drainUntilClosed() {
          if (closed) return Promise.resolve();
          socket.on('data', () => {});
          socket.resume();
          return closing;
        },
      });
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`connection closed before the response head (${head.length} bytes)`)));
  });
}

/** A JSON or ndjson GET from `localAddress`: status, headers and the whole body. */
export function getFrom(base: string, path: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { localAddress, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls `condition` every 20 ms; throws naming `what` after `timeoutMs` (a bound on a hang, not a measured time). */
export async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** How many times `text` occurs in `haystack`. */
export const occurrences = (haystack: string, text: string) => haystack.split(text).length - 1;

/** A stream its client reads to the end: `status` once the head has arrived, `ended` once the server has finished it. */
export interface ReadStream {
  status: number;
  ended: boolean;
  lines: string[];
  close(): void;
}

/** Opens a streamed GET from `localAddress` and reads it as it comes; does not wait for anything. */
export function openReadStream(base: string, query: string, localAddress: string, headers: Record<string, string> = {}): ReadStream {
  const state: ReadStream = { status: 0, ended: false, lines: [], close: () => req.destroy() };
  const req = httpRequest(`${base}/api/generate_wallets${query}`, { localAddress, agent: false, headers: { accept: 'application/x-ndjson', ...headers } }, (res) => {
    state.status = res.statusCode ?? 0;
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      state.lines.push(...parts);
    });
    res.on('end', () => {
      if (rest !== '') state.lines.push(rest);
      state.ended = true;
    });
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end();
  return state;
}
