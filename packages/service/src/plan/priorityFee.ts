import { CinderError } from '../errors.ts';
import { formatSol } from '../errors/format.ts';

const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

function invalidFee(message: string): CinderError {
  return new CinderError('INVALID_PRIORITY_FEE', { reason: 'rule', problem: message }, { errors: [{ field: 'priorityFee', message }] });
}

/**
 * `priorityFee` is a JSON number of SOL with at most 9 decimals (lamport precision). It is turned
 * into exact lamports through its decimal text, so 0.001 is 1,000,000 lamports and never 999,999.
 */
export function priorityFeeToLamports(priorityFeeSol: number, maxLamports: bigint): bigint {
  if (!Number.isFinite(priorityFeeSol) || priorityFeeSol < 0) throw invalidFee('must be a number of SOL ≥ 0');
  // 12 decimals is exact enough for values ≤ 1e6 SOL and shows digits past the 9th.
  const [whole = '0', fraction = ''] = priorityFeeSol.toFixed(12).split('.');
  if (!/^0{3}$/.test(fraction.slice(9))) throw invalidFee('has more than 9 decimals (1 lamport = 0.000000001 SOL)');
  const lamports = BigInt(whole) * 1_000_000_000n + BigInt(fraction.slice(0, 9));
  if (lamports > maxLamports) throw invalidFee(`must be at most ${formatSol(maxLamports)} SOL`);
  return lamports;
}

/** Price per compute unit so that the fee charged (price × limit, rounded up) never exceeds the fee asked for. */
export function computeUnitPriceFor(priorityFeeLamports: bigint, computeUnitLimit: number): bigint {
  return (priorityFeeLamports * MICRO_LAMPORTS_PER_LAMPORT) / BigInt(computeUnitLimit);
}

/** The priority fee the runtime charges: ceil(price × limit / 1e6) lamports. */
export function priorityFeeCharged(computeUnitPriceMicroLamports: bigint, computeUnitLimit: number): bigint {
  const product = computeUnitPriceMicroLamports * BigInt(computeUnitLimit);
  return (product + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
}

/** A caller's `priorityFee`: lamports it named, or 'auto' (the service reads the cluster's recent fees). */
export type PriorityFeeRequest = bigint | 'auto';

/** The request field as the schema admits it: a number of SOL, or the string "auto". */
export function priorityFeeRequest(priorityFee: number | 'auto' | undefined, maxLamports: bigint): PriorityFeeRequest {
  if (priorityFee === 'auto') return 'auto';
  return priorityFeeToLamports(priorityFee ?? 0, maxLamports);
}

/**
 * The percentile of the recent per-slot fees that "auto" pays. Each entry of
 * getRecentPrioritizationFees is the lowest compute-unit price that landed in that slot while
 * writing the accounts asked about; the 75th percentile would have cleared three slots in four of
 * the last 150, so a job lands within a few slots on a busy cluster, and it does not chase the
 * spikes of the top slots (the maximum) the way a "max" strategy would. The median lands only
 * in half of them.
 */
export const AUTO_PRIORITY_FEE_PERCENTILE = 75;

/** The `percentile`th (nearest-rank) of the recent per-slot fees, in micro-lamports per compute unit; 0 when none. */
export function recentFeePercentile(fees: readonly bigint[], percentile: number = AUTO_PRIORITY_FEE_PERCENTILE): bigint {
  if (fees.length === 0) return 0n;
  const sorted = [...fees].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = Math.max(1, Math.ceil((percentile / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface AutoPriorityFeeInput {
  /** The chosen recent price, micro-lamports per compute unit. */
  microLamportsPerComputeUnit: bigint;
  /**
   * The compute units the job's transactions will be limited to, at most: the packer's per-account
   * upper bounds (src/plan/pack.ts), which are several times what the token programs consume, so
   * that every transaction's price (its share over its simulated limit) clears the chosen price.
   */
  computeUnitsUpperBound: number;
  /** The operator's bound on the price "auto" pays (AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS). */
  maxMicroLamportsPerComputeUnit: bigint;
  /** The bound on any priority fee (MAX_PRIORITY_FEE_SOL). */
  maxPriorityFeeLamports: bigint;
  /**
   * The money rule: the most the priority fee may take without making the job net-negative (what it
   * returns less its base fees); null with allowNetLoss, where the caller accepted a loss.
   */
  netLossBoundLamports: bigint | null;
}

/**
 * The job's total priority fee (lamports) that "auto" resolves to: the chosen price over the job's
 * compute units, within the operator's bounds and the money rule. (The sponsor's bound, which
 * applies only where it pays, is src/operations/autoPriorityFee.ts's.)
 */
export function autoPriorityFeeLamports(input: AutoPriorityFeeInput): bigint {
  const price = input.microLamportsPerComputeUnit < input.maxMicroLamportsPerComputeUnit ? input.microLamportsPerComputeUnit : input.maxMicroLamportsPerComputeUnit;
  // Rounded up, as the runtime charges a price over a limit: a fee of one lamport less could price a transaction just below the chosen price.
  let lamports = priorityFeeCharged(price, input.computeUnitsUpperBound);
  for (const bound of [input.maxPriorityFeeLamports, input.netLossBoundLamports]) {
    if (bound !== null && lamports > bound) lamports = bound;
  }
  return lamports < 0n ? 0n : lamports;
}

// Lamports as a SOL decimal string ("0.00203928"): written beside the error catalogue, which uses it.
export { formatSol };
