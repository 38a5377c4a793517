/**
 * One reclaim across many wallets (docs/many-wallets.md): a different input to the stages of the
 * one-owner pipeline. Every owner is read (readWallets.ts) and planned with the single reclaim's
 * planner; priced by the one pricer (price.ts, with the steps below), summed by the one summary,
 * compiled by compileUnsigned, run under every owner's turn (ownerTurns.ts) and signed, landed and
 * reported by the one executor (execute.ts). What this module holds of its own is what only many
 * owners have: their closes packed together into shared transactions (src/plan/packOwners.ts:
 * version 0, or v1 where the cluster's gate is active and the signer takes it) that all pay out to
 * one `destination` and one fee payer pays; an owner left out when the node refuses its closes;
 * and the signing with the fee payer's and every owner's key. A preview stops after packing,
 * prepare hands back the unsigned transactions, a keyed reclaim signs and lands them.
 *
 * What cannot be closed (frozen, holding tokens of a mint not listed for burning, …) is skipped
 * with its reason by the planner and never blocks the other accounts or owners; nor does an owner
 * whose closes the node refuses at simulation (its accounts changed since they were read): that
 * owner is left out with the node's reason (`TRANSACTION_REJECTED`) and the others packed again.
 */
import { createNoopSigner, signTransaction, type Address, type KeyPairSigner, type Transaction } from '@solana/kit';
import type { BlockhashLifetime, ChainAdapter } from '../chain/types.ts';
import { describeTransactionError } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';
import { ACTIONS_THAT_SEND, planAccountActions, type AccountAction, type WalletState } from '../plan/actions.ts';
import { feeUpperBound, priorityShare } from '../plan/fees.ts';
import { assertFeeWithinReclaim, assertPayerCanPay } from '../plan/money.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from '../plan/pack.ts';
import { manyOwnerInstructions, manyOwnerMessage, manyOwnerV1Message, packOwners, type ManyOwnerTransaction, type ManyOwnerVersion } from '../plan/packOwners.ts';
import { chooseTransactionVersion, TRANSACTION_VERSIONS, type TransactionVersion, type V1Limits } from '../plan/transactionVersion.ts';
import { rememberedV1Gate, rememberV1GateFrom, V1_TRANSACTIONS_FEATURE } from '../chain/featureGate.ts';
import { v1PriceFrom, v1SimulationMessage } from './compileV1.ts';
import type { Price } from '../plan/pricing.ts';
import { computeUnitPriceFor, type PriorityFeeRequest } from '../plan/priorityFee.ts';
import { rentExemptMinimum } from '../plan/rent.ts';
import { mapConcurrently, SIMULATIONS_AT_ONCE } from '../plan/slices.ts';
import type { OperationLocks } from '../store/operationLocks.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';
import type { AutoPriorityFeeBounds } from './autoPriorityFee.ts';
import { manyPriorityFee } from './autoPriorityFeeMany.ts';
import { describeManyOutcome } from './describe.ts';
import { signLandReport } from './execute.ts';
import { inOwnerTurns } from './ownerTurns.ts';
import { compileUnsigned, priceFromSimulation, priceTransactions, totalsOf, type PriceSteps } from './price.ts';
import { landTransactions, overallStatus, type RecordSent } from './land.ts';
import { skippedOf, type ManyResult, type ManySkippedAccount, type ManyTransactionReport } from './operationResult.ts';

export type { ManyResult, ManySkippedAccount, ManyTransactionReport } from './operationResult.ts';
import { readWallets } from './readWallets.ts';
import { classifySimulationError } from './simulationFailure.ts';
import type { SponsorPolicy } from './sponsorPolicy.ts';
import { MAX_RELAY_TOKEN_MESSAGES } from './relayToken.ts';

/** A keyed reclaim's result, with the job's total priority fee asked for ("auto" resolved; what landed paid at most this). */
export type ManyResultWithFee = ManyResult & { priorityFeeLamports: bigint };

export interface ReclaimManyDeps {
  chain: ChainAdapter;
  sentTransactions: SentTransactionLog;
  operationDeadlineMs: number;
  /** Signing operations of one owner take turns (the single-owner doors take the same turns). */
  locks: Pick<OperationLocks, 'withLock'>;
  /** An owner with an outstanding sponsored operation does nothing else meanwhile. */
  sponsorPolicy: SponsorPolicy | null;
  /** Told the messages of each prepare answer: their relays count once (src/http/rateLimit.ts). */
  recordPrepared(messages: readonly Uint8Array[]): Promise<void>;
  /** The operator's bounds on what `priorityFee: "auto"` resolves to (src/operations/autoPriorityFeeMany.ts). */
  autoPriorityFee: AutoPriorityFeeBounds;
}

export interface ManyRequest {
  /** Distinct owners, in the order the caller gave them. */
  owners: readonly Address[];
  /** Mints whose balances are burned before the close (the native mint: unwrap wrapped SOL). */
  burn: readonly Address[];
  /** The job's total priority fee: lamports, or "auto" (resolved once per request: autoPriorityFeeMany.ts). */
  priorityFeeLamports: PriorityFeeRequest;
  allowNetLoss: boolean;
  /**
   * The transaction versions the signer takes. Default legacy and v0: a keyless signer, or a
   * preview for any signer; the keyed door, where Cinder signs, takes every version. v1 is used
   * only where the cluster's gate is active too (src/plan/transactionVersion.ts), else v0.
   */
  transactionVersions?: readonly TransactionVersion[];
}

export interface ManyJob extends ManyRequest {
  feePayer: Address;
  destination: Address;
  /**
   * Keyed: the owners whose key came as a 32-byte seed, with the field that gave it. A wallet
   * address pasted as a key is 32 bytes of base58 too, and reads as a seed of some other, empty,
   * wallet: such an owner is refused (naming every such field) rather than found to hold nothing.
   */
  seedKeys?: ReadonlyMap<Address, string>;
}

export interface OwnerPlan {
  state: WalletState;
  actions: AccountAction[];
  /** What this owner's closes pay to the destination. */
  returnsLamports: bigint;
}

/** A priced transaction of the job; `v1`: its limits, when the job is in v1 (src/operations/compileV1.ts). */
export type PricedManyTransaction = ManyOwnerTransaction & Price & { v1?: V1Limits };

export interface ManyPlan {
  owners: OwnerPlan[];
  transactions: PricedManyTransaction[];
  feeLamports: bigint;
  returnsLamports: bigint;
  netLamports: bigint;
  skippedAccounts: ManySkippedAccount[];
  /** The job's total priority fee, "auto" resolved: a prepare asking for this number plans the same fees. */
  priorityFeeLamports: bigint;
}



/**
 * The most transactions one prepare answers (its relay tokens cover them). Checked on the packing,
 * which is pure, before any simulation: a prepare needs no key, so its owners can be strangers'
 * wallets, and simulating a job only to refuse it for its size would let anyone spend the
 * operator's RPC for nothing.
 */
export const MAX_PREPARED_TRANSACTIONS = MAX_RELAY_TOKEN_MESSAGES;

/** What a signer that does not say takes: legacy and v0 (v1 only where it declares 1). */
const KEYLESS_VERSIONS: readonly TransactionVersion[] = ['legacy', 0];

/** Rounds of leaving out owners whose closes the node refuses, before the job gives up (a race in every round is no accident). */
const REJECTION_ROUNDS = 3;

/**
 * The pricer's steps for a many-owner transaction (src/operations/price.ts): its message simulated
 * for the fee payer at the largest limits and the price that pays its share (v0: compute-budget
 * instructions; v1: its config, as compileV1.ts reads it for one owner), priced for its signatures
 * (the fee payer's and each owner's). A failed simulation is the job's to read (the owner is left
 * out), not the pricer's. `lifetime` null: a preview, priced without simulation.
 */
function manyPriceSteps(
  feePayer: Address,
  destination: Address,
  lifetime: BlockhashLifetime | null,
  version: ManyOwnerVersion,
): PriceSteps<ManyOwnerTransaction, PricedManyTransaction> {
  const payer = createNoopSigner(feePayer);
  if (version === 1) {
    return {
      simulationMessage: (transaction, share) => v1SimulationMessage(payer, lifetime!, manyOwnerInstructions(transaction.actions, destination), share),
      price: (transaction, share, simulation) => ({ ...transaction, ...v1PriceFrom(transaction.computeUnitEstimate, share, simulation, transaction.signatures) }),
    };
  }
  return {
    simulationMessage: (transaction, share) =>
      manyOwnerMessage(payer, lifetime!, MAX_COMPUTE_UNIT_LIMIT, computeUnitPriceFor(share, MAX_COMPUTE_UNIT_LIMIT), transaction.actions, destination),
    price: (transaction, share, simulation) => ({ ...transaction, ...priceFromSimulation(transaction.computeUnitEstimate, share, simulation, transaction.signatures) }),
  };
}

/** The one summary (totalsOf) of the job's priced transactions; `rejected`: the accounts of owners left out because the node refused their closes. */
function summarize(owners: OwnerPlan[], transactions: PricedManyTransaction[], priorityFeeLamports: bigint, rejected: readonly ManySkippedAccount[] = []): ManyPlan {
  return {
    owners,
    priorityFeeLamports,
    transactions,
    ...totalsOf(transactions.flatMap((t) => t.actions.map((a) => a.action)), transactions),
    skippedAccounts: [...owners.flatMap((o) => skippedOf(o.actions).map((s) => ({ ...s, owner: o.state.owner }))), ...rejected],
  };
}

/** Sizes only: a fee payer and a destination that are none of the owners (each adds its 32-byte key, the fee payer a signature). */
const PLACEHOLDER_FEE_PAYER = '11111111111111111111111111111112' as Address;
const PLACEHOLDER_DESTINATION = '11111111111111111111111111111113' as Address;

function badField(field: string, message: string): CinderError {
  return new CinderError('VALIDATION_FAILED', { reason: 'item', field, problem: message }, { errors: [{ field, message }] });
}

const closedOf = (t: ManyOwnerTransaction) => t.actions.map((a) => a.action.account.address);

/** A many-owner prepare answer: the plan, and its transactions compiled unsigned for the fee payer and the owners to sign. */
export interface PreparedMany {
  /** The packed, priced plan of every owner's accounts. */
  plan: ManyPlan & { lifetime: BlockhashLifetime };
  /** Its transactions compiled, no signature set. */
  transactions: Transaction[];
}

/** A reclaim of many owners' accounts to one destination (docs/many-wallets.md): preview, prepare, or sign and land. */
export interface ReclaimMany {
  /**
   * POST /api/reclaim_rent/preview: every owner's accounts and what a reclaim of all of them would
   * return, packed for a placeholder fee payer and destination, nothing simulated.
   */
  preview(request: ManyRequest): Promise<ManyPlan>;
  /** POST /api/reclaim_rent/prepare with owners: the unsigned transactions; their messages are recorded for the relay's rate limit. */
  prepare(job: ManyJob): Promise<PreparedMany>;
  /** POST /api/reclaim_rent with userPrivateKeys: plan, sign with every key, land, holding every owner's operation lock; `recordSent` runs right before the first send. */
  execute(
    job: ManyJob,
    keys: { feePayer: KeyPairSigner; owners: ReadonlyMap<Address, KeyPairSigner> },
    options: { deadline: number; recordSent?: RecordSent },
  ): Promise<ManyResultWithFee>;
}

export function createReclaimMany(deps: ReclaimManyDeps): ReclaimMany {
  const { chain } = deps;

  /**
   * Read and plan every owner; pack their closes for this fee payer and destination, in the job's
   * version: v1 where the signer takes it and the cluster's gate is active, else v0. The gate's
   * account, until it is known (read once per process), is read in the owners' batch read, so that
   * it costs no call of its own.
   */
  async function planOwners(request: ManyRequest, feePayer: Address, destination: Address, alsoRead: readonly Address[], deadline: number) {
    const signerVersions = request.transactionVersions ?? KEYLESS_VERSIONS;
    const gateKnown = signerVersions.includes(1) ? rememberedV1Gate(chain) : Promise.resolve(false);
    const readGate = gateKnown === undefined;
    const { states, also } = await readWallets(chain, request.owners, readGate ? [...alsoRead, V1_TRANSACTIONS_FEATURE] : alsoRead, deadline);
    const v1GateActive = readGate ? rememberV1GateFrom(chain, also.get(V1_TRANSACTIONS_FEATURE)) : await gateKnown;
    const version: ManyOwnerVersion = chooseTransactionVersion({ v1GateActive, signerVersions, fallback: 0 }) === 1 ? 1 : 0;
    const burnMints = new Set(request.burn);
    const owners = await Promise.all(
      states.map(async (state): Promise<OwnerPlan> => {
        const actions = await planAccountActions(state, { burnMints, withdrawExcess: false });
        const sent = actions.filter((a) => ACTIONS_THAT_SEND.has(a.action));
        return { state, actions, returnsLamports: sent.reduce((sum, a) => sum + a.returnsLamports, 0n) };
      }),
    );
    const packed = await packOwners(
      owners.map((o) => ({ owner: o.state.owner, actions: o.actions })),
      feePayer,
      destination,
      version,
    );
    return { owners, packed, also, rent: states[0]?.rent, version };
  }

  /** The fee payer must hold every fee and keep a valid balance (the rent-exempt minimum, or exactly 0): the one payer check (plan/money.ts). */
  const assertFeePayerCanPay = (feePayer: Address, balance: bigint, fees: readonly bigint[], reserve: bigint) =>
    assertPayerCanPay(feePayer, balance, fees, reserve, 'feePayer');

  /**
   * Read → plan → pack → (count: at most `maxTransactions`) → simulate each transaction (for its
   * compute limit, and for the node to check it) → price → money rules on the whole job. Throws
   * what stands in the way, and what the packing alone decides (size, the fee payer's balance
   * against the fee bounds) before the first simulation.
   */
  async function plan(job: ManyJob, deadline: number, maxTransactions = Infinity): Promise<ManyPlan & { lifetime: BlockhashLifetime }> {
    const ownerSet = new Set(job.owners);
    if (ownerSet.has(job.destination)) {
      throw badField(
        'destination',
        'is one of the owners: the rent goes to one address outside the wallets being emptied (so that what arrives there is exactly the rent, and a wrong paste is caught)',
      );
    }
    const [{ owners, packed, also, rent, version }, lifetime] = await Promise.all([
      planOwners(job, job.feePayer, job.destination, [job.feePayer, job.destination], deadline),
      chain.getLatestBlockhash(deadline),
    ]);
    // As the single-owner doors (pipeline.ts): a seed that opens a wallet with no SOL and no
    // account is, in practice, an address pasted as a key.
    const addresses = owners.filter((o) => job.seedKeys?.has(o.state.owner) && o.state.ownerLamports === 0n && o.state.accounts.length === 0);
    if (addresses.length > 0) {
      const message = 'looks like a wallet address, not a private key: read as a 32-byte seed it opens a wallet with no SOL and no token accounts; send the 64-byte secret key';
      const fields = addresses.map((o) => job.seedKeys!.get(o.state.owner)!);
      throw new CinderError('INVALID_PRIVATE_KEY', { reason: 'keys', fields, problem: message }, { errors: fields.map((field) => ({ field, message })) });
    }
    const closed = new Set(packed.flatMap(closedOf));
    if (closed.has(job.destination)) throw badField('destination', 'is one of the token accounts being closed');
    if (packed.length > maxTransactions) {
      throw new CinderError(
        'VALIDATION_FAILED',
        { reason: 'tooManyTransactions', transactions: packed.length, max: maxTransactions },
        { errors: [{ field: 'owners', message: `needs ${packed.length} transactions, more than ${maxTransactions}` }] },
      );
    }
    if (packed.length === 0) {
      const skipped = summarize(owners, [], 0n).skippedAccounts;
      throw new CinderError('NOTHING_TO_RECLAIM', { reason: 'owners', owners: job.owners.length, skipped });
    }
    const reserve = rentExemptMinimum(rent!, 0);
    const feePayerLamports = also.get(job.feePayer)?.lamports ?? 0n;
    const steps = manyPriceSteps(job.feePayer, job.destination, lifetime, version);
    const feeFor = await manyPriorityFee(
      chain,
      { fee: job.priorityFeeLamports, payers: [job.feePayer, job.destination], packed, allowNetLoss: job.allowNetLoss },
      deps.autoPriorityFee,
      deadline,
    );
    // Owners whose closes the node refuses (they changed since they were read) are left out with
    // their reason, and the others packed again: one wallet never blocks the rest of the job.
    const rejected: ManySkippedAccount[] = [];
    let remaining = owners;
    let current = packed;
    for (let round = 1; ; round++) {
      const priorityFeeLamports = feeFor(current);
      const shares = current.map((_, i) => priorityShare(priorityFeeLamports, current.length, i));
      // Said from the fee bounds before any simulation: a fee payer that cannot pay costs no RPC call more.
      assertFeePayerCanPay(job.feePayer, feePayerLamports, current.map((t, i) => feeUpperBound(t.signatures, shares[i]!)), reserve);
      const { priced: transactions, failed } = await priceTransactions(chain, current, { priorityFeeLamports }, steps, deadline);
      if (failed.length === 0) {
        const result = summarize(owners, transactions, priorityFeeLamports, rejected);
        assertFeePayerCanPay(job.feePayer, feePayerLamports, transactions.map((t) => t.feeLamports), reserve);
        assertFeeWithinReclaim(result.returnsLamports, result.feeLamports, job.allowNetLoss);
        return { ...result, lifetime };
      }
      for (const { transaction, share, err } of failed) {
        if (classifySimulationError(err) === 'fee-payer') assertFeePayerCanPay(job.feePayer, 0n, [feeUpperBound(transaction.signatures, share)], reserve);
      }
      // Which owners of the refused transactions the node refuses on their own.
      const suspects = remaining.filter((o) => failed.some((f) => f.transaction.owners.includes(o.state.owner)));
      const alone = await mapConcurrently(suspects, SIMULATIONS_AT_ONCE, async (suspect) => {
        const own = await packOwners([{ owner: suspect.state.owner, actions: suspect.actions }], job.feePayer, job.destination, version);
        return (await priceTransactions(chain, own, { priorityFeeLamports: 0n }, steps, deadline)).failed[0]?.err ?? null;
      });
      const culprits = suspects.flatMap((suspect, i) => (alone[i] === null ? [] : [{ suspect, err: alone[i] }]));
      if (culprits.length === 0 || round === REJECTION_ROUNDS) {
        const first = failed[0]!;
        throw new CinderError('TRANSACTION_REJECTED', { reason: 'owners', owners: first.transaction.owners, error: describeTransactionError(first.err) });
      }
      for (const { suspect, err } of culprits) {
        const owner = suspect.state.owner;
        const why = `Closing the accounts of ${owner} would fail on chain (${describeTransactionError(err)}): they changed since they were read, so none of that owner's accounts is in this reclaim; preview again`;
        for (const a of suspect.actions) {
          if (ACTIONS_THAT_SEND.has(a.action)) rejected.push({ address: a.account.address, code: 'TRANSACTION_REJECTED', reason: why, owner });
        }
      }
      remaining = remaining.filter((o) => !culprits.some((c) => c.suspect === o));
      current = await packOwners(
        remaining.map((o) => ({ owner: o.state.owner, actions: o.actions })),
        job.feePayer,
        job.destination,
        version,
      );
      if (current.length === 0) {
        throw new CinderError('TRANSACTION_REJECTED', { reason: 'accounts', skipped: rejected });
      }
    }
  }

  /** The compiled, unsigned transactions of a plan (fee payer first, then the owners, as signers). */
  function compile(job: ManyJob, manyPlan: ManyPlan & { lifetime: BlockhashLifetime }): Promise<Transaction[]> {
    const feePayer = createNoopSigner(job.feePayer);
    return compileUnsigned(manyPlan.transactions, (t) =>
      t.v1
        ? manyOwnerV1Message(feePayer, manyPlan.lifetime, t.v1, t.actions, job.destination)
        : manyOwnerMessage(feePayer, manyPlan.lifetime, t.computeUnitLimit, t.computeUnitPriceMicroLamports, t.actions, job.destination),
    );
  }

  return {
    /**
     * POST /api/reclaim_rent/preview: every owner's accounts and what a reclaim of all of them would
     * return, its transactions packed for a fee payer and a destination outside the owners. Fees are
     * those of the signatures and the whole priority fee (exact: see compile.ts), nothing simulated.
     */
    async preview(request: ManyRequest): Promise<ManyPlan> {
      const deadline = Date.now() + deps.operationDeadlineMs;
      const { owners, packed, version } = await planOwners(request, PLACEHOLDER_FEE_PAYER, PLACEHOLDER_DESTINATION, [], deadline);
      const steps = manyPriceSteps(PLACEHOLDER_FEE_PAYER, PLACEHOLDER_DESTINATION, null, version);
      // No fee payer nor destination yet: "auto" reads the recent fees of the accounts that close.
      const feeFor = await manyPriorityFee(chain, { fee: request.priorityFeeLamports, payers: [], packed, allowNetLoss: request.allowNetLoss }, deps.autoPriorityFee, deadline);
      const priorityFeeLamports = feeFor(packed);
      const { priced } = await priceTransactions(chain, packed, { priorityFeeLamports, simulated: 0 }, steps, deadline);
      return summarize(owners, priced, priorityFeeLamports);
    },

    /** POST /api/reclaim_rent/prepare with owners: the unsigned transactions, for the fee payer and the owners to sign. */
    async prepare(job: ManyJob): Promise<PreparedMany> {
      const manyPlan = await plan(job, Date.now() + deps.operationDeadlineMs, MAX_PREPARED_TRANSACTIONS);
      const transactions = await compile(job, manyPlan);
      await deps.recordPrepared(transactions.map((t) => new Uint8Array(t.messageBytes)));
      return { plan: manyPlan, transactions };
    },

    /**
     * POST /api/reclaim_rent with userPrivateKeys: plan, sign with every key, land. The owners'
     * turns are held from the plan to the landing; `recordSent` (idempotency) runs right before.
     */
    async execute(
      job: ManyJob,
      keys: { feePayer: KeyPairSigner; owners: ReadonlyMap<Address, KeyPairSigner> },
      options: { deadline: number; recordSent?: RecordSent },
    ): Promise<ManyResultWithFee> {
      const { deadline } = options;
      // The turns of every owner, the same turns the one-owner doors take (ownerTurns.ts).
      const turns = { deadline, busyCode: 'RECLAIM_IN_PROGRESS', nameOwner: true, keepWhile: (result: ManyResultWithFee) => result.status === 'pending' } as const;
      return inOwnerTurns(deps.locks, job.owners, turns, async (holdForLanding) => {
          // An outstanding sponsored operation of an owner would fail if this closed its accounts first.
          if (deps.sponsorPolicy) for (const owner of job.owners) await deps.sponsorPolicy.assertNoTurn(owner);
          // Cinder signs here: every version the cluster takes.
          const manyPlan = await plan({ ...job, transactionVersions: job.transactionVersions ?? TRANSACTION_VERSIONS }, deadline);
          const unsigned = await compile(job, manyPlan);
          const reports = await signLandReport(
            manyPlan.transactions.map((t, i) => ({ ...t, closedAccounts: closedOf(t), unsigned: unsigned[i]! })),
            manyPlan.lifetime.lastValidBlockHeight,
            {
              sign: (t) => signTransaction([keys.feePayer.keyPair, ...t.owners.filter((o) => o !== job.feePayer).map((o) => keys.owners.get(o)!.keyPair)], t.unsigned),
              send: (sending) =>
                landTransactions(deps, sending, deadline, async (signatures, lastValidBlockHeight) => {
                  await holdForLanding();
                  await options.recordSent?.(signatures, lastValidBlockHeight);
                }),
              feeCounts: (report) => report.paidFee,
            },
          );
          const transactions = manyPlan.transactions.map((t, i): ManyTransactionReport => ({ ...reports[i]!, owners: t.owners }));
          // What landed, counted by the one summary: the rent of the closes that landed, every fee the fee payer paid.
          const landed = manyPlan.transactions.filter((_, i) => transactions[i]!.status === 'success');
          const { returnsLamports: reclaimedLamports, feeLamports, netLamports } = totalsOf(landed.flatMap((t) => t.actions.map((a) => a.action)), transactions);
          const result = {
            status: overallStatus(transactions.map((t) => t.status)),
            signatures: transactions.map((t) => t.signature),
            feePayer: job.feePayer,
            destination: job.destination,
            transactions,
            reclaimedLamports,
            feeLamports,
            netLamports,
            skippedAccounts: manyPlan.skippedAccounts,
            priorityFeeLamports: manyPlan.priorityFeeLamports,
          };
          return { ...result, message: describeManyOutcome(result, job.owners.length) };
      });
    },
  };
}
