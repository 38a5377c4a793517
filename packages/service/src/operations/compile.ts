/**
 * The compile step of the pipeline: planned transactions → priced transactions, with the money
 * rules checked on the result. Each transaction is simulated once, at the priority fee it will
 * really pay (so the node also checks that the fee payer can pay it), to size its compute limit;
 * then the exact fee of the final transaction is computed and every money rule is checked on it
 * before anything is signed.
 */
import { createNoopSigner, type Address, type TransactionSigner } from '@solana/kit';
import type { BlockhashLifetime, ChainAdapter } from '../chain/types.ts';
import { CinderError, type CinderErrorCode } from '../errors.ts';
import { computeUnitPriceFor } from '../plan/priorityFee.ts';
import type { AccountAction } from '../plan/actions.ts';
import { BASE_FEE_LAMPORTS_PER_SIGNATURE, feeUpperBound, priorityShare, signatureFees } from '../plan/fees.ts';
import { splitSponsored } from '../plan/sponsoredPrefix.ts';
import { assertFeeWithinReclaim, assertOwnerCanPay } from '../plan/money.ts';
import {
  MAX_COMPUTE_UNIT_LIMIT,
  packTransactions,
  transactionInstructions,
  transactionMessage,
  withComputeBudget,
  type PlannedTransaction,
  type TransactionParties,
} from '../plan/pack.ts';
import { rentExemptMinimum, type Rent } from '../plan/rent.ts';
import { SIMULATIONS_AT_ONCE } from '../plan/slices.ts';
import { cannotRepaySponsor, type SponsorPolicy } from './sponsorPolicy.ts';
import { WALLET_GUARD_ROOM } from '../plan/walletAdditions.ts';
import { simulationFailure } from './simulationFailure.ts';
import type { TransactionVersion, V1Limits } from '../plan/transactionVersion.ts';
import { V1_FORMAT } from '../plan/v1Format.ts';
import { v1CompiledMessage, v1PriceSteps } from './compileV1.ts';
import { priceFromSimulation, priceTransactions as price, totalsOf, type PriceSteps } from './price.ts';


export interface CompiledTransaction {
  packed: PlannedTransaction;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
  /** Sponsored: what the owner pays the sponsor back in this transaction (its exact fee). */
  repayLamports: bigint;
  /** A v1 transaction's limits (src/operations/compileV1.ts); absent for legacy. */
  v1?: V1Limits;
  /**
   * In a sponsored plan, a transaction after the sponsored prefix (src/plan/sponsoredPrefix.ts):
   * the owner pays its fee from the rent the prefix returned, and it must not go out before the
   * prefix landed. Absent or false: the plan's fee payer pays.
   */
  ownerPays?: boolean;
}

export interface CompiledPlan {
  parties: TransactionParties;
  sponsored: boolean;
  transactions: CompiledTransaction[];
  feeLamports: bigint;
  returnsLamports: bigint;
  netLamports: bigint;
  lifetime: BlockhashLifetime;
}

export interface CompileInput {
  owner: Address;
  ownerLamports: bigint;
  actions: readonly AccountAction[];
  rent: Rent;
  priorityFeeLamports: bigint;
  allowNetLoss: boolean;
  lifetime: BlockhashLifetime;
  /** 'auto': the owner pays when it can, else the sponsor (when one is configured). */
  feePayer: 'owner' | 'sponsor' | 'auto';
  /** The fee sponsor's balance and its policy (which decides whether and for what fee it pays, and alone signs for it). */
  sponsor: { lamports: bigint; policy: SponsorPolicy } | null;
  /**
   * Who signs: 'wallet', a browser wallet, which adds its guards (docs/wallet-additions.md): each
   * transaction leaves them room, bytes and compute units; 'key' (the default), Cinder or a
   * signer that signs exactly what it is given: packed full.
   */
  signer?: 'key' | 'wallet';
  /**
   * A preview (nothing is signed): only the first SIMULATIONS_AT_ONCE transactions are simulated,
   * the others are priced without a simulation for the same fee (`limitWithoutSimulation`, src/plan/pricing.ts).
   */
  estimate?: boolean;
  /**
   * The version the job uses (src/plan/transactionVersion.ts: 1 only where the cluster's gate is
   * active and the signer takes it). Default legacy. A sponsored plan stays legacy.
   */
  transactionVersion?: TransactionVersion;
}

const isFeePayerFailure = (error: CinderError) => error.code === 'INSUFFICIENT_SOL_FOR_FEE';

/**
 * The plan's transactions priced by the one pricer (src/operations/price.ts): legacy simulated with
 * its compute-budget instructions (and, sponsored, the repayment at its bound), v1 with its config.
 * A simulation that fails stops the plan with what it means (simulationFailure.ts).
 */
async function priceTransactions(
  chain: ChainAdapter,
  planned: PlannedTransaction[],
  parties: TransactionParties,
  input: CompileInput,
  deadline: number,
  v1 = false,
): Promise<CompiledTransaction[]> {
  const options = { priorityFeeLamports: input.priorityFeeLamports, simulated: input.estimate ? SIMULATIONS_AT_ONCE : Infinity };
  const room = roomOf(input).computeUnits;
  if (v1) return (await price(chain, planned, options, v1PriceSteps(parties, input.lifetime, room), deadline)).priced;
  const sponsored = parties.feePayer.address !== parties.owner.address;
  const signatures = sponsored ? 2 : 1;
  const steps: PriceSteps<PlannedTransaction, CompiledTransaction> = {
    simulationMessage: (transaction, share) => {
      const repayBound = sponsored ? feeUpperBound(signatures, share) : 0n;
      const instructions = withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, computeUnitPriceFor(share, MAX_COMPUTE_UNIT_LIMIT), transactionInstructions(transaction.actions, parties, repayBound));
      return transactionMessage(parties.feePayer, input.lifetime, instructions);
    },
    inspect: (simulation) => {
      // What the sponsor pays for runs only what its policy allows, at every depth.
      if (sponsored) input.sponsor!.policy.assertInvokesOnlyAllowed(simulation.innerPrograms);
      if (simulation.err) throw simulationFailure(simulation.err, parties.feePayer.address);
    },
    // A wallet's guards run inside this limit where the wallet keeps the compute budget as prepared.
    price: (transaction, share, simulation) => {
      const priced = priceFromSimulation(transaction.computeUnitEstimate, share, simulation, signatures, room);
      return { packed: transaction, ...priced, repayLamports: sponsored ? priced.feeLamports : 0n };
    },
  };
  return (await price(chain, planned, options, steps, deadline)).priced;
}

const roomOf = (input: CompileInput) => (input.signer === 'wallet' ? WALLET_GUARD_ROOM : { bytes: 0, computeUnits: 0 });

/** Later will not help: say so, and what to do instead. */
function noSponsorConfigured(): CinderError {
  return new CinderError('SPONSOR_UNAVAILABLE', { reason: 'notConfigured' });
}

function summarize(parties: TransactionParties, transactions: CompiledTransaction[], lifetime: BlockhashLifetime): CompiledPlan {
  return {
    parties,
    sponsored: parties.feePayer.address !== parties.owner.address,
    transactions,
    ...totalsOf(transactions.flatMap((t) => t.packed.actions), transactions),
    lifetime,
  };
}

/** The owner pays: simulate, price, and check the fee payer's reserve and the fee against the reclaim. */
async function compileOwnerPays(chain: ChainAdapter, input: CompileInput, owner: TransactionSigner, deadline: number): Promise<CompiledPlan> {
  const parties = { owner, feePayer: owner };
  const v1 = input.transactionVersion === 1;
  const planned = await packTransactions(input.actions, parties, roomOf(input), v1 ? V1_FORMAT : undefined);
  const reserve = rentExemptMinimum(input.rent, 0);
  // Said from the fee bounds when the node refuses the fee payer: exactly how much is missing.
  const assertOwnerCanPayBounds = () =>
    assertOwnerCanPay(
      input.owner,
      input.ownerLamports,
      planned.map((_, i) => feeUpperBound(1, priorityShare(input.priorityFeeLamports, planned.length, i))),
      reserve,
    );
  // An owner that cannot pay even the base fees of every transaction (one with no lamports at all,
  // a wallet the sponsor is meant for, among them) gets the same answer without a simulation of
  // each transaction: a prepare needs no key, and a stranger's wallet of thousands of accounts must
  // not cost the operator a simulation per transaction only to be refused.
  if (input.ownerLamports < signatureFees(planned.length)) assertOwnerCanPayBounds();
  let transactions: CompiledTransaction[];
  try {
    transactions = await priceTransactions(chain, planned, parties, input, deadline, v1);
  } catch (error) {
    if (!(error instanceof CinderError) || !isFeePayerFailure(error)) throw error;
    assertOwnerCanPayBounds();
    throw error;
  }
  assertOwnerCanPay(input.owner, input.ownerLamports, transactions.map((t) => t.feeLamports), reserve);
  const plan = summarize(parties, transactions, input.lifetime);
  assertFeeWithinReclaim(plan.returnsLamports, plan.feeLamports, input.allowNetLoss);
  return plan;
}

/** A sponsor pays, and each transaction repays it its exact fee out of the owner's reclaimed rent. */
async function compileSponsored(
  chain: ChainAdapter,
  input: CompileInput,
  owner: TransactionSigner,
  sponsor: NonNullable<CompileInput['sponsor']>,
  deadline: number,
): Promise<CompiledPlan> {
  // The sponsor's policy first: a wallet it does not pay for now costs no simulation.
  await sponsor.policy.admit(input.owner);
  // Compiling needs no key: the sponsor only marks its signature's slot (its policy signs, later).
  const parties = { owner, feePayer: createNoopSigner(sponsor.policy.sponsor) };
  const planned = await packTransactions(input.actions, parties, roomOf(input));
  const reserve = rentExemptMinimum(input.rent, 0);
  const bounds = planned.map((_, i) => feeUpperBound(2, priorityShare(input.priorityFeeLamports, planned.length, i)));
  sponsor.policy.assertCanPayPlan(bounds, sponsor.lamports, reserve);
  const transactions = await priceTransactions(chain, planned, parties, input, deadline).catch((error: unknown) => {
    // The simulation includes the repayment: a failure here is usually an owner that cannot repay.
    if (error instanceof CinderError && error.code === 'TRANSACTION_REJECTED') throw cannotRepaySponsor();
    throw error;
  });
  sponsor.policy.assertRepaid(
    input.ownerLamports,
    transactions.map((t) => ({ returnsLamports: t.packed.returnsLamports, feeLamports: t.feeLamports })),
    reserve,
  );
  return summarize(parties, sponsorOnlyWhatTheOwnerCannotPay(input, transactions, reserve), input.lifetime);
}

/**
 * The contract's "the sponsor pays for as little as it must": only the shortest prefix the owner
 * cannot pay stays sponsored, the rest become owner-paid (the keyed door sends them, a keyless
 * caller relays them, once the prefix landed). Every transaction was priced with
 * two signatures and the repayment; without them its fee is one base fee less and its priority
 * share unchanged (the price pays the share exactly at any limit), so the simulated limit still fits.
 */
function sponsorOnlyWhatTheOwnerCannotPay(input: CompileInput, transactions: CompiledTransaction[], reserve: bigint): CompiledTransaction[] {
  const steps = transactions.map((t) => ({
    returnsLamports: t.packed.returnsLamports,
    sponsoredFeeLamports: t.feeLamports,
    ownerFeeLamports: t.feeLamports - BASE_FEE_LAMPORTS_PER_SIGNATURE,
  }));
  const split = splitSponsored(input.ownerLamports, steps, reserve);
  // No split: every transaction stays sponsored and lands one at a time, as each already repays its sponsor.
  if (split === null || split.sponsoredCount === 0) return transactions;
  return transactions.map((t, i) => (i < split.sponsoredCount ? t : { ...t, ownerPays: true, repayLamports: 0n, feeLamports: steps[i]!.ownerFeeLamports }));
}

/**
 * The codes of what stands in the way of a plan as it stands: the money rules, the chain state its
 * simulation found, the sponsor's policy. A preview shows such a problem; the other doors throw
 * it. Anything else compilePlan throws (the RPC or the sponsor unavailable) is no property of the
 * plan and is thrown to every door.
 */
const PLAN_PROBLEM_CODES: ReadonlySet<CinderErrorCode> = new Set<CinderErrorCode>([
  'INSUFFICIENT_SOL_FOR_FEE',
  'FEE_EXCEEDS_RECLAIM',
  'ACCOUNT_FROZEN',
  'MINT_PAUSED',
  'TRANSACTION_REJECTED',
  'PROGRAM_NOT_ALLOWED',
  'INVALID_PRIORITY_FEE',
  'SPONSOR_DECLINED',
  'SPONSORED_OPERATION_IN_PROGRESS',
]);

export const isPlanProblem = (error: unknown): error is CinderError => error instanceof CinderError && PLAN_PROBLEM_CODES.has(error.code);

/**
 * Prices the plan with the right fee payer and checks every money rule on the result. The owner
 * pays when it can; a sponsor pays only when the owner cannot (or `feePayer: 'sponsor'` asks).
 */
export async function compilePlan(chain: ChainAdapter, input: CompileInput, deadline: number): Promise<CompiledPlan> {
  // Compiling needs no key: the owner only marks the accounts that must sign (the keyed door signs later).
  const owner = createNoopSigner(input.owner);
  if (input.feePayer === 'sponsor') {
    if (!input.sponsor) throw noSponsorConfigured();
    return compileSponsored(chain, input, owner, input.sponsor, deadline);
  }
  try {
    return await compileOwnerPays(chain, input, owner, deadline);
  } catch (error) {
    if (input.feePayer === 'auto' && input.sponsor && error instanceof CinderError && isFeePayerFailure(error)) {
      return compileSponsored(chain, input, owner, input.sponsor, deadline);
    }
    throw error;
  }
}

/** The message of a compiled transaction, ready to sign (by the owner, and the sponsor when sponsored). */
export function compiledMessage(plan: CompiledPlan, transaction: CompiledTransaction) {
  const parties = transaction.ownerPays ? { owner: plan.parties.owner, feePayer: plan.parties.owner } : plan.parties;
  if (transaction.v1) return v1CompiledMessage(parties, plan.lifetime, { ...transaction, v1: transaction.v1 });
  const instructions = withComputeBudget(
    transaction.computeUnitLimit,
    transaction.computeUnitPriceMicroLamports,
    transactionInstructions(transaction.packed.actions, parties, transaction.repayLamports),
  );
  return transactionMessage(parties.feePayer, plan.lifetime, instructions);
}

/**
 * The landing order of a plan, written once for the keyed door (which sends in this order) and the
 * prepare answer (which tells a keyless caller): the sponsored prefix (src/plan/sponsoredPrefix.ts)
 * lands first, one at a time, each waiting for the one before it; the owner-paid rest waits for the
 * last sponsored one (its fees come from the rent the prefix returned) and then goes out together.
 */
export function landingOrderOf(plan: Pick<CompiledPlan, 'sponsored' | 'transactions'>): { sponsoredTransactions: number; dependsOn: number[][] } {
  const firstOwnerPaid = plan.transactions.findIndex((t) => t.ownerPays === true);
  const sponsoredTransactions = !plan.sponsored ? 0 : firstOwnerPaid < 0 ? plan.transactions.length : firstOwnerPaid;
  const dependsOn = plan.transactions.map((_, i) => {
    const before = i < sponsoredTransactions ? i - 1 : sponsoredTransactions - 1;
    return before >= 0 ? [before] : [];
  });
  return { sponsoredTransactions, dependsOn };
}
