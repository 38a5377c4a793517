/**
 * PubSub notifications: what each chain event (a landed transaction, a new slot, new roots,
 * changed accounts) tells each subscription, in agave's notification shapes and at the
 * subscription's commitment.
 */
import type { Address } from '@solana/kit';
import { CLOSED_ACCOUNT, encodeAccount, matchesFilters, readAccount, type AccountEncoding } from './accounts.ts';
import type { Chain, TxRecord } from './chain.ts';
import { stringifyJson } from './json.ts';
import type { Client, Subscription, SubscriptionOf, SubscriptionRegistry } from './wsSubscriptions.ts';

const NOTIFICATION_METHODS = {
  signature: 'signatureNotification',
  slot: 'slotNotification',
  account: 'accountNotification',
  program: 'programNotification',
  logs: 'logsNotification',
  root: 'rootNotification',
  slotsUpdates: 'slotsUpdatesNotification',
} as const satisfies Record<Subscription['kind'], string>;

/** Every key a landed transaction referenced (what logsSubscribe's `mentions` looks in). */
function keysOf(record: TxRecord): readonly string[] {
  if (!record.wire) return record.writableAccounts;
  return [...record.wire.message.staticAccounts, ...record.loadedAddresses.writable, ...record.loadedAddresses.readonly];
}

function logsNotification(record: TxRecord) {
  return {
    context: { slot: record.slot },
    value: { signature: record.signature, err: record.err, logs: record.logs },
  };
}

export function notify(client: Client, id: number, kind: Subscription['kind'], result: unknown): void {
  client.socket.send(stringifyJson({ jsonrpc: '2.0', method: NOTIFICATION_METHODS[kind], params: { result, subscription: id } }));
}

/** An account as its notifications carry it (a closed account reads as the empty system account). */
export function accountView(chain: Chain, sub: { address: Address; encoding: AccountEncoding }) {
  const account = readAccount(chain, sub.address) ?? CLOSED_ACCOUNT;
  try {
    return encodeAccount(chain, account, sub.encoding, null);
  } catch {
    // base58 cannot carry more than 128 bytes; an account that grew past that is sent as base64
    // rather than silently dropping the notification.
    return encodeAccount(chain, account, 'base64', null);
  }
}

/**
 * The account as a new account subscription sees it at its commitment: later notifications are
 * changes from this. As agave's subscription starts from the account's modified slot in the bank
 * of its commitment, a write not yet that deep (a confirmed subscriber's view of a transaction
 * that executed a moment ago) is still to be notified once it is.
 */
export function snapshotAccount(chain: Chain, sub: Subscription): void {
  if (sub.kind !== 'account') return;
  if (chain.modifiedSlot(sub.address) <= chain.slotAt(sub.commitment)) sub.last = stringifyJson(accountView(chain, sub));
  else sub.awaiting = true;
}

/** Notifies an account subscriber of the account's state once its last write is as deep as the subscription's commitment. */
function notifyAccount(chain: Chain, client: Client, id: number, sub: SubscriptionOf<'account'>): void {
  const visible = chain.slotAt(sub.commitment);
  if (chain.modifiedSlot(sub.address) > visible) {
    sub.awaiting = true;
    return;
  }
  sub.awaiting = false;
  const view = accountView(chain, sub);
  const fingerprint = stringifyJson(view);
  if (fingerprint === sub.last) return;
  sub.last = fingerprint;
  notify(client, id, 'account', { context: { slot: visible }, value: view });
}

/**
 * Signature subscriptions fire once, then end (the validator unsubscribes them itself), and only
 * once the transaction's slot is as deep as the subscription's commitment.
 */
export function settleSignature(chain: Chain, client: Client, id: number, sub: SubscriptionOf<'signature'>, record: TxRecord): void {
  if (record.slot > chain.slotAt(sub.commitment)) return;
  client.subscriptions.delete(id);
  notify(client, id, 'signature', { context: { slot: sub.commitment === 'finalized' ? chain.slot : record.slot }, value: { err: record.err } });
}

/** Subscribes the registry's subscriptions to the chain's events; returns the unsubscribers. */
export function forwardChainEvents(chain: Chain, registry: SubscriptionRegistry): (() => void)[] {
  return [
    chain.transactionLanded.on((record) => {
      registry.each('signature', (client, id, sub) => {
        if (sub.signature === record.signature) settleSignature(chain, client, id, sub, record);
      });
      registry.each('logs', (client, id, sub) => {
        if (sub.mentions !== null && !keysOf(record).includes(sub.mentions)) return;
        // Confirmed and finalized subscribers hear of it once it is that deep.
        if (record.slot > chain.slotAt(sub.commitment)) sub.pending.push(record);
        else notify(client, id, 'logs', logsNotification(record));
      });
    }),
    chain.slotAdvanced.on((slot) => {
      const root = chain.finalizedSlot;
      const parent = chain.blockAtOrBefore(slot - 1)?.slot ?? 0;
      registry.each('slot', (client, id) => notify(client, id, 'slot', { parent, root, slot }));
      registry.each('signature', (client, id, sub) => {
        const record = chain.records.get(sub.signature);
        if (record) settleSignature(chain, client, id, sub, record);
      });
      registry.each('account', (client, id, sub) => {
        if (sub.awaiting) notifyAccount(chain, client, id, sub);
      });
      registry.each('logs', (client, id, sub) => {
        const seen = chain.slotAt(sub.commitment);
        while (sub.pending.length > 0 && sub.pending[0]!.slot <= seen) notify(client, id, 'logs', logsNotification(sub.pending.shift()!));
      });
      const timestamp = Date.now();
      registry.each('slotsUpdates', (client, id) => {
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
        registry.each('slotsUpdates', (client, id) => notify(client, id, 'slotsUpdates', { type: 'root', slot: root, timestamp }));
        registry.each('root', (client, id) => notify(client, id, 'root', root));
      }
    }),
    chain.accountsChanged.on((addresses) => {
      registry.each('account', (client, id, sub) => {
        if (addresses.includes(sub.address)) notifyAccount(chain, client, id, sub);
      });
      registry.each('program', (client, id, sub) => {
        for (const changed of addresses) {
          const account = readAccount(chain, changed as Address);
          if (!account || account.owner !== sub.program || !matchesFilters(account.data, sub.filters)) continue;
          notify(client, id, 'program', { context: { slot: chain.slot }, value: { pubkey: changed, account: accountView(chain, { address: changed as Address, encoding: sub.encoding }) } });
        }
      });
    }),
  ];
}
