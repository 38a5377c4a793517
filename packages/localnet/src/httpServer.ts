/** The JSON-RPC HTTP endpoint (node:http). */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './chain.ts';
import type { FaultController } from './faults.ts';

const MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface HttpRpcServer {
  readonly port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, contentType = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function startHttpServer(options: {
  host: string;
  port: number;
  dispatch: (body: string) => Promise<string | null>;
  logger: Logger;
  faults?: Pick<FaultController, 'interceptHttp'> | undefined;
}): Promise<HttpRpcServer> {
  const { dispatch, logger, faults } = options;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?'))) {
      send(res, 200, 'ok', 'text/plain; charset=utf-8');
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain; charset=utf-8');
      return;
    }
    readBody(req)
      .then(async (body) => {
        if (body === null) {
          res.setHeader('connection', 'close');
          send(res, 413, 'Request body is too large', 'text/plain; charset=utf-8');
          return;
        }
        if (faults && (await faults.interceptHttp(body, req, res))) return;
        const reply = await dispatch(body);
        if (reply === null) {
          res.writeHead(200, { 'content-length': 0 });
          res.end();
        } else {
          send(res, 200, reply);
        }
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'localnet HTTP request failed');
        if (!res.headersSent) send(res, 500, 'Internal error', 'text/plain; charset=utf-8');
        else res.destroy();
      });
  });
  // An idle keep-alive connection is closed by the server after keepAliveTimeout; a client that
  // picks it up again at that moment gets a reset ("fetch failed"). Clients avoid that by reusing
  // a connection only until 1 s before the timeout the server announces, which a client whose
  // event loop lags (a busy machine) can overrun. Node's 5 s default makes that race common
  // between the steps of a script; a minute, like agave's RPC, makes it rare.
  server.keepAliveTimeout = 65_000;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      server.on('error', (err) => logger.error({ err }, 'localnet HTTP server error'));
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive sockets (fetch pools them) would otherwise keep the server, and the
            // process, alive.
            server.closeAllConnections();
          }),
      });
    });
  });
}
