/**
 * One pipeline, three doors (docs/architecture.md): read the wallet → plan each account's action → compile
 * (pack, price, money rules) → sign → land. A burn of one mint and a whole-wallet reclaim differ
 * only in what is read and planned; a preview stops after compile, prepare hands back the unsigned
 * bytes, a keyed operation signs and lands.
 */
import {
  compileTransaction,
  getBase64EncodedWireTransaction,
  partiallySignTransaction,
  signTransactionMessageWithSigners,
  type Address,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import type { ChainAdapter } from '../chain/types.ts';
import { CinderError, type BlockedAccountsCode } from '../errors.ts';
import type { MintState } from '../plan/tokenState.ts';
import { ACTIONS_THAT_SEND, planAccountActions, type AccountAction, type WalletState } from '../plan/actions.ts';
import type { OperationLocks } from '../store/operationLocks.ts';
import { inOwnerTurns } from './ownerTurns.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';
import { compiledMessage, compilePlan, isPlanProblem, landingOrderOf, type CompiledPlan } from './compile.ts';
import { describeOutcome } from './describe.ts';
import { landTransactions, overallStatus, type RecordSent } from './land.ts';
import type { SponsorPolicy } from './sponsorPolicy.ts';
import { readWallet } from './readWallet.ts';
import { compileUnsigned } from './price.ts';
import { signLandReport } from './execute.ts';
import { netOf } from '../plan/net.ts';
import { assertFitsOneRelayToken } from './sponsoredMessage.ts';
import { preparedIdentityOfBytes } from '../plan/messageIdentity.ts';
import { reasonText, skippedOf, type OperationKind, type OperationResult } from './operationResult.ts';
import { chooseTransactionVersion, TRANSACTION_VERSIONS, type TransactionVersion } from '../plan/transactionVersion.ts';
import { isV1GateActive } from '../chain/featureGate.ts';
import type { PriorityFeeRequest } from '../plan/priorityFee.ts';
import { resolvePriorityFee, type AutoPriorityFeeBounds } from './autoPriorityFee.ts';

// The result's names, also exported from here for the routes that run the pipeline.
export type { OperationKind, OperationResult, SkippedAccount, TransactionReport } from './operationResult.ts';
export { reasonText, skippedOf };

export interface PipelineDeps {
  chain: ChainAdapter;
  sentTransactions: SentTransactionLog;
  operationDeadlineMs: number;
  /** Whether, and for what, the sponsor pays, and its one signing point (src/operations/sponsorPolicy.ts); null without a sponsor. */
  sponsorPolicy: SponsorPolicy | null;
  /** The embedded local chain is in use (messages say so where it matters). */
  localChain: boolean;
  /** Signing operations of one owner take turns (src/store/operationLocks.ts). */
  locks: Pick<OperationLocks, 'withLock'>;
  /** Told the messages of each prepare answer before it goes out: their relays count once (src/http/rateLimit.ts). */
  recordPrepared(messages: readonly Uint8Array[]): Promise<void>;
  /** The operator's bounds on what `priorityFee: "auto"` resolves to (src/operations/autoPriorityFee.ts). */
  autoPriorityFee: AutoPriorityFeeBounds;
}

export interface PipelineRequest {
  owner: Address;
  operation: OperationKind;
  /** The job's total priority fee, or 'auto': resolved from the cluster's recent fees before pricing. */
  priorityFeeLamports: PriorityFeeRequest;
  allowNetLoss: boolean;
  /** 'auto' (keyed operations and previews): the sponsor pays only when the owner cannot. */
  feePayer: 'owner' | 'sponsor' | 'auto';
  /** 'wallet': a browser wallet signs and adds its guards, so each transaction leaves them room (src/operations/compile.ts). */
  signer?: 'key' | 'wallet';
  /**
   * The key was given as 32 bytes: a seed, or a wallet address pasted by mistake. The pasted value
   * itself is never looked up on chain (were it a real seed, that would hand it to the RPC
   * provider); an address pasted as a key shows as a key whose own wallet has nothing at all.
   */
  keyIsSeed?: boolean;
  /**
   * The transaction versions the signer takes. Default: where Cinder signs a reclaim (the keyed
   * door, and its preview) every version; a browser wallet, or a keyless prepare, only legacy and
   * v0 unless it declares 1. v1 is used only where the cluster's gate is active too. A burn stays
   * legacy: one mint's accounts fit one legacy transaction in nearly every wallet, and the burn's
   * contract states its ComputeBudget instructions.
   */
  transactionVersions?: readonly TransactionVersion[];
}

/** The versions a request's signer takes when it does not say (see PipelineRequest.transactionVersions). */
function signerVersionsOf(request: PipelineRequest): readonly TransactionVersion[] {
  if (request.operation.kind === 'burn') return ['legacy', 0];
  return request.transactionVersions ?? (request.signer === 'wallet' ? ['legacy', 0] : TRANSACTION_VERSIONS);
}

export interface PlannedOperation {
  request: PipelineRequest;
  state: WalletState;
  actions: AccountAction[];
  /** null: nothing to send (a preview still answers). */
  compiled: CompiledPlan | null;
  /** Why the plan cannot be carried out as it stands (a preview shows it; the keyed doors throw it). */
  problem: CinderError | null;
  mint: MintState | null;
  /** The job's total priority fee in lamports: the caller's, or what "auto" resolved to (the preview states it). */
  priorityFeeLamports: bigint;
}

function nothingToDo(request: PipelineRequest, actions: AccountAction[]): CinderError {
  const skipped = skippedOf(actions);
  if (request.operation.kind === 'burn') {
    if (actions.length === 0) return new CinderError('NO_TOKEN_ACCOUNT', { reason: 'none', owner: request.owner, mint: request.operation.mint });
    // Every account of the mint is blocked: the first reason is the answer's code, all are listed.
    // A burn's accounts are all of its one mint, which readWallet proved is a mint, so none is
    // skipped for MINT_NOT_FOUND (the one skip code without a blocked-accounts situation).
    return new CinderError(skipped[0]!.code as BlockedAccountsCode, { reason: 'blocked', skipped });
  }
  const { burn, withdrawExcess } = request.operation;
  return new CinderError('NOTHING_TO_RECLAIM', { reason: 'owner', owner: request.owner, burnListed: burn.length > 0, withdrawExcess, skipped });
}

/** The token accounts a plan's transactions write. */
const planAccounts = (plan: CompiledPlan): Address[] => plan.transactions.flatMap((t) => t.packed.actions.map((a) => a.account.address));

/** A prepare answer: the plan, its unsigned transactions compiled for a wallet to sign, and the relay token's expiry when sponsored. */
export interface PreparedOperation extends PlannedOperation {
  /** Never null here: a plan with a problem is thrown, not prepared. */
  compiled: CompiledPlan;
  /** The plan's transactions compiled, unsigned (the owner's and, when sponsored, the sponsor's signature slots empty). */
  transactions: Transaction[];
  /** The same transactions as base64 wire bytes, as the answer carries them. */
  wireTransactions: Base64EncodedWireTransaction[];
  /** Sponsored: the messages its relay token covers (the sponsored ones, src/operations/relayToken.ts); null when the owner pays. */
  relayTokenMessages: Uint8Array[] | null;
}

/** The one-owner pipeline's three ends: stop after compile (preview), hand back unsigned bytes (prepare), or sign and land (execute). */
export interface Pipeline {
  /** GET /api/reclaim_rent: what a reclaim with these options would do, nothing signed. */
  preview(request: PipelineRequest): Promise<PlannedOperation>;
  /** POST …/prepare: the unsigned transactions of the same plan, for a wallet to sign; their messages are recorded for the relay's rate limit. */
  prepare(request: PipelineRequest): Promise<PreparedOperation>;
  /**
   * POST /api/burn_tokens, POST /api/reclaim_rent: plan, sign with the owner's key (and the
   * sponsor's), land, under the owner's operation lock. `recordSent` is told the signatures right
   * before the first is sent; when it throws, nothing is sent.
   */
  execute(
    request: PipelineRequest,
    signer: KeyPairSigner,
    options?: { recordSent?: RecordSent; deadline?: number },
  ): Promise<OperationResult & { mint: MintState | null }>;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { chain } = deps;

  /**
   * Read → plan → compile. Never throws for a money rule: the problem is returned, for the preview
   * to show. `estimate`: a preview, which simulates only some transactions (compile.ts).
   */
  async function planOperation(request: PipelineRequest, deadline: number, estimate = false): Promise<PlannedOperation> {
    const { operation } = request;
    const sponsor = deps.sponsorPolicy?.sponsor;
    const alsoRead = sponsor ? [sponsor] : [];
    const [{ state, also }, lifetime] = await Promise.all([
      readWallet(chain, { owner: request.owner, mint: operation.kind === 'burn' ? operation.mint : undefined, alsoRead, localChain: deps.localChain }, deadline),
      chain.getLatestBlockhash(deadline),
    ]);
    if (request.keyIsSeed && state.ownerLamports === 0n && state.accounts.length === 0) {
      throw new CinderError('INVALID_PRIVATE_KEY', { reason: 'walletAddress', owner: request.owner }, {
        errors: [{ field: 'userPrivateKey', message: 'this is a wallet address, not a private key' }],
      });
    }
    const burnMints = new Set(operation.kind === 'burn' ? [operation.mint] : operation.burn);
    const actions = await planAccountActions(state, { burnMints, withdrawExcess: operation.kind === 'reclaim' && operation.withdrawExcess });
    const mint = operation.kind === 'burn' ? state.mints.get(operation.mint)! : null;
    if (!actions.some((a) => ACTIONS_THAT_SEND.has(a.action))) {
      const priorityFeeLamports = request.priorityFeeLamports === 'auto' ? 0n : request.priorityFeeLamports;
      return { request, state, actions, mint, priorityFeeLamports, compiled: null, problem: nothingToDo(request, actions) };
    }
    const priorityFeeLamports = await resolvePriorityFee(
      chain,
      {
        fee: request.priorityFeeLamports,
        owner: request.owner,
        feePayer: request.feePayer,
        allowNetLoss: request.allowNetLoss,
        state,
        actions,
        sponsor: deps.sponsorPolicy ? { address: deps.sponsorPolicy.sponsor, maxFeeLamports: deps.sponsorPolicy.maxFeeLamports } : null,
      },
      deps.autoPriorityFee,
      deadline,
    );
    const base = { request, state, actions, mint, priorityFeeLamports };

    const sponsorAccount = sponsor ? also.get(sponsor) : null;
    // The gate is read (once per process) only for a signer that takes v1.
    const signerVersions = signerVersionsOf(request);
    const v1GateActive = signerVersions.includes(1) && (await isV1GateActive(chain, deadline));
    const transactionVersion = chooseTransactionVersion({ v1GateActive, signerVersions, fallback: 'legacy' });
    try {
      const plan = await compilePlan(
        chain,
        {
          owner: request.owner,
          ownerLamports: state.ownerLamports,
          actions,
          rent: state.rent,
          priorityFeeLamports,
          allowNetLoss: request.allowNetLoss,
          lifetime,
          feePayer: request.feePayer,
          ...(request.signer ? { signer: request.signer } : {}),
          estimate,
          transactionVersion,
          sponsor: deps.sponsorPolicy ? { lamports: sponsorAccount?.lamports ?? 0n, policy: deps.sponsorPolicy } : null,
        },
        deadline,
      );
      return { ...base, compiled: plan, problem: null };
    } catch (error) {
      // A problem of the plan (money rules, chain state, the sponsor's policy): a preview shows it, the other doors throw it.
      if (isPlanProblem(error)) return { ...base, compiled: null, problem: error };
      throw error;
    }
  }

  /** Plans, and throws what stands in the way: the keyed and prepare doors only go on with a plan that can land. */
  async function planOrThrow(request: PipelineRequest, deadline: number): Promise<PlannedOperation & { compiled: CompiledPlan }> {
    const planned = await planOperation(request, deadline);
    if (planned.problem || !planned.compiled) throw planned.problem!;
    return planned as PlannedOperation & { compiled: CompiledPlan };
  }

  async function executeInTurn(
    request: PipelineRequest,
    signer: KeyPairSigner,
    deadline: number,
    recordSent: RecordSent | undefined,
  ): Promise<OperationResult & { mint: MintState | null }> {
    const planned = await planOrThrow({ ...request, owner: signer.address }, deadline);
    const policy = deps.sponsorPolicy;
    const sponsoredBy = planned.compiled.sponsored ? policy : null;
    const plan: CompiledPlan = { ...planned.compiled, parties: { owner: signer, feePayer: sponsoredBy ? planned.compiled.parties.feePayer : signer } };
    const transactions = await signLandReport(
      plan.transactions.map((t) => ({ ...t, closedAccounts: t.packed.actions.filter((a) => a.action !== 'withdraw_excess').map((a) => a.account.address) })),
      plan.lifetime.lastValidBlockHeight,
      {
        // The owner's key signs here; the sponsor's only in its policy, which checks each message as it signs.
        sign: async (t, i) => {
          if (!sponsoredBy || t.ownerPays) return signTransactionMessageWithSigners(compiledMessage(plan, t));
          const ownerSigned = await partiallySignTransaction([signer.keyPair], compileTransaction(compiledMessage(plan, t)));
          return (await sponsoredBy.cosign(ownerSigned, { index: i })).transaction;
        },
        send: async (sending, signed) => {
          if (!sponsoredBy) {
            // The wallet's own signed sponsored messages in flight would fail if this closed their accounts first.
            await policy?.assertNoTurn(signer.address);
            return landTransactions(deps, sending, deadline, recordSent);
          }
          // Only the sponsored prefix is the sponsor's: the owner-paid rest waits for it (landingOrderOf).
          const sponsoredCount = landingOrderOf(plan).sponsoredTransactions;
          // Signed with the owner's key: the wallet's sponsored turn starts now, and its sends go one at a time (the policy decides).
          const identities = signed.slice(0, sponsoredCount).map((t) => preparedIdentityOfBytes(t.messageBytes)!);
          const added = await sponsoredBy.beginTurn(
            signer.address,
            `keyed:${sending[0]!.signature}`,
            sending.slice(0, sponsoredCount).map((t, i) => ({ identity: identities[i]!, signature: t.signature })),
            planAccounts(plan),
          );
          let landedPrefix;
          try {
            await recordSent?.(sending.map((t) => t.signature), plan.lifetime.lastValidBlockHeight);
            landedPrefix = await sponsoredBy.land(
              signer.address,
              sending.slice(0, sponsoredCount).map((t, i) => ({ ...t, index: i, identity: identities[i]!, feeLamports: plan.transactions[i]!.feeLamports })),
              { deadline, send: async (item, until) => (await landTransactions(deps, [item], until))[0]!, known: async () => null },
            );
          } catch (error) {
            // Nothing was sent (the policy throws only then): the turn is given back.
            await sponsoredBy.abandon(signer.address, added);
            throw error;
          }
          const rest = sending.slice(sponsoredCount);
          if (rest.length === 0) return landedPrefix;
          // The owner pays the rest from the rent the prefix returned: sent only once every sponsored one
          // landed successfully, then all together (each is payable in any landing order).
          const prefixLanded = landedPrefix.every((o) => o.kind === 'landed' && !o.err);
          if (!prefixLanded) return [...landedPrefix, ...rest.map(() => ({ kind: 'withheld' as const, reason: 'the sponsored transaction that pays for it did not land' }))];
          return [...landedPrefix, ...(await landTransactions(deps, rest, deadline))];
        },
        // A sponsored transaction that fails on chain is paid by the sponsor and not repaid; an owner-paid one costs the owner.
        feeCounts: (report, i) => report.paidFee && (report.status === 'success' || !plan.sponsored || plan.transactions[i]!.ownerPays === true),
      },
    );
    const landed = plan.transactions.filter((_, i) => transactions[i]!.status === 'success');
    const landedActions = landed.flatMap((t) => t.packed.actions);
    const burned = new Map<Address, { mint: Address; amount: bigint; decimals: number }>();
    for (const entry of landed.flatMap((t) => t.packed.burned)) {
      const sum = burned.get(entry.mint);
      burned.set(entry.mint, sum ? { ...sum, amount: sum.amount + entry.amount } : entry);
    }
    const net = netOf(
      landedActions,
      transactions.reduce((s, t) => s + t.feeLamports, 0n),
    );
    const slots = transactions.map((t) => t.slot).filter((s): s is bigint => s !== null);
    const result: Omit<OperationResult, 'message'> = {
      status: overallStatus(transactions.map((t) => t.status)),
      owner: signer.address,
      signatures: transactions.map((t) => t.signature),
      slot: slots.length > 0 ? slots.reduce((a, b) => (a > b ? a : b)) : null,
      sponsored: plan.sponsored,
      transactions,
      closedAccounts: landedActions.filter((a) => a.action !== 'withdraw_excess').map((a) => a.account.address),
      burned: [...burned.values()],
      ...net,
      skippedAccounts: skippedOf(planned.actions),
    };
    // Plain data only: the operation locks hand this result to waiters on other instances as JSON.
    return { ...result, message: describeOutcome(result, request.operation, planned.mint), mint: planned.mint };
  }

  return {
    /** GET /api/reclaim_rent: what a reclaim with these options would do, nothing signed. */
    async preview(request: PipelineRequest): Promise<PlannedOperation> {
      return planOperation(request, Date.now() + deps.operationDeadlineMs, true);
    },

    /** POST …/prepare: the unsigned transactions of the same plan, for a wallet to sign. */
    async prepare(request: PipelineRequest): Promise<PreparedOperation> {
      // A keyless signer takes v1 only when it says so.
      const planned = await planOrThrow({ ...request, transactionVersions: request.transactionVersions ?? ['legacy', 0] }, Date.now() + deps.operationDeadlineMs);
      if (planned.compiled.sponsored) assertFitsOneRelayToken(planned.compiled.transactions, planned.compiled.feeLamports);
      // A few at a time (a millisecond each): a wallet of thousands of accounts is a hundred messages.
      const transactions = await compileUnsigned(planned.compiled.transactions, (t) => compiledMessage(planned.compiled, t));
      // What is handed out for the sponsor to pay passes every check its signature will need at the relay.
      if (planned.compiled.sponsored && deps.sponsorPolicy) {
        for (const [index, transaction] of transactions.entries()) {
          if (!planned.compiled.transactions[index]!.ownerPays) await deps.sponsorPolicy.check(transaction, { index });
        }
      }
      await deps.recordPrepared(transactions.map((t) => new Uint8Array(t.messageBytes)));
      // Sponsored: a relay token for the sponsored messages, whose lifetime is its own. Nothing is
      // reserved: a prepare nobody signed starts no turn and blocks nobody; the owner's signed relay
      // starts it (src/operations/relay.ts).
      const relayTokenMessages =
        planned.compiled.sponsored && deps.sponsorPolicy
          ? transactions.filter((_, i) => !planned.compiled.transactions[i]!.ownerPays).map((t) => new Uint8Array(t.messageBytes))
          : null;
      return { ...planned, transactions, wireTransactions: transactions.map(getBase64EncodedWireTransaction), relayTokenMessages };
    },

    /**
     * POST /api/burn_tokens, POST /api/reclaim_rent: plan, sign with the owner's key (and the
     * sponsor's), land. `recordSent` is told the signatures right before the first is sent (the
     * caller records them, e.g. for an Idempotency-Key); when it throws, nothing is sent.
     */
    async execute(
      request: PipelineRequest,
      signer: KeyPairSigner,
      options: { recordSent?: RecordSent; deadline?: number } = {},
    ): Promise<OperationResult & { mint: MintState | null }> {
      const deadline = options.deadline ?? Date.now() + deps.operationDeadlineMs;
      const { operation } = request;
      // The one lock of a signing operation: one operation per owner at a time, in this process and
      // across instances, whatever the door: a burn and a reclaim of one wallet planned side by side
      // would both close the same accounts, and the second transaction could only fail after
      // charging its fee. A duplicate of the running operation (the same burn, or a second reclaim)
      // joins it and gets its answer. A turn that ends `pending` is kept while what it sent can
      // still land (src/store/operationLocks.ts).
      return inOwnerTurns(
        deps.locks,
        [signer.address],
        {
          deadline,
          joinAs: operation.kind === 'burn' ? `burn:${operation.mint}` : 'reclaim',
          busyCode: operation.kind === 'burn' ? 'BURN_IN_PROGRESS' : 'RECLAIM_IN_PROGRESS',
          keepWhile: (result) => result.status === 'pending',
        },
        (holdForLanding) =>
          executeInTurn(request, signer, deadline, async (signatures, lastValidBlockHeight) => {
            await holdForLanding();
            await options.recordSent?.(signatures, lastValidBlockHeight);
          }),
      );
    },
  };
}
