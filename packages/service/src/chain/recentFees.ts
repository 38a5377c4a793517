/**
 * The cluster's recent priority fees for the accounts a job writes (getRecentPrioritizationFees),
 * the one read behind `priorityFee: "auto"`: one RPC call per job, counted in the RPC budget.
 */
import type { Address } from '@solana/kit';
import type { ChainAdapter } from './types.ts';

/** Agave refuses more than 128 accounts in one getRecentPrioritizationFees call. */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

/**
 * The recent per-slot fees (micro-lamports per compute unit) of the accounts written, at most
 * MAX_PRIORITIZATION_FEE_ACCOUNTS of them, in the order given: callers put the accounts every
 * transaction writes (the owner, the fee payer) first, as those are the ones a busy writer would
 * contend on in every transaction of the job. A chain that cannot say answers no fees (0).
 */
export async function readRecentPriorityFees(chain: ChainAdapter, written: readonly Address[], deadline: number): Promise<bigint[]> {
  if (!chain.getRecentPrioritizationFees) return [];
  const accounts = [...new Set(written)].slice(0, MAX_PRIORITIZATION_FEE_ACCOUNTS);
  return chain.getRecentPrioritizationFees(accounts, deadline);
}
