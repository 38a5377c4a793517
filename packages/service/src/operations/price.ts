/**
 * The pricer of every path that sends: one owner or many, legacy, v0 or v1. Each transaction gets
 * its share of the caller's priority fee, is simulated (SIMULATIONS_AT_ONCE at a time, at the
 * largest limits and the price that pays its share, so that the node checks the fee payer against
 * the fee the final transaction pays), and is priced from that simulation. What differs between the
 * paths is given as steps: how a transaction's message is built, how a price is read from its
 * simulation (the compute-budget instructions of legacy and v0, the config field of v1), and what a
 * failed simulation means (one owner: the plan stops; many owners: the job leaves that owner out).
 *
 * Also here, the one summary of a priced plan (what it returns, what it costs, the net) and the one
 * compile of unsigned transactions a few at a time, which every door that hands out or signs
 * transactions uses.
 */
import { compileTransaction, getBase64EncodedWireTransaction, type Base64EncodedWireTransaction, type Transaction } from '@solana/kit';
import type { ChainAdapter, SimulationResult } from '../chain/types.ts';
import type { AccountAction } from '../plan/actions.ts';
import { priorityShare } from '../plan/fees.ts';
import { netOf } from '../plan/net.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from '../plan/pack.ts';
import { limitFromSimulation, limitWithoutSimulation, priceAt, type Price } from '../plan/pricing.ts';
import { COMPILES_PER_SLICE, mapConcurrently, mapInSlices, SIMULATIONS_AT_ONCE } from '../plan/slices.ts';

/** The message type kit compiles: whatever `compileTransaction` takes. */
type CompilableMessage = Parameters<typeof compileTransaction>[0];

export interface PriceSteps<T, P> {
  /** The message simulated for `transaction`: the largest limits, and the price that pays `share`. */
  simulationMessage(transaction: T, share: bigint): CompilableMessage;
  /** The priced transaction from its simulation; `null`: priced without one (a preview's estimate). */
  price(transaction: T, share: bigint, simulation: SimulationResult | null): P;
  /**
   * Reads each simulation before it is priced; throwing stops the job (no new simulation starts) and
   * is what the caller gets. A failed simulation that this does not throw for is returned in `failed`.
   */
  inspect?(simulation: SimulationResult, transaction: T, share: bigint): void;
}

export interface PriceOptions {
  /** The caller's total priority fee, shared over the transactions (plan/fees.ts, priorityShare). */
  priorityFeeLamports: bigint;
  /** How many transactions, from the first, are simulated; the rest are priced without (a preview). Default: all. */
  simulated?: number;
}

/** A transaction whose simulation failed, with the share it was simulated at. */
export interface FailedSimulation<T> {
  transaction: T;
  share: bigint;
  err: unknown;
}

/** Every transaction priced (in order) when none failed; else `failed` lists those that did, and `priced` is empty. */
export interface PriceOutcome<T, P> {
  priced: P[];
  failed: FailedSimulation<T>[];
}

/** Simulates and prices `transactions` for one job (see the module's comment). */
export async function priceTransactions<T, P>(
  chain: ChainAdapter,
  transactions: readonly T[],
  options: PriceOptions,
  steps: PriceSteps<T, P>,
  deadline: number,
): Promise<PriceOutcome<T, P>> {
  const simulated = options.simulated ?? Infinity;
  const failed: FailedSimulation<T>[] = [];
  const priced = await mapConcurrently(transactions, SIMULATIONS_AT_ONCE, async (transaction, index): Promise<P | null> => {
    const share = priorityShare(options.priorityFeeLamports, transactions.length, index);
    if (index >= simulated) return steps.price(transaction, share, null);
    const simulation = await chain.simulate(wireOf(steps.simulationMessage(transaction, share)), deadline);
    steps.inspect?.(simulation, transaction, share);
    if (simulation.err) {
      failed.push({ transaction, share, err: simulation.err });
      return null;
    }
    return steps.price(transaction, share, simulation);
  });
  if (failed.length > 0) {
    const order = new Map(transactions.map((t, i) => [t, i]));
    return { priced: [], failed: failed.sort((a, b) => order.get(a.transaction)! - order.get(b.transaction)!) };
  }
  return { priced: priced as P[], failed };
}

const wireOf = (message: CompilableMessage): Base64EncodedWireTransaction => getBase64EncodedWireTransaction(compileTransaction(message));

/**
 * A legacy or v0 transaction's compute budget from its simulation: the simulated units plus the
 * margin (plan/pricing.ts) and the room a browser wallet's guards need, at most the largest limit;
 * without a simulation its estimate. Then the price that pays `share`, and the fee of `signatures`.
 */
export function priceFromSimulation(
  computeUnitEstimate: number,
  share: bigint,
  simulation: SimulationResult | null,
  signatures: number,
  roomComputeUnits = 0,
): Price {
  const computeUnitLimit =
    simulation === null
      ? limitWithoutSimulation(computeUnitEstimate)
      : Math.min(MAX_COMPUTE_UNIT_LIMIT, limitFromSimulation(simulation.unitsConsumed, computeUnitEstimate) + roomComputeUnits);
  return priceAt(computeUnitLimit, share, signatures);
}

/** What a priced plan returns, what it costs and the net: the one summary of every door. */
export interface PlanTotals {
  feeLamports: bigint;
  /** Rent of the closes plus the excess withdrawn. */
  returnsLamports: bigint;
  netLamports: bigint;
}

/** The totals of the plan whose transactions carry these actions and fees (plan/net.ts counts). */
export function totalsOf(actions: readonly Pick<AccountAction, 'action' | 'returnsLamports'>[], transactions: readonly { feeLamports: bigint }[]): PlanTotals {
  const net = netOf(
    actions,
    transactions.reduce((sum, t) => sum + t.feeLamports, 0n),
  );
  return { feeLamports: net.feeLamports, returnsLamports: net.reclaimedLamports + net.excessWithdrawnLamports, netLamports: net.netLamports };
}

/** Transactions compiled unsigned, a few per turn of the event loop (a millisecond each: a plan of thousands of accounts is a hundred messages). */
export function compileUnsigned<T>(transactions: readonly T[], messageOf: (transaction: T) => CompilableMessage): Promise<Transaction[]> {
  return mapInSlices(transactions, (t) => compileTransaction(messageOf(t)), COMPILES_PER_SLICE);
}
