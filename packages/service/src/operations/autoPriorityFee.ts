/**
 * `priorityFee: "auto"` resolved at the door of the pipeline, before anything is priced: one read
 * of the cluster's recent fees for the accounts the job writes (src/chain/recentFees.ts), the
 * percentile and its bounds (src/plan/priorityFee.ts). The number it resolves to is what the
 * preview states, so a prepare made with that number plans the same fee and the same net.
 * The read and the bounds are shared with the many-owner form (autoPriorityFeeMany.ts); the
 * sponsor's bound is this form's alone.
 */
import type { Address } from '@solana/kit';
import { readRecentPriorityFees } from '../chain/recentFees.ts';
import type { ChainAdapter } from '../chain/types.ts';
import { ACTIONS_THAT_SEND, type AccountAction, type WalletState } from '../plan/actions.ts';
import { signatureFees } from '../plan/fees.ts';
import { COMPUTE_UNITS_FOR_HARVEST, computeUnitsPerAccount, MAX_COMPUTE_UNIT_LIMIT } from '../plan/pack.ts';
import { autoPriorityFeeLamports, recentFeePercentile, type PriorityFeeRequest } from '../plan/priorityFee.ts';
import { rentExemptMinimum } from '../plan/rent.ts';

export interface AutoPriorityFeeBounds {
  /** AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS. */
  maxMicroLamports: bigint;
  /** MAX_PRIORITY_FEE_SOL in lamports. */
  maxPriorityFeeLamports: bigint;
}

export interface AutoPriorityFeeJob {
  fee: PriorityFeeRequest;
  owner: Address;
  feePayer: 'owner' | 'sponsor' | 'auto';
  allowNetLoss: boolean;
  state: WalletState;
  actions: readonly AccountAction[];
  /** The sponsor's address and fee bound, when the service has one. */
  sponsor: { address: Address; maxFeeLamports: bigint } | null;
}

/** The accounts a job's closes write besides its payers: every account that closes, and each mint burned or harvested. */
export function accountsWrittenBy(sending: readonly AccountAction[]): Address[] {
  const written: Address[] = [];
  for (const action of sending) {
    written.push(action.account.address);
    if (action.action === 'burn_and_close' || action.harvest) written.push(action.account.mint);
  }
  return written;
}

/** The recent price "auto" pays (micro-lamports per compute unit) for these accounts written: one getRecentPrioritizationFees. */
export async function recentAutoPrice(chain: ChainAdapter, written: readonly Address[], deadline: number): Promise<bigint> {
  return recentFeePercentile(await readRecentPriorityFees(chain, written, deadline));
}

/**
 * The shared rule of both forms: the price over the compute units of the closes, within the
 * operator's bounds and the money rule (what the closes return less `baseFees`, unless the caller
 * accepted a loss). The one-owner form then applies the sponsor's bound; the many-owner form has no sponsor.
 */
export function autoFeeWithinBounds(
  price: bigint,
  sending: readonly AccountAction[],
  computeUnits: number,
  baseFees: bigint,
  allowNetLoss: boolean,
  bounds: AutoPriorityFeeBounds,
): bigint {
  const returns = sending.reduce((sum, a) => sum + a.returnsLamports, 0n);
  return autoPriorityFeeLamports({
    microLamportsPerComputeUnit: price,
    computeUnitsUpperBound: computeUnits,
    maxMicroLamportsPerComputeUnit: bounds.maxMicroLamports,
    maxPriorityFeeLamports: bounds.maxPriorityFeeLamports,
    netLossBoundLamports: allowNetLoss ? null : returns > baseFees ? returns - baseFees : 0n,
  });
}

/** The job's total priority fee in lamports: the caller's number as it is, or "auto" resolved. */
export async function resolvePriorityFee(chain: ChainAdapter, job: AutoPriorityFeeJob, bounds: AutoPriorityFeeBounds, deadline: number): Promise<bigint> {
  if (job.fee !== 'auto') return job.fee;
  const sending = job.actions.filter((a) => ACTIONS_THAT_SEND.has(a.action));
  // A job of n accounts has at most n transactions: a bound on its base fees that needs no packing.
  const baseFeesAtMost = signatureFees(2 * Math.max(1, sending.length));
  const computeUnits = sending.reduce((sum, a) => sum + computeUnitsPerAccount(a) + (a.harvest ? COMPUTE_UNITS_FOR_HARVEST : 0), 0);
  // The owner and the fee payer are written by every transaction: asked first.
  const sponsorMayPay = job.sponsor !== null && job.feePayer !== 'owner';
  const written: Address[] = [job.owner, ...(sponsorMayPay ? [job.sponsor!.address] : []), ...accountsWrittenBy(sending)];
  const price = await recentAutoPrice(chain, written, deadline);
  const uncapped = autoFeeWithinBounds(price, sending, computeUnits, baseFeesAtMost, job.allowNetLoss, bounds);
  // The sponsor pays when asked to, or ("auto") when the owner cannot pay this fee up front and
  // keep its reserve: then the fee must be one the sponsor's bound accepts, or the job is refused.
  const ownerCannotPay = job.state.ownerLamports < uncapped + baseFeesAtMost + rentExemptMinimum(job.state.rent, 0);
  if (!sponsorMayPay || (job.feePayer === 'auto' && !ownerCannotPay)) return uncapped;
  // Each transaction pays an even share of the total, the first also the remainder (src/plan/fees.ts:
  // priorityShare), and every one of a sponsored plan must be within the sponsor's bound. The packer
  // makes at least as many transactions as its compute-unit bounds fill at the largest limit, and the
  // remainder is less than the number of transactions, itself at most the number of accounts: so
  // with this total no share passes the bound, however the accounts are packed.
  const fewestTransactions = Math.max(1, Math.ceil(sending.reduce((sum, a) => sum + computeUnitsPerAccount(a), 0) / MAX_COMPUTE_UNIT_LIMIT));
  const perTransaction = job.sponsor!.maxFeeLamports - signatureFees(2) - BigInt(sending.length);
  const sponsorBound = perTransaction > 0n ? perTransaction * BigInt(fewestTransactions) : 0n;
  return uncapped < sponsorBound ? uncapped : sponsorBound;
}
