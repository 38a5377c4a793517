/**
 * The PubSub WebSocket endpoint: the subscriptions @solana/kit and web3.js v1 use — account,
 * program, logs, signature, slot, slotsUpdates and root — in agave's notification shapes; block
 * and vote subscriptions answer as on a validator that has them disabled.
 *
 * A subscribe request that fails is answered with its error at once; the same failing request
 * repeated on the same socket is answered more and more slowly (1 s, 2 s, … 30 s), because
 * web3.js v1 re-sends a failed subscription immediately and forever, which would otherwise turn
 * into a busy loop on both ends.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Chain, Logger } from './chain.ts';
import { stringifyJson } from './json.ts';
import { asParamList } from './params.ts';
import { RpcError, RpcErrorCode } from './rpcErrors.ts';
import { forwardChainEvents, settleSignature, snapshotAccount } from './wsNotifications.ts';
import { SubscriptionRegistry, type Client } from './wsSubscriptions.ts';

const MAX_FAILURE_DELAY_MS = 30_000;
const MAX_REMEMBERED_FAILURES = 100;

export interface WsRpcServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Sends a failed request's error: at once the first time, then 1 s, 2 s, … 30 s later for each
 * repeat of the same request on this socket (web3.js v1 re-sends a failed subscription at once).
 */
function replyFailure(client: Client, failureKey: string, err: RpcError, reply: (body: object) => void): void {
  const failures = client.failures.get(failureKey) ?? 0;
  client.failures.delete(failureKey);
  client.failures.set(failureKey, failures + 1);
  if (client.failures.size > MAX_REMEMBERED_FAILURES) client.failures.delete(client.failures.keys().next().value!);
  const error = { error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
  if (failures === 0) {
    reply(error);
  } else {
    const timer = setTimeout(() => {
      if (client.socket.readyState === client.socket.OPEN) reply(error);
    }, Math.min(MAX_FAILURE_DELAY_MS, 1000 * 2 ** (failures - 1)));
    timer.unref();
  }
}

/** Answers one text frame: a subscribe or unsubscribe request, or its error. */
function handleMessage(chain: Chain, registry: SubscriptionRegistry, logger: Logger, client: Client, text: string): void {
  let request: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  try {
    request = JSON.parse(text) as typeof request;
  } catch {
    client.socket.send(stringifyJson({ jsonrpc: '2.0', error: { code: RpcErrorCode.PARSE_ERROR, message: 'Parse error' }, id: null }));
    return;
  }
  const id = typeof request?.id === 'number' || typeof request?.id === 'string' ? request.id : null;
  const reply = (body: object) => client.socket.send(stringifyJson({ jsonrpc: '2.0', ...body, id }));
  try {
    if (typeof request !== 'object' || request === null || typeof request.method !== 'string') {
      throw new RpcError(RpcErrorCode.INVALID_REQUEST, 'Invalid request');
    }
    const params = asParamList(request.params);
    if (registry.isUnsubscribe(request.method)) {
      registry.unsubscribe(client, request.method, params);
      reply({ result: true });
      return;
    }
    const subscriptionId = registry.subscribe(client, request.method, params, (sub) => snapshotAccount(chain, sub));
    reply({ result: subscriptionId });
    // Already landed: notify right away, after the subscription id.
    const sub = client.subscriptions.get(subscriptionId);
    if (sub?.kind === 'signature') {
      const record = chain.records.get(sub.signature);
      if (record) settleSignature(chain, client, subscriptionId, sub, record);
    }
  } catch (err) {
    if (err instanceof RpcError) {
      replyFailure(client, `${String(request?.method)} ${stringifyJson(request?.params ?? null)}`, err, reply);
    } else {
      logger.error({ err }, 'localnet WebSocket request failed');
      reply({ error: { code: RpcErrorCode.INTERNAL_ERROR, message: 'Internal error' } });
    }
  }
}

export function startWsServer(options: { host: string; port: number; chain: Chain; logger: Logger }): Promise<WsRpcServer> {
  const { chain, logger } = options;
  const registry = new SubscriptionRegistry();
  const unlisten = forwardChainEvents(chain, registry);

  const httpServer = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('WebSocket upgrade required');
  });
  const wss = new WebSocketServer({ server: httpServer, maxPayload: 1024 * 1024 });
  wss.on('connection', (socket) => {
    const client: Client = { socket, subscriptions: new Map(), failures: new Map() };
    registry.clients.add(client);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) handleMessage(chain, registry, logger, client, data.toString());
    });
    socket.on('close', () => registry.clients.delete(client));
    socket.on('error', (err) => logger.warn({ err }, 'localnet WebSocket client error'));
  });
  wss.on('error', (err) => logger.error({ err }, 'localnet WebSocket server error'));

  return new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve({
        port: (httpServer.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const stop of unlisten) stop();
            for (const client of registry.clients) client.socket.terminate();
            registry.clients.clear();
            wss.close();
            httpServer.close(() => done());
            httpServer.closeAllConnections();
          }),
      });
    });
  });
}
