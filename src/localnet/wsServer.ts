/**
 * The PubSub WebSocket endpoint: signature, slot and account subscriptions, enough for
 * @solana/kit's sendAndConfirmTransactionFactory and airdropFactory.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address } from '@solana/kit';
import { WebSocketServer, type WebSocket } from 'ws';
import { CLOSED_ACCOUNT, encodeAccount, encodingOption, readAccount, type AccountEncoding } from './accounts.ts';
import type { Chain, Logger, TxRecord } from './chain.ts';
import { FINALIZATION_DEPTH } from './chain.ts';
import { stringifyJson } from './json.ts';
import { addressParam, asParamList, commitmentOption, configParam, requireParam, signatureParam, type Commitment } from './params.ts';
import { invalidParams, methodNotFound, RpcError, RpcErrorCode } from './rpcErrors.ts';

type Subscription =
  | { kind: 'signature'; signature: string; commitment: Commitment }
  | { kind: 'slot' }
  | { kind: 'account'; address: Address; encoding: AccountEncoding; last: string };

interface Client {
  readonly socket: WebSocket;
  readonly subscriptions: Map<number, Subscription>;
}

export interface WsRpcServer {
  readonly port: number;
  close(): Promise<void>;
}

const NOTIFICATION_METHODS = { signature: 'signatureNotification', slot: 'slotNotification', account: 'accountNotification' } as const;
const UNSUBSCRIBE_METHODS: Record<string, Subscription['kind']> = {
  signatureUnsubscribe: 'signature',
  slotUnsubscribe: 'slot',
  accountUnsubscribe: 'account',
};

export function startWsServer(options: { host: string; port: number; chain: Chain; logger: Logger }): Promise<WsRpcServer> {
  const { chain, logger } = options;
  const clients = new Set<Client>();
  let nextSubscriptionId = 1;

  const notify = (client: Client, id: number, kind: Subscription['kind'], result: unknown) => {
    client.socket.send(stringifyJson({ jsonrpc: '2.0', method: NOTIFICATION_METHODS[kind], params: { result, subscription: id } }));
  };

  /** Signature subscriptions fire once, then end (the validator unsubscribes them itself). */
  const settleSignature = (client: Client, id: number, sub: Extract<Subscription, { kind: 'signature' }>, record: TxRecord) => {
    if (sub.commitment === 'finalized' && chain.slot - record.slot < FINALIZATION_DEPTH) return;
    client.subscriptions.delete(id);
    notify(client, id, 'signature', { context: { slot: sub.commitment === 'finalized' ? chain.slot : record.slot }, value: { err: record.err } });
  };

  const accountView = (sub: { address: Address; encoding: AccountEncoding }) => {
    const account = readAccount(chain, sub.address) ?? CLOSED_ACCOUNT;
    try {
      return encodeAccount(chain, account, sub.encoding, null);
    } catch {
      // base58 cannot carry more than 128 bytes; an account that grew past that is sent as base64
      // rather than silently dropping the notification.
      return encodeAccount(chain, account, 'base64', null);
    }
  };

  function each<K extends Subscription['kind']>(kind: K, visit: (client: Client, id: number, sub: Extract<Subscription, { kind: K }>) => void) {
    for (const client of clients) {
      for (const [id, sub] of client.subscriptions) if (sub.kind === kind) visit(client, id, sub as Extract<Subscription, { kind: K }>);
    }
  }

  const unlisten = [
    chain.transactionLanded.on((record) =>
      each('signature', (client, id, sub) => {
        if (sub.signature === record.signature) settleSignature(client, id, sub, record);
      }),
    ),
    chain.slotAdvanced.on((slot) => {
      each('slot', (client, id) => notify(client, id, 'slot', { parent: Math.max(0, slot - 1), root: Math.max(0, slot - FINALIZATION_DEPTH), slot }));
      each('signature', (client, id, sub) => {
        const record = chain.getRecord(sub.signature);
        if (record) settleSignature(client, id, sub, record);
      });
    }),
    chain.accountsChanged.on((addresses) =>
      each('account', (client, id, sub) => {
        if (!addresses.includes(sub.address)) return;
        const view = accountView(sub);
        const fingerprint = stringifyJson(view);
        if (fingerprint === sub.last) return;
        sub.last = fingerprint;
        notify(client, id, 'account', { context: { slot: chain.slot }, value: view });
      }),
    ),
  ];

  function subscribe(client: Client, method: string, params: unknown[]): number {
    const id = nextSubscriptionId++;
    switch (method) {
      case 'signatureSubscribe': {
        const sub = { kind: 'signature' as const, signature: signatureParam(requireParam(params, 0, 'signature')), commitment: commitmentOption(configParam(params, 1)) };
        client.subscriptions.set(id, sub);
        return id;
      }
      case 'slotSubscribe':
        client.subscriptions.set(id, { kind: 'slot' });
        return id;
      case 'accountSubscribe': {
        const address = addressParam(requireParam(params, 0, 'address'));
        const config = configParam(params, 1);
        commitmentOption(config);
        const sub: Subscription = { kind: 'account', address, encoding: encodingOption(config, 'binary'), last: '' };
        sub.last = stringifyJson(accountView(sub));
        client.subscriptions.set(id, sub);
        return id;
      }
      default:
        throw methodNotFound();
    }
  }

  function handleMessage(client: Client, text: string): void {
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
      const kind = UNSUBSCRIBE_METHODS[request.method];
      if (kind) {
        const subscriptionId = params[0];
        if (typeof subscriptionId !== 'number' || client.subscriptions.get(subscriptionId)?.kind !== kind) {
          throw invalidParams('Invalid subscription id.');
        }
        client.subscriptions.delete(subscriptionId);
        reply({ result: true });
        return;
      }
      const subscriptionId = subscribe(client, request.method, params);
      reply({ result: subscriptionId });
      // Already landed: notify right away, after the subscription id.
      const sub = client.subscriptions.get(subscriptionId);
      if (sub?.kind === 'signature') {
        const record = chain.getRecord(sub.signature);
        if (record) settleSignature(client, subscriptionId, sub, record);
      }
    } catch (err) {
      if (err instanceof RpcError) {
        reply({ error: { code: err.code, message: err.message } });
      } else {
        logger.error({ err }, 'localnet WebSocket request failed');
        reply({ error: { code: RpcErrorCode.INTERNAL_ERROR, message: 'Internal error' } });
      }
    }
  }

  const httpServer = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('WebSocket upgrade required');
  });
  const wss = new WebSocketServer({ server: httpServer, maxPayload: 1024 * 1024 });
  wss.on('connection', (socket) => {
    const client: Client = { socket, subscriptions: new Map() };
    clients.add(client);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) handleMessage(client, data.toString());
    });
    socket.on('close', () => clients.delete(client));
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
            for (const client of clients) client.socket.terminate();
            clients.clear();
            wss.close();
            httpServer.close(() => done());
            httpServer.closeAllConnections();
          }),
      });
    });
  });
}
