/**
 * Micro-batched account reads: the addresses that concurrent callers ask for go to the RPC
 * together, in getMultipleAccounts calls of at most 100 addresses (the RPC's limit,
 * MAX_MULTIPLE_ACCOUNTS in solana-rpc-client-api), each address once. A batch stays open for a few
 * milliseconds, and longer while MAX_CALLS_IN_FLIGHT calls are already out: under load, requests
 * arrive spread out, and what arrives during one call's round trip goes out together in the next
 * (no delay when idle, large batches when busy). DataLoader does the collecting; each caller still
 * answers by its own deadline.
 */
import DataLoader from 'dataloader';
import type { Address } from '@solana/kit';
import type { RawAccount } from './types.ts';

export const MAX_MULTIPLE_ACCOUNTS = 100;
/** Two, not one: a single slow call must not hold every read in the process behind it. */
const MAX_CALLS_IN_FLIGHT = 2;

export interface AccountReaderOptions {
  /** One getMultipleAccounts call for `addresses` (at most 100, no duplicates), by `deadline`. */
  fetch(addresses: Address[], deadline: number): Promise<(RawAccount | null)[]>;
  /** How long a batch stays open for more addresses. */
  windowMs?: number;
  /** What a caller whose deadline passes while its batch is still out gets. */
  onDeadline(): Error;
}

interface Key {
  address: Address;
  deadline: number;
}

export interface AccountReader {
  read(addresses: readonly Address[], deadline: number): Promise<(RawAccount | null)[]>;
}

export function createAccountReader(options: AccountReaderOptions): AccountReader {
  // 10 ms: under 1 % of a burn (which takes over a second to confirm), and wide enough to catch the
  // reads of requests that arrive together but are parsed one after the other.
  const windowMs = options.windowMs ?? 10;
  let inFlight = 0;
  const held: (() => void)[] = [];
  const dispatch = (callback: () => void) => {
    inFlight++;
    callback();
  };
  const loader = new DataLoader<Key, RawAccount | null>(
    async (keys) => {
      try {
        const addresses = [...new Set(keys.map((k) => k.address))];
        // The batch serves everyone in it: it may run until the latest of their deadlines.
        const deadline = Math.max(...keys.map((k) => k.deadline));
        const accounts = await options.fetch(addresses, deadline);
        const byAddress = new Map(addresses.map((address, i) => [address, accounts[i] ?? null]));
        return keys.map((k) => byAddress.get(k.address) ?? null);
      } finally {
        inFlight--;
        const next = held.shift();
        if (next) dispatch(next);
      }
    },
    {
      // No cache: an account read must show the chain as it is now, not as an earlier request saw it.
      cache: false,
      maxBatchSize: MAX_MULTIPLE_ACCOUNTS,
      batchScheduleFn: (callback) =>
        setTimeout(() => {
          if (inFlight < MAX_CALLS_IN_FLIGHT) dispatch(callback);
          else held.push(callback); // keeps collecting addresses until a call comes back
        }, windowMs),
    },
  );

  return {
    async read(addresses, deadline) {
      if (addresses.length === 0) return [];
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(options.onDeadline()), Math.max(0, deadline - Date.now()));
      });
      try {
        const results = await Promise.race([loader.loadMany(addresses.map((address) => ({ address, deadline }))), expired]);
        return results.map((result) => {
          if (result instanceof Error) throw result;
          return result;
        });
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
