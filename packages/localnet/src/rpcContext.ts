/** Shared pieces of the RPC method modules. */
import type { Chain } from './chain.ts';

/** Reported by getVersion and in every response context. */
export const SOLANA_CORE_VERSION = '3.0.0';
export const FEATURE_SET = 3294202862;

/** A method handler receives the positional params (already checked to be an array). */
export type RpcHandler = (params: unknown[]) => unknown;
export type RpcMethodTable = Record<string, RpcHandler>;

export function withContext<T>(chain: Chain, value: T): { context: { apiVersion: string; slot: number }; value: T } {
  return { context: { apiVersion: SOLANA_CORE_VERSION, slot: chain.slot }, value };
}
