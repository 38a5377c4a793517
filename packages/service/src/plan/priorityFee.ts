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

// Lamports as a SOL decimal string ("0.00203928"): written beside the error catalogue, which uses it.
export { formatSol };
