/**
 * One pipeline, three doors (docs/architecture.md): read the wallet → plan each account's action → compile
 * (pack, price, money rules) → sign → land. A burn of one mint and a whole-wallet reclaim differ
 * only in what is read and planned; a preview stops after compile, prepare hands back the unsigned
 * bytes, a keyed operation signs and lands.
 */
import {
  compileTransaction,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  signTransactionMessageWithSigners,
  type Address,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import type { ChainAdapter } from '../chain/types.ts';
import { CinderError } from '../errors.ts';
import type { MintState } from '../plan/tokenState.ts';
import { ACTIONS_THAT_SEND, planAccountActions, type AccountAction, type WalletState } from '../plan/actions.ts';
import type { Sponsor } from '../keys/sponsor.ts';
import type { OperationLocks } from '../store/operationLocks.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';
import { compiledMessage, compilePlan, isPlanProblem, type CompiledPlan } from './compile.ts';
import { describeOutcome } from './describe.ts';
import { landTransactions, overallStatus, type RecordSent } from './land.ts';
import { reportSponsoredLanding, type SponsoredOutcome, type SponsorPolicy } from './sponsorPolicy.ts';
import { readWallet } from './readWallet.ts';
import { mapConcurrently, mapInSlices } from '../plan/slices.ts';
import { formatSol } from '../plan/priorityFee.ts';
import { netOf } from '../plan/net.ts';
import { MAX_RELAY_TOKEN_MESSAGES, RELAY_TOKEN_LIFETIME_MS } from './relayToken.ts';
import { preparedIdentityOfBytes } from '../plan/messageIdentity.ts';
import { chooseTransactionVersion, TRANSACTION_VERSIONS, type TransactionVersion } from '../plan/transactionVersion.ts';
import { isV1GateActive } from '../chain/featureGate.ts';
import { reasonText, skippedOf, type Door, type OperationResult, type TransactionReport } from './operationResult.ts';

// The result's names, also exported from here for the routes that run the pipeline.
export type { Door, OperationResult, SkippedAccount, TransactionReport } from './operationResult.ts';
export { reasonText, skippedOf };

export interface PipelineDeps {
  chain: ChainAdapter;
  sentTransactions: SentTransactionLog;
  operationDeadlineMs: number;
  sponsor: Sponsor | null;
  /** Whether, and for what, the sponsor pays (src/operations/sponsorPolicy.ts); null without a sponsor. */
  sponsorPolicy: SponsorPolicy | null;
  /** The embedded local chain is in use (messages say so where it matters). */
  localChain: boolean;
  /** Signing operations of one owner take turns (src/store/operationLocks.ts). */
  turns: Pick<OperationLocks, 'takeTurn'>;
  /** Told the messages of each prepare answer before it goes out: their relays count once (src/http/rateLimit.ts). */
  recordPrepared(messages: readonly Uint8Array[]): Promise<void>;
}

export interface PipelineRequest {
  owner: Address;
  door: Door;
  priorityFeeLamports: bigint;
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
  if (request.door.kind === 'burn') return ['legacy', 0];
  return request.transactionVersions ?? (request.signer === 'wallet' ? ['legacy', 0] : TRANSACTION_VERSIONS);
}

export interface PlannedOperation {
  request: PipelineRequest;
  state: WalletState;
  actions: AccountAction[];
  /** null: nothing to send (a preview still answers). */
  plan: CompiledPlan | null;
  /** Why the plan cannot be carried out as it stands (a preview shows it; the keyed doors throw it). */
  problem: CinderError | null;
  mint: MintState | null;
}

function nothingToDo(request: PipelineRequest, actions: AccountAction[]): CinderError {
  const skipped = skippedOf(actions);
  if (request.door.kind === 'burn') {
    if (actions.length === 0) {
      return new CinderError('NO_TOKEN_ACCOUNT', `${request.owner} has no token account of mint ${request.door.mint}. Nothing was sent.`);
    }
    // Every account of the mint is blocked: the first reason is the answer's code, all are listed.
    return new CinderError(skipped[0]!.code, `${reasonText(skipped)}. Nothing was sent.`, {
      extensions: { accounts: skipped.map((s) => s.address), skippedAccounts: skipped },
    });
  }
  const asked = [
    'no empty token account to close',
    ...(request.door.burn.length > 0 ? ['no account of the listed mints to burn'] : []),
    ...(request.door.withdrawExcess ? ['no excess rent to withdraw'] : []),
  ];
  return new CinderError(
    'NOTHING_TO_RECLAIM',
    `${request.owner} has nothing to reclaim: ${asked.join(', ')}.${skipped.length > 0 ? ` Skipped: ${reasonText(skipped)}.` : ''} Nothing was sent.`,
    { extensions: { skippedAccounts: skipped } },
  );
}

/** The token accounts a plan's transactions write. */
const planAccounts = (plan: CompiledPlan): Address[] => plan.transactions.flatMap((t) => t.planned.actions.map((a) => a.account.address));

/** Transactions compiled (or signed) in one turn of the event loop at most. */
const COMPILES_PER_SLICE = 8;

/**
 * A sponsored prepare's relay token covers at most MAX_RELAY_TOKEN_MESSAGES messages (the token
 * names each one). A wallet that needs more cannot be sponsored in one go; with a little SOL of its
 * own it pays its fees and needs no sponsor.
 */
function tooLargeToSponsor(plan: CompiledPlan): CinderError {
  const accounts = plan.transactions.reduce((sum, t) => sum + t.planned.actions.length, 0);
  return new CinderError(
    'SPONSORED_OPERATION_TOO_LARGE',
    `A sponsored operation holds at most ${MAX_RELAY_TOKEN_MESSAGES} transactions; this one needs ${plan.transactions.length} (${accounts.toLocaleString('en-US')} accounts). ` +
      `Send the wallet ${formatSol(plan.feeLamports)} SOL or more for its fees and prepare again with feePayer "owner": the wallet pays its own fees and gets the whole rent back.`,
    { errors: [{ field: 'feePayer', message: `sponsored operations hold at most ${MAX_RELAY_TOKEN_MESSAGES} transactions` }] },
  );
}

/** A prepare answer: the plan, its unsigned transactions compiled for a wallet to sign, and the relay token's expiry when sponsored. */
export interface PreparedOperation extends PlannedOperation {
  /** Never null here: a plan with a problem is thrown, not prepared. */
  plan: CompiledPlan;
  /** The plan's transactions compiled, unsigned (the owner's and, when sponsored, the sponsor's signature slots empty). */
  transactions: Transaction[];
  /** The same transactions as base64 wire bytes, as the answer carries them. */
  wireTransactions: Base64EncodedWireTransaction[];
  /** When the relay token of a sponsored plan expires (ms since the epoch); null when the owner pays. */
  relayTokenExpiresAt: number | null;
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
    const { door } = request;
    const alsoRead = deps.sponsor ? [deps.sponsor.signer.address] : [];
    const [{ state, also }, lifetime] = await Promise.all([
      readWallet(chain, { owner: request.owner, mint: door.kind === 'burn' ? door.mint : undefined, alsoRead, localChain: deps.localChain }, deadline),
      chain.getLatestBlockhash(deadline),
    ]);
    if (request.keyIsSeed && state.ownerLamports === 0n && state.accounts.length === 0) {
      throw new CinderError(
        'INVALID_PRIVATE_KEY',
        `userPrivateKey looks like a wallet address, not a private key: read as a 32-byte seed it signs for ${request.owner}, ` +
          'a wallet with no SOL and no token accounts. Send the 64-byte secret key (Phantom: Export Private Key) instead.',
        { errors: [{ field: 'userPrivateKey', message: 'this is a wallet address, not a private key' }] },
      );
    }
    const burnMints = new Set(door.kind === 'burn' ? [door.mint] : door.burn);
    const actions = await planAccountActions(state, { burnMints, withdrawExcess: door.kind === 'reclaim' && door.withdrawExcess });
    const mint = door.kind === 'burn' ? state.mints.get(door.mint)! : null;
    const base = { request, state, actions, mint };
    if (!actions.some((a) => ACTIONS_THAT_SEND.has(a.action))) return { ...base, plan: null, problem: nothingToDo(request, actions) };

    const sponsorAccount = deps.sponsor ? also.get(deps.sponsor.signer.address) : null;
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
          priorityFeeLamports: request.priorityFeeLamports,
          allowNetLoss: request.allowNetLoss,
          lifetime,
          feePayer: request.feePayer,
          ...(request.signer ? { signer: request.signer } : {}),
          estimate,
          transactionVersion,
          sponsor:
            deps.sponsor && deps.sponsorPolicy
              ? { signer: deps.sponsor.signer, lamports: sponsorAccount?.lamports ?? 0n, policy: deps.sponsorPolicy }
              : null,
        },
        deadline,
      );
      return { ...base, plan, problem: null };
    } catch (error) {
      // A problem of the plan (money rules, chain state, the sponsor's policy): a preview shows it, the other doors throw it.
      if (isPlanProblem(error)) return { ...base, plan: null, problem: error };
      throw error;
    }
  }

  /** Plans, and throws what stands in the way: the keyed and prepare doors only go on with a plan that can land. */
  async function planOrThrow(request: PipelineRequest, deadline: number): Promise<PlannedOperation & { plan: CompiledPlan }> {
    const planned = await planOperation(request, deadline);
    if (planned.problem || !planned.plan) throw planned.problem!;
    return planned as PlannedOperation & { plan: CompiledPlan };
  }

  async function executeInTurn(
    request: PipelineRequest,
    signer: KeyPairSigner,
    deadline: number,
    recordSent: RecordSent | undefined,
  ): Promise<OperationResult & { mint: MintState | null }> {
    const planned = await planOrThrow({ ...request, owner: signer.address }, deadline);
    const plan: CompiledPlan = { ...planned.plan, parties: { owner: signer, feePayer: planned.plan.sponsored ? deps.sponsor!.signer : signer } };
    const signed = await mapConcurrently(plan.transactions, COMPILES_PER_SLICE, (t) => signTransactionMessageWithSigners(compiledMessage(plan, t)));
    const sending = signed.map((transaction) => ({
      wire: getBase64EncodedWireTransaction(transaction),
      signature: getSignatureFromTransaction(transaction),
      lastValidBlockHeight: plan.lifetime.lastValidBlockHeight,
    }));
    const policy = deps.sponsorPolicy;
    let outcomes: SponsoredOutcome[];
    if (plan.sponsored && policy) {
      // Signed with the owner's key: the wallet's sponsored turn starts now, and its sends go one at a time (the policy decides).
      const identities = signed.map((t) => preparedIdentityOfBytes(t.messageBytes)!);
      const added = await policy.beginTurn(
        signer.address,
        `keyed:${sending[0]!.signature}`,
        sending.map((t, i) => ({ identity: identities[i]!, signature: t.signature })),
        planAccounts(plan),
      );
      try {
        await recordSent?.(sending.map((t) => t.signature), plan.lifetime.lastValidBlockHeight);
        outcomes = await policy.land(
          signer.address,
          sending.map((t, i) => ({ ...t, index: i, identity: identities[i]!, feeLamports: plan.transactions[i]!.feeLamports })),
          {
            deadline,
            send: async (item, until) => (await landTransactions(deps, [item], until))[0]!,
            known: async () => null,
          },
        );
      } catch (error) {
        // Nothing was sent (the policy throws only then): the turn is given back.
        await policy.abandon(signer.address, added);
        throw error;
      }
    } else {
      // The wallet's own signed sponsored messages in flight would fail if this closed their accounts first.
      await policy?.assertNoTurn(signer.address);
      outcomes = await landTransactions(deps, sending, deadline, recordSent);
    }

    const reports = outcomes.map(reportSponsoredLanding);
    const transactions: TransactionReport[] = plan.transactions.map((t, i) => ({
      signature: getSignatureFromTransaction(signed[i]!),
      status: reports[i]!.status,
      slot: reports[i]!.slot,
      closedAccounts: t.planned.actions.filter((a) => a.action !== 'withdraw_excess').map((a) => a.account.address),
      computeUnitLimit: t.computeUnitLimit,
      computeUnitPriceMicroLamports: t.computeUnitPriceMicroLamports,
      // A sponsored transaction that fails on chain is paid by the sponsor and not repaid.
      feeLamports: reports[i]!.paidFee && (reports[i]!.status === 'success' || !plan.sponsored) ? t.feeLamports : 0n,
      error: reports[i]!.error,
    }));
    const landed = plan.transactions.filter((_, i) => reports[i]!.status === 'success');
    const landedActions = landed.flatMap((t) => t.planned.actions);
    const burned = new Map<Address, { mint: Address; amount: bigint; decimals: number }>();
    for (const entry of landed.flatMap((t) => t.planned.burned)) {
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
    return { ...result, message: describeOutcome(result, request.door, planned.mint), mint: planned.mint };
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
      if (planned.plan.sponsored && planned.plan.transactions.length > MAX_RELAY_TOKEN_MESSAGES) throw tooLargeToSponsor(planned.plan);
      // A few at a time (a millisecond each): a wallet of thousands of accounts is a hundred messages.
      const transactions = await mapInSlices(planned.plan.transactions, (t) => compileTransaction(compiledMessage(planned.plan, t)), COMPILES_PER_SLICE);
      await deps.recordPrepared(transactions.map((t) => new Uint8Array(t.messageBytes)));
      // Sponsored: a relay token, whose lifetime is its own. Nothing is reserved: a prepare nobody
      // signed starts no turn and blocks nobody; the owner's signed relay starts it (src/operations/relay.ts).
      const relayTokenExpiresAt = planned.plan.sponsored && deps.sponsorPolicy ? Date.now() + RELAY_TOKEN_LIFETIME_MS : null;
      return { ...planned, transactions, wireTransactions: transactions.map(getBase64EncodedWireTransaction), relayTokenExpiresAt };
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
      const { door } = request;
      // The one lock of a signing operation: one operation per owner at a time, in this process and
      // across instances, whatever the door: a burn and a reclaim of one wallet planned side by side
      // would both close the same accounts, and the second transaction could only fail after
      // charging its fee. A duplicate of the running operation (the same burn, or a second reclaim)
      // joins it and gets its answer. A turn that ends `pending` is kept while what it sent can
      // still land (src/store/operationLocks.ts).
      return deps.turns.takeTurn(
        `owner:${signer.address}`,
        (turn) =>
          executeInTurn(request, signer, deadline, async (signatures, lastValidBlockHeight) => {
            await turn.holdForLanding();
            await options.recordSent?.(signatures, lastValidBlockHeight);
          }),
        {
          joinAs: door.kind === 'burn' ? `burn:${door.mint}` : 'reclaim',
          busyCode: door.kind === 'burn' ? 'BURN_IN_PROGRESS' : 'RECLAIM_IN_PROGRESS',
          busyDetail:
            'Another burn or reclaim of this wallet is running, or sent transactions that may still land (for up to about a minute). Nothing was sent by this request; retry shortly.',
          // Half of what is left: the other half is for this operation's own work.
          maxWaitMs: Math.max(0, Math.floor((deadline - Date.now()) / 2)),
          keepWhile: (result) => result.status === 'pending',
        },
      );
    },
  };
}
