/**
 * The cluster's v1 transaction gate (`txv1aq4pp…`, SIMD-0385/0296), read once per chain adapter
 * and remembered: a feature never deactivates, so one read is enough for the life of the process.
 * A failed read is not remembered (the next job asks again) and counts as "not active", so an RPC
 * hiccup falls back to the versions every cluster takes rather than to one it may refuse.
 *
 * A gate is active when its account exists, is owned by the feature program and holds
 * bincode `Feature { activated_at: Some(_) }` (first data byte 1).
 */
import { address } from '@solana/kit';
import type { ChainAdapter } from './types.ts';

export const FEATURE_PROGRAM = address('Feature111111111111111111111111111111111111');
export const V1_TRANSACTIONS_FEATURE = address('txv1aq4pp281K9um3tnPgkfX8UqtFT6wcVW3hNezGLL');

const remembered = new WeakMap<ChainAdapter, Promise<boolean>>();

/** Whether the gate's account (null: none) says it is active. */
function gateActiveIn(account: { owner: string; data: Uint8Array } | null | undefined): boolean {
  return account !== null && account !== undefined && account.owner === FEATURE_PROGRAM && account.data[0] === 1;
}

export function isV1GateActive(chain: ChainAdapter, deadline: number): Promise<boolean> {
  const known = remembered.get(chain);
  if (known) return known;
  const reading = chain.getAccounts([V1_TRANSACTIONS_FEATURE], deadline).then(([account]) => gateActiveIn(account));
  remembered.set(chain, reading);
  return reading.catch(() => {
    remembered.delete(chain);
    return false;
  });
}

/** The gate as remembered for this chain adapter; undefined before it was first read. */
export function rememberedV1Gate(chain: ChainAdapter): Promise<boolean> | undefined {
  return remembered.get(chain);
}

/**
 * The gate from its account, read by the caller in a batch of its own (one getMultipleAccounts
 * instead of two), and remembered as isV1GateActive remembers it.
 */
export function rememberV1GateFrom(chain: ChainAdapter, account: { owner: string; data: Uint8Array } | null | undefined): boolean {
  const active = gateActiveIn(account);
  if (!remembered.has(chain)) remembered.set(chain, Promise.resolve(active));
  return active;
}
