/**
 * `priorityFee: "auto"` for many owners (docs/many-wallets.md): the cluster's recent fees read once
 * per request, for the accounts the job writes, and the total they price resolved for a packing of
 * the job. The bounds and the money rule are the one-owner form's (autoPriorityFee.ts); what differs
 * is what a packing knows exactly: its signatures (so its base fees) and its compute-unit bounds.
 * There is no sponsor's bound: the many-owner doors refuse the sponsor.
 */
import type { Address } from '@solana/kit';
import type { ChainAdapter } from '../chain/types.ts';
import { signatureFees } from '../plan/fees.ts';
import type { ManyOwnerTransaction } from '../plan/packOwners.ts';
import type { PriorityFeeRequest } from '../plan/priorityFee.ts';
import { accountsWrittenBy, autoFeeWithinBounds, recentAutoPrice, type AutoPriorityFeeBounds } from './autoPriorityFee.ts';

/** The job's total priority fee for a packing of its owners: the caller's number, or "auto" at the price read for the job. */
export type ManyPriorityFee = (packing: readonly ManyOwnerTransaction[]) => bigint;

export interface ManyAutoFeeJob {
  fee: PriorityFeeRequest;
  /**
   * Accounts every transaction of the job writes, asked first: the fee payer and the destination
   * (none for a preview, which has neither).
   */
  payers: readonly Address[];
  /** The job packed as it was read: its closes are the accounts asked about after the payers. */
  packed: readonly ManyOwnerTransaction[];
  allowNetLoss: boolean;
}

/**
 * One read of the recent fees ("auto"; nothing read for a number, nor for a job with nothing to
 * close), and the rule that prices any packing of the job with it. A job that leaves out an owner
 * the node refuses is packed again; the price stays the one read, the money rule is that of the
 * owners that remain, so the fee never takes more than what they return.
 */
export async function manyPriorityFee(chain: ChainAdapter, job: ManyAutoFeeJob, bounds: AutoPriorityFeeBounds, deadline: number): Promise<ManyPriorityFee> {
  const { fee } = job;
  if (fee !== 'auto') return () => fee;
  if (job.packed.length === 0) return () => 0n;
  const sending = (packing: readonly ManyOwnerTransaction[]) => packing.flatMap((t) => t.actions.map((a) => a.action));
  const price = await recentAutoPrice(chain, [...job.payers, ...accountsWrittenBy(sending(job.packed))], deadline);
  return (packing) => {
    // The packing's own figures: each transaction's compute-unit bound (what its limit is at most)
    // and every signature it needs, whose base fees are exact.
    const computeUnits = packing.reduce((sum, t) => sum + t.computeUnitEstimate, 0);
    const baseFees = signatureFees(packing.reduce((sum, t) => sum + t.signatures, 0));
    return autoFeeWithinBounds(price, sending(packing), computeUnits, baseFees, job.allowNetLoss, bounds);
  };
}
