/**
 * The PubSub subscriptions registry: who is subscribed to what. Parses agave's subscribe and
 * unsubscribe requests into subscriptions, keeps them per socket, and lets the notification side
 * visit every subscription of one kind. It sends nothing itself.
 */
import type { Address } from '@solana/kit';
import type { WebSocket } from 'ws';
import { encodingOption, parseFilters, type AccountEncoding, type AccountFilter } from './accounts.ts';
import type { TxRecord } from './chain.ts';
import { addressParam, commitmentOption, configParam, refuseExtraParams, requireParam, signatureParam, type Commitment } from './params.ts';
import { invalidParams, methodNotFound } from './rpcErrors.ts';

export type Subscription =
  | { kind: 'signature'; signature: string; commitment: Commitment }
  | { kind: 'slot' }
  | { kind: 'account'; address: Address; encoding: AccountEncoding; commitment: Commitment; last: string; awaiting: boolean }
  | { kind: 'program'; program: Address; encoding: AccountEncoding; filters: AccountFilter[] }
  | { kind: 'logs'; mentions: string | null; commitment: Commitment; pending: TxRecord[] }
  | { kind: 'root' }
  | { kind: 'slotsUpdates' };

export type SubscriptionOf<K extends Subscription['kind']> = Extract<Subscription, { kind: K }>;

export interface Client {
  readonly socket: WebSocket;
  readonly subscriptions: Map<number, Subscription>;
  /** Failing subscribe requests (method + params) → how often each has failed. */
  readonly failures: Map<string, number>;
}

const UNSUBSCRIBE_METHODS: Record<string, Subscription['kind']> = {
  signatureUnsubscribe: 'signature',
  slotUnsubscribe: 'slot',
  accountUnsubscribe: 'account',
  programUnsubscribe: 'program',
  logsUnsubscribe: 'logs',
  rootUnsubscribe: 'root',
  slotsUpdatesUnsubscribe: 'slotsUpdates',
};

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

/** The subscription a subscribe request asks for; throws the RpcError agave answers with. */
function parseSubscription(method: string, params: unknown[]): Subscription {
  switch (method) {
    case 'signatureSubscribe':
      return { kind: 'signature', signature: signatureParam(requireParam(params, 0, 'signature')), commitment: commitmentOption(configParam(params, 1)) };
    case 'slotSubscribe':
      return { kind: 'slot' };
    case 'accountSubscribe': {
      const address = addressParam(requireParam(params, 0, 'address'));
      const config = configParam(params, 1);
      return { kind: 'account', address, encoding: encodingOption(config, 'binary'), commitment: commitmentOption(config), last: '', awaiting: false };
    }
    case 'programSubscribe': {
      const program = addressParam(requireParam(params, 0, 'program id'));
      const config = configParam(params, 1);
      commitmentOption(config);
      return { kind: 'program', program, encoding: encodingOption(config, 'binary'), filters: parseFilters(config.filters) };
    }
    case 'logsSubscribe': {
      const mentions = logsFilter(requireParam(params, 0, 'filter'));
      return { kind: 'logs', mentions, commitment: commitmentOption(configParam(params, 1)), pending: [] };
    }
    case 'rootSubscribe':
      return { kind: 'root' };
    case 'slotsUpdatesSubscribe':
      return { kind: 'slotsUpdates' };
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

export class SubscriptionRegistry {
  readonly clients = new Set<Client>();
  private nextSubscriptionId = 1;

  /** Whether `method` is one of the unsubscribe methods (answered by unsubscribe, not subscribe). */
  isUnsubscribe(method: string): boolean {
    return UNSUBSCRIBE_METHODS[method] !== undefined;
  }

  /**
   * Registers the subscription a subscribe request asks for and returns its id. Ids are unique
   * across sockets, as agave's are. `prepare` runs before the subscription is visible (the
   * account snapshot it is compared against).
   */
  subscribe(client: Client, method: string, params: unknown[], prepare?: (sub: Subscription) => void): number {
    const id = this.nextSubscriptionId++;
    const sub = parseSubscription(method, params);
    prepare?.(sub);
    client.subscriptions.set(id, sub);
    return id;
  }

  /** Ends a subscription of the unsubscribe method's kind on this socket; an unknown id is -32602. */
  unsubscribe(client: Client, method: string, params: unknown[]): void {
    const kind = UNSUBSCRIBE_METHODS[method];
    const subscriptionId = params[0];
    if (kind === undefined || typeof subscriptionId !== 'number' || client.subscriptions.get(subscriptionId)?.kind !== kind) {
      throw invalidParams('Invalid subscription id.');
    }
    client.subscriptions.delete(subscriptionId);
  }

  /** Visits every subscription of `kind`, on every socket. */
  each<K extends Subscription['kind']>(kind: K, visit: (client: Client, id: number, sub: SubscriptionOf<K>) => void): void {
    for (const client of this.clients) {
      for (const [id, sub] of client.subscriptions) if (sub.kind === kind) visit(client, id, sub as SubscriptionOf<K>);
    }
  }
}
