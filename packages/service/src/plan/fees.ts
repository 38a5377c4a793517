/**
 * The fee formula, in one place (docs/money.md): what a transaction costs is the base fee
 * of each signature plus the priority fee the runtime charges for its compute budget. Pure.
 */
import { priorityFeeCharged } from './priorityFee.ts';

export const BASE_FEE_LAMPORTS_PER_SIGNATURE = 5000n;

/** The base fee of `signatures` signatures. */
export const signatureFees = (signatures: number): bigint => BASE_FEE_LAMPORTS_PER_SIGNATURE * BigInt(signatures);

/** The fee the runtime charges a transaction of `signatures` signatures at this compute unit price and limit. */
export function transactionFee(signatures: number, computeUnitPriceMicroLamports: bigint, computeUnitLimit: number): bigint {
  return signatureFees(signatures) + priorityFeeCharged(computeUnitPriceMicroLamports, computeUnitLimit);
}

/** The most a transaction can cost before it is priced: the base fee of each signature plus its whole priority share. */
export function feeUpperBound(signatures: number, priorityShareLamports: bigint): bigint {
  return signatureFees(signatures) + priorityShareLamports;
}

/** A total priority fee shared between `count` transactions: transaction `index`'s part (the first takes the remainder). */
export function priorityShare(totalLamports: bigint, count: number, index: number): bigint {
  const n = BigInt(count);
  return totalLamports / n + (index === 0 ? totalLamports % n : 0n);
}
