/**
 * The v1 parts of the pricer (src/operations/price.ts) and of the compiled messages, for one owner
 * (compile.ts) and for many (reclaimMany.ts). Owner-paid and sponsored alike: a sponsored v1
 * transaction repays the sponsor in the same transaction, as legacy does, and since a v1 fee is
 * exact before any simulation (5,000 per signature plus the stated priority fee), the repayment
 * simulated is the very one signed. The sponsor's policy reads v1's config (src/plan/v1Config.ts)
 * and refuses unset limits before it signs.
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
import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import type { BlockhashLifetime, SimulationResult } from '../chain/types.ts';
import { signatureFees } from '../plan/fees.ts';
import { MAX_COMPUTE_UNIT_LIMIT, transactionInstructions, type PlannedTransaction, type TransactionParties } from '../plan/pack.ts';
import { computeUnitPriceFor } from '../plan/priorityFee.ts';
import { limitFromSimulation } from '../plan/pricing.ts';
import {
  loadedAccountsDataLimitFor,
  MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES,
  V1_SIMULATION_CONFIG,
  v1TransactionMessage,
  type V1Limits,
} from '../plan/transactionVersion.ts';
import type { Price } from '../plan/pricing.ts';
import type { PriceSteps } from './price.ts';
import { simulationFailure } from './simulationFailure.ts';

export interface V1Pricing {
  packed: PlannedTransaction;
  computeUnitLimit: number;
  /** The share spread over the limit: what the transaction is ranked by, shown in the answer's details. */
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
  repayLamports: bigint;
  v1: V1Limits;
}

/** A v1 transaction's fee: each signature's base fee plus the priority fee as stated, nothing rounded. */
const v1Fee = (signatures: number, priorityFeeLamports: bigint) => signatureFees(signatures) + priorityFeeLamports;

/**
 * A v1 transaction's limits from its simulation (null: priced without one, a preview's estimate,
 * whose fee does not depend on its limits, only on the share), and the price that follows.
 */
export function v1PriceFrom(
  computeUnitEstimate: number,
  share: bigint,
  simulation: SimulationResult | null,
  signatures: number,
  roomComputeUnits = 0,
): Price & { v1: V1Limits } {
  const loaded = simulation?.loadedAccountsDataSize;
  const limits: V1Limits =
    simulation === null
      ? { computeUnitLimit: Math.min(computeUnitEstimate, MAX_COMPUTE_UNIT_LIMIT), loadedAccountsDataSizeLimit: MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, priorityFeeLamports: share }
      : {
          computeUnitLimit: Math.min(MAX_COMPUTE_UNIT_LIMIT, limitFromSimulation(simulation.unitsConsumed, computeUnitEstimate) + roomComputeUnits),
          loadedAccountsDataSizeLimit: loaded === null || loaded === undefined ? MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES : loadedAccountsDataLimitFor(loaded),
          priorityFeeLamports: share,
        };
  return {
    computeUnitLimit: limits.computeUnitLimit,
    computeUnitPriceMicroLamports: computeUnitPriceFor(limits.priorityFeeLamports, limits.computeUnitLimit),
    feeLamports: v1Fee(signatures, limits.priorityFeeLamports),
    v1: limits,
  };
}

/** The message a v1 transaction is simulated with: both limits at their maximum, and its share of the priority fee. */
export function v1SimulationMessage(feePayer: TransactionSigner, lifetime: BlockhashLifetime, instructions: Instruction[], share: bigint) {
  return v1TransactionMessage(feePayer, lifetime, instructions, { ...V1_SIMULATION_CONFIG, priorityFeeLamports: share });
}

/**
 * The pricer's steps for one owner's v1 transactions: one signature where the owner pays; where a
 * sponsor pays (`sponsorPolicy` given), two, and the repayment of the exact fee simulated in it.
 */
export function v1PriceSteps(
  parties: TransactionParties,
  lifetime: BlockhashLifetime,
  roomComputeUnits: number,
  sponsorPolicy?: { assertInvokesOnlyAllowed(innerPrograms: readonly (Address | null)[]): void },
): PriceSteps<PlannedTransaction, V1Pricing> {
  const sponsored = parties.feePayer.address !== parties.owner.address;
  const signatures = sponsored ? 2 : 1;
  return {
    simulationMessage: (transaction, share) =>
      v1SimulationMessage(parties.feePayer, lifetime, transactionInstructions(transaction.actions, parties, sponsored ? v1Fee(signatures, share) : 0n), share),
    inspect: (simulation) => {
      // What the sponsor pays for runs only what its policy allows, at every depth.
      if (sponsored) sponsorPolicy?.assertInvokesOnlyAllowed(simulation.innerPrograms);
      if (simulation.err) throw simulationFailure(simulation.err, parties.feePayer.address);
    },
    price: (transaction, share, simulation) => {
      const priced = v1PriceFrom(transaction.computeUnitEstimate, share, simulation, signatures, roomComputeUnits);
      return { packed: transaction, repayLamports: sponsored ? priced.feeLamports : 0n, ...priced };
    },
  };
}

/** The v1 message of a priced transaction, ready to sign. */
export function v1CompiledMessage(parties: TransactionParties, lifetime: BlockhashLifetime, transaction: { packed: PlannedTransaction; repayLamports: bigint; v1: V1Limits }) {
  return v1TransactionMessage(parties.feePayer, lifetime, transactionInstructions(transaction.packed.actions, parties, transaction.repayLamports), transaction.v1);
}
