/**
 * A small stand-in server for client tests: it answers like a service that chose the
 * specification's Form B (a burn answers `{ "tx_hash": … }` only, wallets come as addresses only),
 * or whatever a test scripts, and records every request it receives.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedAnswer {
  status: number;
  body?: unknown;
  /** Raw text body (not JSON). */
  text?: string;
  headers?: Record<string, string>;
  /** Never answer (to test timeouts). */
  hang?: boolean;
}

export interface FormBServer {
  url: string;
  requests: RecordedRequest[];
  /** Answers used, in order, before the default Form B behaviour. */
  script(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

export const FORM_B_TX_HASH = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

function defaultAnswer(request: RecordedRequest): ScriptedAnswer {
  const url = new URL(request.url, 'http://localhost');
  if (request.method === 'POST' && url.pathname === '/api/burn_tokens') return { status: 200, body: { tx_hash: FORM_B_TX_HASH } };
  if (request.method === 'GET' && url.pathname === '/api/generate_wallets') {
    const n = Number(url.searchParams.get('n'));
    // Addresses only, as the specification's wallet list (no keypairs).
    return { status: 200, body: { wallets: Array.from({ length: n }, (_, i) => `Wa11et${String(i).padStart(38, '1')}`) } };
  }
  if (request.method === 'GET' && url.pathname.startsWith('/api/transactions/')) {
    return { status: 200, body: { tx_hash: decodeURIComponent(url.pathname.split('/').at(-1)!), status: 'success' } };
  }
  return {
    status: 404,
    body: { type: 'about:blank', title: 'Not Found', status: 404, detail: `No route for ${request.method} ${url.pathname}`, code: 'NOT_FOUND' },
    headers: { 'content-type': 'application/problem+json' },
  };
}

export async function startFormBServer(): Promise<FormBServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      const answer = queue.shift() ?? defaultAnswer(recorded);
      if (answer.hang) {
        const end = () => res.destroy();
        hanging.add(end);
        res.on('close', () => hanging.delete(end));
        return;
      }
      const text = answer.text ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
      res.writeHead(answer.status, {
        'content-type': answer.text !== undefined ? 'text/html' : 'application/json',
        'x-request-id': `req-${requests.length}`,
        ...answer.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...answers) => {
      queue.push(...answers);
    },
    close: async () => {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
