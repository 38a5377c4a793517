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

export function isV1GateActive(chain: ChainAdapter, deadline: number): Promise<boolean> {
  const known = remembered.get(chain);
  if (known) return known;
  const reading = chain.getAccounts([V1_TRANSACTIONS_FEATURE], deadline).then(
    ([account]) => account !== null && account !== undefined && account.owner === FEATURE_PROGRAM && account.data[0] === 1,
  );
  remembered.set(chain, reading);
  return reading.catch(() => {
    remembered.delete(chain);
    return false;
  });
}
