/**
 * The relay (POST /api/transactions): transactions signed elsewhere (Phantom, a Ledger, the
 * `solana` CLI, @solana/kit), checked and handed to the shared landing engine. Nothing is sent
 * unless every transaction of the request passes every check:
 *
 * Steps 1 to 4 are static, in src/operations/relayCandidates.ts.
 *
 * 1. it decodes (kit's transaction and compiled-message decoders) to exactly the bytes given;
 * 2. what a browser wallet added is only what wallets add (src/plan/walletAdditions.ts: known
 *    Lighthouse assertions, one Memo, a compute budget; docs/wallet-additions.md), and every other
 *    instruction belongs to Compute Budget, System, SPL Token, Token-2022 or Associated Token and
 *    (unless RELAY_ANY_TRANSACTION) is one that Cinder itself prepares (src/plan/relayRules.ts):
 *    the relay is no free transaction service for transfers, spam or a drainer's signed message;
 * 3. every signature is present and verifies against its signer's public key (WebCrypto), except
 *    the fee sponsor's, which the relay adds itself, and only to a message that a relay token
 *    proves this service prepared (src/operations/relayToken.ts) and that the sponsor's policy
 *    would pay for (src/operations/sponsorPolicy.ts: Cinder's own instructions, its fee within the
 *    bound and repaid in full, the compute budget read as the runtime reads it);
 * 4. no two transactions of the request take from the same token account, and none carries a
 *    wallet's guard that another transaction of the request can break (an exact, upper-bound or
 *    not-equal comparison on an account the other writes): standard JSON-RPC simulates each
 *    transaction on today's state only (no bundle simulation), so these static rules are what keep
 *    a request's transactions from failing one another after all passed;
 * 5. the owner's signed sponsored messages start the wallet's sponsored turn here (a prepare nobody
 *    signed starts none: "No lockout"); while a wallet's turn is in flight, a transaction it signed
 *    or one writing a token account of those messages is 409 naming them, so that none of the
 *    wallet's transactions can make a sponsored one fail at the sponsor's cost;
 * 6. a simulation of the signed transaction (signatures and blockhash checked) succeeds, and the
 *    programs it invokes at any depth (its inner instructions) are all on the allow-list.
 *
 * Sponsored transactions land one at a time per wallet, as the policy decides; the others land
 * together. Idempotent by signature: a transaction the chain already knows is reported, not
 * simulated; identical requests in flight in this process share one landing, and the tracker under
 * landTransactions shares one landing loop per signature (rebroadcasting identical bytes can never
 * act twice: the signature is the transaction's identity).
 */
import { getBase64EncodedWireTransaction, getSignatureFromTransaction, type Address, type Signature, type Transaction } from '@solana/kit';
import type { ChainAdapter } from '../chain/types.ts';
import { readVerdicts, reportOf } from '../chain/verdicts.ts';
import { describeTransactionError } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';
import { innerProgramNotAllowed, writableStaticAccounts } from '../plan/relayRules.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';
import { landTransactions, overallStatus, type LandingOutcome, type OperationStatus, type SignedForSending } from './land.ts';
import { allowedProgramNames, assertGuardsHold, assertNoOverlap, assertSigned, decodeCandidate, field, refuse, type Candidate } from './relayCandidates.ts';
import { checkRelayTokenIdentities, readRelayToken } from './relayToken.ts';
import { classifySimulationError, feePayerCannotPay } from './simulationFailure.ts';
import { reportSponsoredLanding, sponsoredInFlight, type SponsoredOutcome, type SponsorPolicy } from './sponsorPolicy.ts';

/** At most this many transactions per request (16 KiB of body holds 8 full-size ones in base64). */
export const MAX_RELAY_TRANSACTIONS = 8;

/**
 * A relayed transaction carries its blockhash, not the last block height at which it can land.
 * The blockhash is valid for 150 blocks after its own (MAX_PROCESSING_AGE), and its block is at
 * most as high as the chain now; the blockhash may come from a processed block, which can run
 * ahead of the confirmed height read here, so a margin is added. Too high only delays an "expired"
 * verdict; too low could declare a transaction dead while it can still land.
 */
const BLOCKHASH_VALIDITY_BLOCKS = 150n;
const PROCESSED_AHEAD_MARGIN_BLOCKS = 32n;

export interface RelayDeps {
  chain: ChainAdapter;
  sentTransactions: SentTransactionLog;
  /** The sponsor's rules and its one signing point (null without a sponsor): what it pays for, outstanding sponsored messages, one send at a time. */
  sponsorPolicy: SponsorPolicy | null;
  /** SERVER_SECRET: the key of relay tokens. Without it no token is valid, so the sponsor signs nothing. */
  serverSecret: string | undefined;
  burnDeadlineMs: number;
  /** RELAY_ANY_TRANSACTION: any instruction of the allowed programs, not only what Cinder prepares. */
  relayAnyTransaction: boolean;
}

export interface RelayRequest {
  /** Base64 wire transactions. */
  transactions: readonly string[];
  relayToken?: string | undefined;
}

export interface RelayedTransactionReport {
  signature: Signature;
  status: OperationStatus;
  slot: bigint | null;
  /** The fee sponsor paid the fee (and was repaid in the same transaction). */
  sponsored: boolean;
  /** The fee of the message as signed (signatures and the priority fee of the compute budget the wallet left), in lamports. */
  feeLamports: bigint;
  /** What the wallet added to what Cinder prepared: Lighthouse safety checks and a Memo. */
  walletAdded: { safetyChecks: number; memo: boolean };
  error: string | null;
}

export interface RelayResult {
  status: OperationStatus;
  message: string;
  signatures: Signature[];
  slot: bigint | null;
  transactions: RelayedTransactionReport[];
}

const reportFields = (c: Candidate) => ({
  sponsored: c.sponsored,
  feeLamports: c.paid?.feeLamports ?? c.feeLamports,
  walletAdded: { safetyChecks: c.additions.lighthouse, memo: c.additions.memo },
});

function relayTokenInvalid(detail: string): CinderError {
  return new CinderError('RELAY_TOKEN_INVALID', { reason: 'token', problem: detail }, { errors: [{ field: 'relayToken', message: detail }] });
}

/** The node's reading of a signed transaction (simulationFailure.ts), worded for the relay's request fields. */
function simulationRefusal(candidate: Candidate, err: unknown): CinderError {
  switch (classifySimulationError(err)) {
    case 'fee-payer':
      if (candidate.sponsored) {
        return new CinderError('SPONSOR_UNAVAILABLE', { reason: 'cannotPay' }, {
          headers: { 'retry-after': '30' },
        });
      }
      return feePayerCannotPay(candidate.message.staticAccounts[0]!, field(candidate.index));
    case 'blockhash-expired':
      return refuse('TRANSACTION_REJECTED', candidate.index, 'has a blockhash that expired (or that this node does not know): prepare and sign it again');
    case 'bad-signature':
      return refuse('TRANSACTION_NOT_SIGNED', candidate.index, 'has a signature that does not verify');
    default:
      return refuse('TRANSACTION_REJECTED', candidate.index, `would fail on chain (${describeTransactionError(err)})`);
  }
}

function describeRelay(reports: readonly RelayedTransactionReport[], status: OperationStatus): string {
  const n = reports.length;
  const noun = `${n} transaction${n === 1 ? '' : 's'}`;
  if (status === 'success') return `Relayed ${noun}; ${n === 1 ? 'it' : 'all'} landed.`;
  const failed = reports.filter((r) => r.status === 'failed');
  if (failed.length > 0) {
    return `Relayed ${noun}; ${failed.length} failed: ${failed.map((r) => `${r.signature} (${r.error})`).join(', ')}.`;
  }
  const pending = reports.filter((r) => r.status === 'pending').length;
  return (
    `Relayed ${noun}; ${pending} ${pending === 1 ? 'has' : 'have'} not been confirmed yet and may still land. ` +
    'Check GET /api/transactions/{signature}; do not sign a new transaction for the same accounts before it expires (about a minute).'
  );
}

export function createRelay(deps: RelayDeps): Relay {
  const { chain, sponsorPolicy: policy } = deps;
  const sponsorAddress = policy?.sponsor ?? null;
  /** Relays in flight, by their signatures: an identical request joins the running one. */
  const inFlight = new Map<string, Promise<RelayResult>>();

  /** A transaction the chain knows, as a landing outcome (null: unknown to it). */
  async function knownOutcome(signature: Signature, deadline: number): Promise<LandingOutcome | null> {
    const [verdict] = await readVerdicts(chain, [signature], deadline);
    if (verdict!.kind === 'unknown') return null;
    return verdict!.kind === 'processed' ? { kind: 'unknown' } : verdict!;
  }

  /**
   * While a wallet's own signed sponsored messages are in flight, its other transactions wait (409
   * naming them): one signed by the wallet, or one writing a token account of those messages, could
   * make them fail at the sponsor's cost. The messages of that very turn go on.
   */
  async function assertNotInFlight(candidate: Candidate): Promise<void> {
    const signers = candidate.message.staticAccounts.slice(0, candidate.message.header.numSignerAccounts).filter((s) => s !== sponsorAddress);
    for (const signer of new Set(signers)) {
      const turn = await policy!.turnOf(signer);
      if (turn && !turn.messages.includes(candidate.identity)) {
        throw sponsoredInFlight(turn, `${field(candidate.index)} is signed by ${signer}, a wallet whose sponsored operation`);
      }
    }
    const [conflict] = await policy!.conflicts(writableStaticAccounts(candidate.message), candidate.sponsored ? candidate.identity : null);
    if (conflict) {
      throw sponsoredInFlight(conflict.turn, `${field(candidate.index)} writes token account ${conflict.account} of a sponsored operation of ${conflict.turn.owner}, which`);
    }
  }

  /**
   * The sponsor co-signs through its policy (sponsorPolicy.cosign), which checks each message again
   * as it signs. A guard requiring a balance of the sponsor (a lamports lower bound on it) holds
   * only while the sponsor's balance, less the fees of this request's sponsored transactions and
   * of those in flight, stays at or above the floor (docs/wallet-additions.md): the balance is read
   * once per request, and only when such a guard is there.
   */
  async function cosignAll(candidates: readonly Candidate[], sponsored: readonly Candidate[], deadline: number): Promise<Transaction[]> {
    const floored = sponsored.some((c) => c.paid!.sponsorFloor !== null);
    const floor = floored
      ? { sponsorLamports: await chain.getBalance(sponsorAddress!, deadline), requestFeesLamports: sponsored.reduce((sum, c) => sum + c.paid!.feeLamports, 0n) }
      : undefined;
    const signed: Transaction[] = [];
    for (const c of candidates) signed.push(c.sponsored ? (await policy!.cosign(c.transaction, { index: c.index, ...(floor ? { floor } : {}) })).transaction : c.transaction);
    return signed;
  }

  async function land(candidates: readonly Candidate[], transactions: readonly Transaction[], deadline: number, group: string): Promise<RelayResult> {
    const signatures = transactions.map((t) => getSignatureFromTransaction(t));
    const verdicts = await readVerdicts(chain, signatures, deadline);
    // A transaction the chain already knows is reported, when its verdict is final.
    const reports: (RelayedTransactionReport | null)[] = signatures.map((signature, i) => {
      const verdict = verdicts[i]!;
      if (verdict.kind !== 'landed') return null;
      const { status, slot, error } = reportOf(verdict);
      return { signature, status, slot, ...reportFields(candidates[i]!), error };
    });

    // Only what the chain does not know yet starts a turn, is checked against the sponsored messages
    // in flight and simulated: a known signature was already checked by the chain itself.
    const unknown = candidates.filter((_, i) => verdicts[i]!.kind === 'unknown');
    // The sponsored ones of each wallet, by the owner who signed them and repays the sponsor.
    const byOwner = new Map<Address, Candidate[]>();
    for (const c of unknown.filter((c) => c.sponsored)) byOwner.set(c.paid!.owner, [...(byOwner.get(c.paid!.owner) ?? []), c]);
    /** The messages this request added to a wallet's turn: given back when this request sends none of them. */
    const begun = new Map<Address, string[]>();
    const abandon = async (owner: Address) => {
      const added = begun.get(owner);
      begun.delete(owner);
      if (added && added.length > 0) await policy!.abandon(owner, added);
    };
    const toLand = candidates.filter((_, i) => reports[i] === null);
    const wires = transactions.map((t) => getBase64EncodedWireTransaction(t));
    try {
      if (policy) {
        // The owner signed these sponsored messages: its turn starts here (a prepare nobody signed starts none).
        for (const [owner, ownerCandidates] of byOwner) {
          begun.set(
            owner,
            await policy.beginTurn(
              owner,
              group,
              ownerCandidates.map((c) => ({ identity: c.identity, signature: signatures[c.index]! })),
              ownerCandidates.flatMap((c) => c.consumed),
            ),
          );
        }
        for (const candidate of unknown) await assertNotInFlight(candidate);
      }
      const simulations = await Promise.all(unknown.map((c) => chain.simulate(wires[c.index]!, deadline, { signed: true })));
      unknown.forEach((candidate, j) => {
        const simulation = simulations[j]!;
        // Inner calls count: a program allowed at the top level may invoke others (a transfer hook).
        const invoked = innerProgramNotAllowed(simulation.innerPrograms);
        if (invoked) throw refuse('PROGRAM_NOT_ALLOWED', candidate.index, `invokes ${invoked}; only ${allowedProgramNames()} may run, at any depth`);
        // AlreadyProcessed: it landed between the status read and the simulation; the tracker reports it.
        if (simulation.err && simulation.err !== 'AlreadyProcessed') throw simulationRefusal(candidate, simulation.err);
      });
      if (toLand.length === 0) for (const owner of [...begun.keys()]) await abandon(owner);
    } catch (error) {
      // Refused before anything was sent: this request holds no turn.
      for (const owner of [...begun.keys()]) await abandon(owner);
      throw error;
    }

    if (toLand.length > 0) {
      const lastValidBlockHeight = (await chain.getBlockHeight(deadline)) + BLOCKHASH_VALIDITY_BLOCKS + PROCESSED_AHEAD_MARGIN_BLOCKS;
      const sendable = (c: Candidate): SignedForSending => ({ wire: wires[c.index]!, signature: signatures[c.index]!, lastValidBlockHeight });
      const plain = toLand.filter((c) => !c.sponsored);
      // The sponsored ones of each wallet go one at a time, as the sponsor's policy decides.
      const sponsoredGroups = new Map<Address, Candidate[]>();
      for (const c of toLand.filter((c) => c.sponsored)) sponsoredGroups.set(c.paid!.owner, [...(sponsoredGroups.get(c.paid!.owner) ?? []), c]);
      const [plainOutcomes, ...sponsoredOutcomes] = await Promise.all([
        plain.length > 0 ? landTransactions(deps, plain.map(sendable), deadline) : Promise.resolve([]),
        ...[...sponsoredGroups].map(([owner, ownerCandidates]) =>
          policy!
            .land(
              owner,
              ownerCandidates.map((c) => ({ ...sendable(c), index: c.index, identity: c.identity, feeLamports: c.paid!.feeLamports })),
              {
                deadline,
                send: async (item, until) => (await landTransactions(deps, [item], until))[0]!,
                known: (item) => knownOutcome(item.signature, deadline),
              },
            )
            .catch(async (error: unknown) => {
              // The policy throws only when it sent none of them.
              await abandon(owner);
              throw error;
            }),
        ),
      ]);
      const landed: [Candidate, SponsoredOutcome][] = [
        ...plain.map((c, j): [Candidate, SponsoredOutcome] => [c, plainOutcomes![j]!]),
        ...[...sponsoredGroups.values()].flatMap((ownerCandidates, g) => ownerCandidates.map((c, j): [Candidate, SponsoredOutcome] => [c, sponsoredOutcomes[g]![j]!])),
      ];
      for (const [candidate, outcome] of landed) {
        const report = reportSponsoredLanding(outcome);
        reports[candidate.index] = { signature: signatures[candidate.index]!, status: report.status, slot: report.slot, ...reportFields(candidate), error: report.error };
      }
    }

    const done = reports as RelayedTransactionReport[];
    const status = overallStatus(done.map((r) => r.status));
    const slots = done.map((r) => r.slot).filter((s): s is bigint => s !== null);
    return {
      status,
      message: describeRelay(done, status),
      signatures,
      slot: slots.length > 0 ? slots.reduce((a, b) => (a > b ? a : b)) : null,
      transactions: done,
    };
  }

  return async function relay(request: RelayRequest): Promise<RelayResult> {
    const deadline = Date.now() + deps.burnDeadlineMs;
    if (request.transactions.length === 0 || request.transactions.length > MAX_RELAY_TRANSACTIONS) {
      throw new CinderError('VALIDATION_FAILED', { reason: 'relayCount', max: MAX_RELAY_TRANSACTIONS }, {
        errors: [{ field: 'transactions', message: `must hold 1 to ${MAX_RELAY_TRANSACTIONS} transactions` }],
      });
    }
    // A relay token also proves which unsponsored messages this service prepared: a reclaim of many
    // wallets closes to one destination, which the relay lands only for such messages (relayRules.ts).
    // Expired still counts here: such a message can no longer land, but one that did is reported.
    const { relayToken } = request;
    const preparedHere = (identity: string) =>
      relayToken !== undefined && deps.serverSecret !== undefined && checkRelayTokenIdentities(deps.serverSecret, relayToken, [identity]) !== 'invalid';
    const candidates = request.transactions.map((wire, i) => decodeCandidate(wire, i, sponsorAddress, deps.relayAnyTransaction, preparedHere));
    for (const candidate of candidates) await assertSigned(candidate, sponsorAddress);

    // The sponsor signs only messages this service prepared (relay token) and its policy would pay for.
    const sponsored = candidates.filter((c) => c.sponsored);
    let tokenExpired = false;
    if (sponsored.length > 0) {
      if (!request.relayToken) {
        throw relayTokenInvalid(
          `The fee payer of ${sponsored.map((c) => field(c.index)).join(', ')} is this service's fee sponsor, which signs only transactions this service prepared: send the relayToken of the prepare answer.`,
        );
      }
      const check = deps.serverSecret
        ? checkRelayTokenIdentities(deps.serverSecret, request.relayToken, sponsored.map((c) => c.identity))
        : 'invalid';
      if (check === 'invalid') {
        throw relayTokenInvalid('relayToken was not issued by this service for these exact transactions, so the fee sponsor does not sign them.');
      }
      tokenExpired = check === 'expired';
      for (const candidate of sponsored) candidate.paid = policy!.paysFor(candidate.index, candidate.message);
    }
    assertNoOverlap(candidates);
    assertGuardsHold(candidates);
    const transactions = sponsored.length > 0 ? await cosignAll(candidates, sponsored, deadline) : candidates.map((c) => c.transaction);

    if (tokenExpired) {
      // An expired token still proves the message is ours, so its (deterministic) signature is the
      // one a relay in time would have sent: report it if the chain knows it, never send it anew.
      const verdicts = await readVerdicts(chain, sponsored.map((c) => getSignatureFromTransaction(transactions[c.index]!)), deadline);
      if (verdicts.some((v) => v.kind === 'unknown')) {
        throw relayTokenInvalid('relayToken has expired (so has the blockhash of its transactions): prepare and sign them again.');
      }
    }

    const key = transactions.map((t) => getSignatureFromTransaction(t)).join(',');
    const running = inFlight.get(key);
    if (running) return running;
    // The operation the sponsored messages belong to: one prepare answer (its token), whose other messages join the turn.
    const group = sponsored.length > 0 && deps.serverSecret ? `token:${readRelayToken(deps.serverSecret, request.relayToken!)!.id}` : '';
    const landing = land(candidates, transactions, deadline, group).finally(() => inFlight.delete(key));
    inFlight.set(key, landing);
    return landing;
  };
}

/** Lands transactions a wallet signed (POST /api/transactions): co-signs sponsored ones its policy pays for, sends, reports each. */
export interface Relay {
  /** Checks, co-signs where sponsored, lands and reports the request's transactions; an identical request in flight joins it. */
  (request: RelayRequest): Promise<RelayResult>;
}
