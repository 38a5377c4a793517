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
import type { Address } from '@solana/kit';
import { WebSocketServer, type WebSocket } from 'ws';
import { CLOSED_ACCOUNT, encodeAccount, encodingOption, matchesFilters, parseFilters, readAccount, type AccountEncoding, type AccountFilter } from './accounts.ts';
import type { Chain, Logger, TxRecord } from './chain.ts';
import { stringifyJson } from './json.ts';
import { addressParam, asParamList, commitmentOption, configParam, refuseExtraParams, requireParam, signatureParam, type Commitment } from './params.ts';
import { invalidParams, methodNotFound, RpcError, RpcErrorCode } from './rpcErrors.ts';

type Subscription =
  | { kind: 'signature'; signature: string; commitment: Commitment }
  | { kind: 'slot' }
  | { kind: 'account'; address: Address; encoding: AccountEncoding; last: string }
  | { kind: 'program'; program: Address; encoding: AccountEncoding; filters: AccountFilter[] }
  | { kind: 'logs'; mentions: string | null; commitment: Commitment; pending: TxRecord[] }
  | { kind: 'root' }
  | { kind: 'slotsUpdates' };

interface Client {
  readonly socket: WebSocket;
  readonly subscriptions: Map<number, Subscription>;
  /** Failing subscribe requests (method + params) → how often each has failed. */
  readonly failures: Map<string, number>;
}

const MAX_FAILURE_DELAY_MS = 30_000;
const MAX_REMEMBERED_FAILURES = 100;

export interface WsRpcServer {
  readonly port: number;
  close(): Promise<void>;
}

const NOTIFICATION_METHODS = {
  signature: 'signatureNotification',
  slot: 'slotNotification',
  account: 'accountNotification',
  program: 'programNotification',
  logs: 'logsNotification',
  root: 'rootNotification',
  slotsUpdates: 'slotsUpdatesNotification',
} as const;
const UNSUBSCRIBE_METHODS: Record<string, Subscription['kind']> = {
  signatureUnsubscribe: 'signature',
  slotUnsubscribe: 'slot',
  accountUnsubscribe: 'account',
  programUnsubscribe: 'program',
  logsUnsubscribe: 'logs',
  rootUnsubscribe: 'root',
  slotsUpdatesUnsubscribe: 'slotsUpdates',
};

/** Every key a landed transaction referenced (what logsSubscribe's `mentions` looks in). */
function keysOf(record: TxRecord): readonly string[] {
  if (!record.wire) return record.writableAccounts;
  return [...record.wire.message.staticAccounts, ...record.loadedAddresses.writable, ...record.loadedAddresses.readonly];
}

function logsFilter(value: unknown): string | null {
  if (value === 'all' || value === 'allWithVotes') return null;
  const mentions = (value as { mentions?: unknown } | null)?.mentions;
  if (typeof value === 'object' && value !== null && Array.isArray(mentions)) {
    if (mentions.length !== 1) throw invalidParams('Invalid Request: Only 1 address supported');
    return addressParam(mentions[0]);
  }
  throw invalidParams('Invalid params: unknown variant, expected one of `all`, `allWithVotes`, `{ mentions: [address] }`.');
}

/** How serde names a JSON value it did not expect (serde's `Unexpected`, as serde_json reports it). */
function unexpected(value: unknown): string {
  if (value === null) return 'unit value';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}

/**
 * blockSubscribe's `(filter, config?)` as jsonrpc-derive and serde_json parse them before the
 * method runs: the count, then the filter, `"all"` or `{ "mentionsAccountOrProgram": "<address>" }`
 * (the address itself, and the config, are only looked at by an enabled method).
 */
function checkBlockSubscribeParams(params: unknown[]): void {
  if (params.length < 1) throw invalidParams('`params` should have at least 1 argument(s)');
  refuseExtraParams(params, 1, 2);
  const filter = params[0];
  const serdeError = (message: string) => invalidParams(`Invalid params: ${message}.`);
  let variant: string;
  let value: unknown;
  if (typeof filter === 'string') {
    variant = filter;
  } else if (typeof filter === 'object' && filter !== null && !Array.isArray(filter)) {
    const entries = Object.entries(filter);
    if (entries.length !== 1) throw serdeError('invalid value: map, expected map with a single key');
    [[variant, value]] = entries as [[string, unknown]];
  } else {
    throw serdeError(`invalid type: ${unexpected(filter)}, expected string or map`);
  }
  if (variant === 'all') {
    if (value !== undefined && value !== null) throw serdeError(`invalid type: ${unexpected(value)}, expected unit`);
  } else if (variant === 'mentionsAccountOrProgram') {
    if (value === undefined) throw serdeError('invalid type: unit variant, expected newtype variant');
    if (typeof value !== 'string') throw serdeError(`invalid type: ${unexpected(value)}, expected a string`);
  } else {
    throw serdeError(`unknown variant \`${variant}\`, expected \`all\` or \`mentionsAccountOrProgram\``);
  }
}

export function startWsServer(options: { host: string; port: number; chain: Chain; logger: Logger }): Promise<WsRpcServer> {
  const { chain, logger } = options;
  const clients = new Set<Client>();
  let nextSubscriptionId = 1;

  const notify = (client: Client, id: number, kind: Subscription['kind'], result: unknown) => {
    client.socket.send(stringifyJson({ jsonrpc: '2.0', method: NOTIFICATION_METHODS[kind], params: { result, subscription: id } }));
  };

  /** Signature subscriptions fire once, then end (the validator unsubscribes them itself). */
  const settleSignature = (client: Client, id: number, sub: Extract<Subscription, { kind: 'signature' }>, record: TxRecord) => {
    if (record.slot > chain.slotAt(sub.commitment)) return;
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

  const logsNotification = (record: TxRecord) => ({
    context: { slot: record.slot },
    value: { signature: record.signature, err: record.err, logs: record.logs },
  });

  const unlisten = [
    chain.transactionLanded.on((record) => {
      each('signature', (client, id, sub) => {
        if (sub.signature === record.signature) settleSignature(client, id, sub, record);
      });
      each('logs', (client, id, sub) => {
        if (sub.mentions !== null && !keysOf(record).includes(sub.mentions)) return;
        // Confirmed and finalized subscribers hear of it once it is that deep.
        if (record.slot > chain.slotAt(sub.commitment)) sub.pending.push(record);
        else notify(client, id, 'logs', logsNotification(record));
      });
    }),
    chain.slotAdvanced.on((slot) => {
      const root = chain.finalizedSlot;
      const parent = chain.blockAtOrBefore(slot - 1)?.slot ?? 0;
      each('slot', (client, id) => notify(client, id, 'slot', { parent, root, slot }));
      each('signature', (client, id, sub) => {
        const record = chain.records.get(sub.signature);
        if (record) settleSignature(client, id, sub, record);
      });
      each('logs', (client, id, sub) => {
        const seen = chain.slotAt(sub.commitment);
        while (sub.pending.length > 0 && sub.pending[0]!.slot <= seen) notify(client, id, 'logs', logsNotification(sub.pending.shift()!));
      });
      const timestamp = Date.now();
      each('slotsUpdates', (client, id) => {
        notify(client, id, 'slotsUpdates', { type: 'createdBank', parent, slot, timestamp });
        notify(client, id, 'slotsUpdates', { type: 'completed', slot, timestamp });
        notify(client, id, 'slotsUpdates', { type: 'optimisticConfirmation', slot, timestamp });
      });
    }),
    // As agave's notify_roots: each rooted slot in order, its slotsUpdates `root` then its
    // rootNotification (the bare slot number).
    chain.rooted.on((roots) => {
      const timestamp = Date.now();
      for (const root of roots) {
        each('slotsUpdates', (client, id) => notify(client, id, 'slotsUpdates', { type: 'root', slot: root, timestamp }));
        each('root', (client, id) => notify(client, id, 'root', root));
      }
    }),
    chain.accountsChanged.on((addresses) => {
      each('account', (client, id, sub) => {
        if (!addresses.includes(sub.address)) return;
        const view = accountView(sub);
        const fingerprint = stringifyJson(view);
        if (fingerprint === sub.last) return;
        sub.last = fingerprint;
        notify(client, id, 'account', { context: { slot: chain.slot }, value: view });
      });
      each('program', (client, id, sub) => {
        for (const changed of addresses) {
          const account = readAccount(chain, changed as Address);
          if (!account || account.owner !== sub.program || !matchesFilters(account.data, sub.filters)) continue;
          notify(client, id, 'program', { context: { slot: chain.slot }, value: { pubkey: changed, account: accountView({ address: changed as Address, encoding: sub.encoding }) } });
        }
      });
    }),
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
      case 'programSubscribe': {
        const program = addressParam(requireParam(params, 0, 'program id'));
        const config = configParam(params, 1);
        commitmentOption(config);
        client.subscriptions.set(id, { kind: 'program', program, encoding: encodingOption(config, 'binary'), filters: parseFilters(config.filters) });
        return id;
      }
      case 'logsSubscribe': {
        const mentions = logsFilter(requireParam(params, 0, 'filter'));
        client.subscriptions.set(id, { kind: 'logs', mentions, commitment: commitmentOption(configParam(params, 1)), pending: [] });
        return id;
      }
      case 'rootSubscribe':
        client.subscriptions.set(id, { kind: 'root' });
        return id;
      case 'slotsUpdatesSubscribe':
        client.subscriptions.set(id, { kind: 'slotsUpdates' });
        return id;
      // Answered as agave answers them without --rpc-pubsub-enable-block-subscription /
      // --rpc-pubsub-enable-vote-subscription: its params are parsed first (a malformed request
      // is -32602 as usual), then the method refuses with jsonrpc_core's plain MethodNotFound.
      case 'blockSubscribe':
        checkBlockSubscribeParams(params);
        throw methodNotFound();
      case 'voteSubscribe':
        refuseExtraParams(params, 0, 0);
        throw methodNotFound();
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
        const record = chain.records.get(sub.signature);
        if (record) settleSignature(client, subscriptionId, sub, record);
      }
    } catch (err) {
      if (err instanceof RpcError) {
        const failureKey = `${String(request?.method)} ${stringifyJson(request?.params ?? null)}`;
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
    const client: Client = { socket, subscriptions: new Map(), failures: new Map() };
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
