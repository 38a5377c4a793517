/**
 * The executor of every keyed door, one owner or many: sign → land → report. What differs between
 * the doors is a different input to the same stages: how each transaction is signed (the owner's
 * key, every owner's and the fee payer's, the sponsor's through its policy) and how the signed
 * transactions are sent (the landing engine, or the sponsor's policy one at a time), given as
 * callbacks, as @solana/kit's transaction-plan executor takes its send step.
 */
import { getBase64EncodedWireTransaction, getSignatureFromTransaction, type Address, type Transaction } from '@solana/kit';
import { mapConcurrently, COMPILES_PER_SLICE } from '../plan/slices.ts';
import type { LandingReport, SignedForSending } from './land.ts';
import type { TransactionReport } from './operationResult.ts';
import { reportSponsoredLanding, type SponsoredOutcome } from './sponsorPolicy.ts';

/** What a planned transaction's report carries besides its landing. */
export interface Executable {
  closedAccounts: Address[];
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
}

export interface ExecuteSteps<T> {
  /** Signs one transaction (a few at a time, COMPILES_PER_SLICE). */
  sign(transaction: T, index: number): Promise<Transaction>;
  /** Sends the signed transactions and returns each one's outcome, in order; throws only when it sent none. */
  send(sending: SignedForSending[], signed: readonly Transaction[]): Promise<SponsoredOutcome[]>;
  /** Whether the fee payer's fee counts in a transaction's report (0 when it does not). */
  feeCounts(report: LandingReport, index: number): boolean;
}

/** Signs, lands and reports `transactions` (all valid until `lastValidBlockHeight`); the reports are in their order. */
export async function signLandReport<T extends Executable>(
  transactions: readonly T[],
  lastValidBlockHeight: bigint,
  steps: ExecuteSteps<T>,
): Promise<TransactionReport[]> {
  const signed = await mapConcurrently(transactions, COMPILES_PER_SLICE, (t, i) => steps.sign(t, i));
  const sending = signed.map((t) => ({ wire: getBase64EncodedWireTransaction(t), signature: getSignatureFromTransaction(t), lastValidBlockHeight }));
  const outcomes = await steps.send(sending, signed);
  return transactions.map((t, i) => {
    const report = reportSponsoredLanding(outcomes[i]!);
    return {
      signature: sending[i]!.signature,
      status: report.status,
      slot: report.slot,
      closedAccounts: t.closedAccounts,
      computeUnitLimit: t.computeUnitLimit,
      computeUnitPriceMicroLamports: t.computeUnitPriceMicroLamports,
      feeLamports: steps.feeCounts(report, i) ? t.feeLamports : 0n,
      error: report.error,
    };
  });
}
