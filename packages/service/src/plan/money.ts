/**
 * The money rules, in one place, as checks on the compiled plan before anything is signed
 * (docs/money.md). Pure: balances and fees in, a CinderError out when a rule says no.
 */
import type { Address } from '@solana/kit';
import { CinderError } from '../errors.ts';
import { formatSol } from '../errors/format.ts';

// The signed net as messages say it ("−0.00797", a true minus sign): written beside the error catalogue, which uses it.
export { formatNetSol } from '../errors/format.ts';

/**
 * Whether a payer may pay `fee` out of `balance`: the runtime refuses a fee payer that would be
 * left with a balance between 0 and the rent-exempt minimum of an empty account.
 */
export function leavesValidBalance(balance: bigint, fee: bigint, reserve: bigint): boolean {
  const after = balance - fee;
  return after === 0n || after >= reserve;
}

/** What the payer lacks to pay these fees and keep the reserve (0 when it can pay). */
export function missingForFees(balance: bigint, fees: readonly bigint[], reserve: bigint): bigint {
  const total = fees.reduce((sum, fee) => sum + fee, 0n);
  // Each transaction may land first, and together they take the total: all must leave a valid balance.
  const ok = leavesValidBalance(balance, total, reserve) && fees.every((fee) => leavesValidBalance(balance, fee, reserve));
  if (ok) return 0n;
  return total + reserve - balance;
}

/**
 * The payer check of every path: 400 INSUFFICIENT_SOL_FOR_FEE, saying how much is missing, when
 * `payer` cannot pay `fees` and keep a valid balance. `field` is the request's field that named a
 * separate fee payer (a many-owner job); without it the payer is the owner.
 */
export function assertPayerCanPay(payer: Address, balance: bigint, fees: readonly bigint[], reserve: bigint, field?: string): void {
  const missing = missingForFees(balance, fees, reserve);
  if (missing === 0n) return;
  const total = fees.reduce((sum, fee) => sum + fee, 0n);
  throw new CinderError(
    'INSUFFICIENT_SOL_FOR_FEE',
    { reason: 'balance', feePayer: payer, separateFeePayer: field !== undefined, balance, fees: total, reserve, missing },
    field ? { errors: [{ field, message: `needs ${formatSol(missing)} SOL more to pay every fee` }] } : {},
  );
}

/** The owner pays: the payer check, naming the owner. */
export const assertOwnerCanPay = (owner: Address, balance: bigint, fees: readonly bigint[], reserve: bigint): void =>
  assertPayerCanPay(owner, balance, fees, reserve);

/** 400 FEE_EXCEEDS_RECLAIM when the fees are larger than what comes back, unless the caller accepts a net loss. */
export function assertFeeWithinReclaim(returnsLamports: bigint, feeLamports: bigint, allowNetLoss: boolean): void {
  if (feeLamports <= returnsLamports || allowNetLoss) return;
  throw new CinderError('FEE_EXCEEDS_RECLAIM', { reason: 'net', fees: feeLamports, returns: returnsLamports });
}

/**
 * A sponsored transaction repays its sponsor out of its own closes: the owner, after receiving
 * `returnsLamports` and paying back `feeLamports`, must keep a valid balance. One that could not
 * repay in full is never sent (the sponsor would pay for a transaction that fails).
 */
export function canRepaySponsor(ownerBalance: bigint, returnsLamports: bigint, feeLamports: bigint, reserve: bigint): boolean {
  return returnsLamports >= feeLamports && leavesValidBalance(ownerBalance + returnsLamports, feeLamports, reserve);
}

/**
 * Whether the fee sponsor can pay now: each sponsored transaction takes its fee from the sponsor
 * and gives it back atomically, so a sponsor that can pay the largest one and keep the reserve
 * stays whole whatever else is in flight.
 */
export function sponsorCanPay(sponsorLamports: bigint, feeBounds: readonly bigint[], reserve: bigint): boolean {
  const largest = feeBounds.reduce((max, bound) => (bound > max ? bound : max), 0n);
  return sponsorLamports - largest >= reserve;
}
