/**
 * The rent-exempt minimum, read from the cluster's Rent sysvar rather than hard-coded: SIMD-0437
 * lowers `lamports_per_byte` in steps, so the same 165-byte token account needs 2,039,280 lamports
 * on one cluster and fewer on another, and accounts opened before a step hold the difference as
 * excess. Pure: the sysvar's bytes in, numbers out.
 */
import { address, type Address } from '@solana/kit';

export const RENT_SYSVAR: Address = address('SysvarRent111111111111111111111111111111111');

/** Bytes every account is charged for on top of its data (the account's metadata). */
const ACCOUNT_STORAGE_OVERHEAD = 128n;

export interface Rent {
  lamportsPerByte: bigint;
  /** Formerly "years of rent"; 2.0 before SIMD-0194, 1.0 after (with lamports_per_byte doubled). */
  exemptionThreshold: number;
}

/** Mainnet's values before SIMD-0437 (6,960 lamports per byte; a token account needs 2,039,280). */
export const DEFAULT_RENT: Rent = { lamportsPerByte: 3480n, exemptionThreshold: 2 };

/** Rent sysvar layout: lamports_per_byte u64 LE, exemption_threshold f64 LE, burn_percent u8. */
export function decodeRent(data: Uint8Array): Rent | null {
  if (data.length < 17) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return { lamportsPerByte: view.getBigUint64(0, true), exemptionThreshold: view.getFloat64(8, true) };
}

/** The lamports an account of `space` data bytes must hold to be rent exempt (Rent::minimum_balance). */
export function rentExemptMinimum(rent: Rent, space: number): bigint {
  const perYear = (ACCOUNT_STORAGE_OVERHEAD + BigInt(space)) * rent.lamportsPerByte;
  // Integer arithmetic for the thresholds clusters use, as the runtime's own fast path does.
  if (Number.isInteger(rent.exemptionThreshold)) return perYear * BigInt(rent.exemptionThreshold);
  return BigInt(Math.floor(Number(perYear) * rent.exemptionThreshold));
}
