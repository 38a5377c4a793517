/**
 * The pricer of every path (one owner, many owners): a transaction's compute unit limit from its
 * simulation, and the price that makes it pay its share of the priority fee, with the fee that
 * follows. Pure.
 */
import { transactionFee } from './fees.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from './pack.ts';
import { computeUnitPriceFor } from './priorityFee.ts';

/** Simulated units + 10 %, and at least 1,000 CU of headroom. */
export function computeUnitLimitFor(unitsConsumed: number): number {
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(Math.ceil(unitsConsumed * 1.1), unitsConsumed + 1000));
}

/** At any compute-unit limit up to this, price × limit (rounded up) gives back the whole priority share. */
export const SHARE_EXACT_LIMIT = 1_000_000;

/** A transaction's compute budget and what it costs. */
export interface Price {
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
}

/** The price at `computeUnitLimit` that pays `share` of the priority fee, and the fee of `signatures` signatures at it. */
export function priceAt(computeUnitLimit: number, share: bigint, signatures: number): Price {
  const computeUnitPriceMicroLamports = computeUnitPriceFor(share, computeUnitLimit);
  return { computeUnitLimit, computeUnitPriceMicroLamports, feeLamports: transactionFee(signatures, computeUnitPriceMicroLamports, computeUnitLimit) };
}

/**
 * The limit of a transaction priced without a simulation (a preview's): its estimate, at most
 * SHARE_EXACT_LIMIT, so that its fee is still exactly the base fees plus its whole priority share,
 * the fee the simulated transaction pays. Only the limit is an estimate, and a preview never sends it.
 */
export const limitWithoutSimulation = (computeUnitEstimate: number): number => Math.min(computeUnitEstimate, SHARE_EXACT_LIMIT);

/** The limit from a simulation's units, or the estimate when the node did not say. */
export const limitFromSimulation = (unitsConsumed: number | null, computeUnitEstimate: number): number =>
  unitsConsumed === null ? computeUnitEstimate : computeUnitLimitFor(unitsConsumed);
