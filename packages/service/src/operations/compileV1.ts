/**
 * Pricing and messages of v1 transactions for the compile step (src/operations/compile.ts), kept
 * apart so that the legacy path stays as it is. v1 is used where the owner pays; a sponsored plan
 * stays legacy (the sponsor's message identity and policy read legacy messages).
 *
 * Every limit is set (an unset v1 limit is 0, and such a transaction fails and is charged):
 * - simulated once with both limits at their maximum and the priority fee it will pay (so the
 *   node checks the payer against the real fee);
 * - compute-unit limit: the simulated units plus the margin legacy uses (computeUnitLimitFor);
 * - loaded-accounts-data limit: the data the simulation reports, rounded up to the next 32 KiB
 *   (program accounts count); a node that does not report it gets the runtime's 64 MiB ceiling;
 * - priority fee: the transaction's share of the caller's total, stated as that total, so the fee
 *   is exactly 5,000 lamports per signature plus the share, with no price × limit rounding.
 */
import { compileTransaction, getBase64EncodedWireTransaction, type TransactionSigner } from '@solana/kit';
import type { BlockhashLifetime, ChainAdapter } from '../chain/types.ts';
import { priorityShare, signatureFees } from '../plan/fees.ts';
import { MAX_COMPUTE_UNIT_LIMIT, transactionInstructions, type PlannedTransaction, type TransactionParties } from '../plan/pack.ts';
import { mapConcurrently } from '../plan/slices.ts';
import {
  loadedAccountsDataLimitFor,
  MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES,
  V1_SIMULATION_CONFIG,
  v1TransactionMessage,
  type V1Limits,
} from '../plan/transactionVersion.ts';

export interface V1Pricing {
  packed: PlannedTransaction;
  computeUnitLimit: number;
  /** The share spread over the limit: what the transaction is ranked by, shown in the answer's details. */
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
  repayLamports: bigint;
  v1: V1Limits;
}

export interface V1PricingInput {
  priorityFeeLamports: bigint;
  lifetime: BlockhashLifetime;
  estimate?: boolean | undefined;
  /** Compute units a browser wallet's guards may add (0 where Cinder signs). */
  roomComputeUnits: number;
}

function priced(packed: PlannedTransaction, limits: V1Limits, signatures: number): V1Pricing {
  return {
    packed,
    computeUnitLimit: limits.computeUnitLimit,
    computeUnitPriceMicroLamports: (limits.priorityFeeLamports * 1_000_000n) / BigInt(limits.computeUnitLimit),
    feeLamports: signatureFees(signatures) + limits.priorityFeeLamports,
    repayLamports: 0n,
    v1: limits,
  };
}

export async function priceV1Transactions(
  chain: ChainAdapter,
  planned: PlannedTransaction[],
  parties: TransactionParties,
  input: V1PricingInput,
  deadline: number,
  options: { simulationsAtOnce: number; computeUnitLimitFor: (units: number) => number; simulationFailure: (err: unknown, payer: TransactionSigner['address']) => Error },
): Promise<V1Pricing[]> {
  return mapConcurrently(planned, options.simulationsAtOnce, async (transaction, index) => {
    const share = priorityShare(input.priorityFeeLamports, planned.length, index);
    if (input.estimate && index >= options.simulationsAtOnce) {
      // A preview's unsimulated transaction: its fee does not depend on its limits, only on the share.
      return priced(transaction, { computeUnitLimit: Math.min(transaction.computeUnitEstimate, MAX_COMPUTE_UNIT_LIMIT), loadedAccountsDataSizeLimit: MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, priorityFeeLamports: share }, 1);
    }
    const instructions = transactionInstructions(transaction.actions, parties, 0n);
    const simulationMessage = v1TransactionMessage(parties.feePayer, input.lifetime, instructions, { ...V1_SIMULATION_CONFIG, priorityFeeLamports: share });
    const simulation = await chain.simulate(getBase64EncodedWireTransaction(compileTransaction(simulationMessage)), deadline);
    if (simulation.err) throw options.simulationFailure(simulation.err, parties.feePayer.address);
    const units = simulation.unitsConsumed === null ? transaction.computeUnitEstimate : options.computeUnitLimitFor(simulation.unitsConsumed);
    const loaded = simulation.loadedAccountsDataSize;
    return priced(
      transaction,
      {
        computeUnitLimit: Math.min(MAX_COMPUTE_UNIT_LIMIT, units + input.roomComputeUnits),
        loadedAccountsDataSizeLimit: loaded === null || loaded === undefined ? MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES : loadedAccountsDataLimitFor(loaded),
        priorityFeeLamports: share,
      },
      1,
    );
  });
}

/** The v1 message of a priced transaction, ready to sign. */
export function v1CompiledMessage(parties: TransactionParties, lifetime: BlockhashLifetime, transaction: { packed: PlannedTransaction; repayLamports: bigint; v1: V1Limits }) {
  return v1TransactionMessage(parties.feePayer, lifetime, transactionInstructions(transaction.packed.actions, parties, transaction.repayLamports), transaction.v1);
}
