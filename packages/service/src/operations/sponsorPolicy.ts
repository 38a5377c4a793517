/**
 * The fee sponsor's policy, in one place (docs/architecture.md, "The sponsor's policy, in one place"). Prepare,
 * the keyed doors and the relay ask it; they never decide about the sponsor's money themselves.
 * Its rules on a plan or a signed message (the fee bound, what it signs) are in sponsorRules.ts;
 * here are the budgets, strikes and turns, and how sponsored sends land. Both are this one policy.
 *
 * A transaction that fails on chain still charges its fee payer, and anyone can make a sponsored
 * transaction fail by changing its accounts first (the owner closes one of them straight on chain
 * between the service's simulation and the landing). What can be prevented is; the rest is bounded:
 *
 * - The fee bound: a sponsored transaction's whole fee (signatures + priority fee) is at most
 *   SPONSOR_MAX_FEE_LAMPORTS (default 20,000: two signatures and 10,000 of priority fee). Checked
 *   before anything is simulated (the caller's priorityFee) and on every message the sponsor signs.
 * - The turn: one sponsored operation per wallet at a time, from the relay of its first
 *   owner-signed sponsored message until its messages landed or expired. A prepare nobody signed
 *   starts no turn and blocks nobody ("No lockout"): only the owner's own signature can. While the
 *   owner's signed sponsored messages are in flight, the owner's other operations (a keyed burn or
 *   reclaim, another sponsored prepare or relay, a relayed transaction writing one of their token
 *   accounts, a many-owner job naming the wallet) answer 409 naming them. Messages of the same
 *   prepare answer (one relay token) join the turn. Shared through Redis when configured.
 * - One in flight: the sponsored transactions of one wallet are sent one after another, each
 *   after the previous landed, and none after one failed: a race can fail at most one of them.
 * - Strikes: a wallet whose sponsored transaction failed on chain is not sponsored again for
 *   SPONSOR_STRIKE_MS (default 24 h): 403 SPONSOR_DECLINED, pay the fee from the wallet itself.
 * - The loss budget: lamports lost over a sliding hour, all wallets (SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR,
 *   over it 503 SPONSOR_UNAVAILABLE with Retry-After), counting what the sponsored transactions in
 *   flight could still lose (each one's fee, reserved atomically before it is sent and released
 *   when it lands or expires), so transactions sent at once cannot overshoot it; and per wallet
 *   (SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR, over it 403 SPONSOR_DECLINED); every loss is
 *   counted (cinder_sponsor_lamports_lost_total, cinder_sponsor_failed_transactions_total) and
 *   logged as a warning naming the owner.
 * - What it signs: only a message Cinder would have built (src/plan/relayRules.ts), plus what a
 *   browser wallet adds (src/plan/walletAdditions.ts: known Lighthouse assertions, one Memo, a
 *   compute budget), with the sponsor only as fee payer, as the destination of the owner's
 *   repayment and as the account a guard reads for a lamports lower bound or a property only its
 *   key holder can change; every compute-budget instruction read as the runtime reads it
 *   (src/plan/computeBudget.ts), or a v1 message's config (src/plan/v1Config.ts) with every limit
 *   set and plausible (messageBudget.ts's v1LimitsProblem, checked in sponsoredMessage.ts, which
 *   `check` and `cosign` run: an unset v1 limit is 0, fails on chain and is still charged), the fee
 *   of the message as signed within the bound and repaid in full; the sponsor's balance above any floor the guards set, less what is in flight; and only
 *   a message of the owner's turn in flight.
 */
import { partiallySignTransaction, type Address, type KeyPairSigner, type Transaction } from '@solana/kit';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { formatSol } from '../plan/priorityFee.ts';
import type { innerProgramNotAllowed, RelayableMessage } from '../plan/relayRules.ts';
import { turnWaitMs, type OperationLocks } from '../store/operationLocks.ts';
import type { SponsoredTurn, SponsorLedger } from '../store/sponsorLedger.ts';
import { reportOf } from '../chain/verdicts.ts';
import { reportLanding, type LandingOutcome, type LandingReport, type SignedForSending } from './land.ts';
import { RELAY_TOKEN_LIFETIME_MS } from './relayToken.ts';
import { refuseMessage, type SponsoredMessage } from './sponsoredMessage.ts';
import { createSponsorRules, type CosignContext } from './sponsorRules.ts';

export { cannotRepaySponsor, manyOwnersNotSponsored, type SponsoredMessage } from './sponsoredMessage.ts';
export type { CosignContext } from './sponsorRules.ts';

/**
 * How long a sponsored turn lasts at the latest: a message relayed now can land while its blockhash
 * lives (150 blocks, about 60–90 s); the turn outlasts that a little, so it never ends while one of
 * its messages can still land. It normally ends sooner, when its messages landed or expired.
 */
export const SPONSORED_TURN_MS = RELAY_TOKEN_LIFETIME_MS;
const LOSS_WINDOW_MS = 60 * 60 * 1000;

/** A sponsored transaction the policy sends: the signed wire, the identity of its message and the fee it costs the sponsor. */
export interface SponsoredSend extends SignedForSending {
  /** Its place in the request (for the answer's field names). */
  index: number;
  /** preparedMessageIdentity of its message (src/plan/messageIdentity.ts). */
  identity: string;
  feeLamports: bigint;
}

/** Not sent, by the policy's choice (an earlier sponsored transaction of the wallet failed or is unconfirmed). */
export type SponsoredOutcome = LandingOutcome | { kind: 'withheld'; reason: string };

export function reportSponsoredLanding(outcome: SponsoredOutcome): LandingReport {
  return outcome.kind === 'withheld' ? reportOf({ kind: 'not-sent', reason: `not sent: ${outcome.reason}` }) : reportLanding(outcome);
}

const retryAfter = (until: number) => String(Math.max(1, Math.ceil((until - Date.now()) / 1000)));

export interface SponsorPolicyDeps {
  /** The sponsor's signer (SPONSOR_KEYPAIR, loaded by src/keys/sponsor.ts): it signs here, in `cosign`, and nowhere else. */
  signer: KeyPairSigner;
  config: Config['sponsorPolicy'];
  ledger: SponsorLedger;
  /** Sponsored sends of one wallet take turns across requests and instances. */
  locks: Pick<OperationLocks, 'withLock'>;
  metrics: Metrics;
  logger: Logger;
}

/** A token account written by a sponsored message in flight, and that message's turn. */
export interface SponsoredConflict {
  account: Address;
  turn: SponsoredTurn;
}

/** The 409 of an operation of a wallet whose own signed sponsored messages are in flight: it names them. */
export function sponsoredInFlight(turn: SponsoredTurn, what?: string): CinderError {
  const signatures = turn.signatures.filter((s) => s !== '');
  return new CinderError(
    'SPONSORED_OPERATION_IN_PROGRESS',
    { reason: 'inFlight', owner: turn.owner, ...(what === undefined ? {} : { what }), signatures, expiresAt: new Date(turn.expiresAt) },
    { headers: { 'retry-after': retryAfter(turn.expiresAt) } },
  );
}

export function createSponsorPolicy(deps: SponsorPolicyDeps): SponsorPolicy {
  const { config, ledger } = deps;
  const sponsor = deps.signer.address;
  // What it pays for (sponsorRules.ts); a guard's floor on its balance counts what is in flight.
  const rules = createSponsorRules({ sponsor, config, reservedLamports: async (owner) => (await ledger.losses(owner, LOSS_WINDOW_MS)).reserved });

  function declined(owner: Address, until: number, why: string): CinderError {
    return new CinderError('SPONSOR_DECLINED', { owner, until: new Date(until), why }, { headers: { 'retry-after': retryAfter(until) } });
  }

  function unavailable(lost: bigint, reserved: bigint, until: number): CinderError {
    return new CinderError(
      'SPONSOR_UNAVAILABLE',
      { reason: 'lossBudget', budget: config.maxLossLamportsPerHour, lost, atRisk: reserved, until: new Date(until) },
      { headers: { 'retry-after': retryAfter(until) } },
    );
  }

  /** Strikes and the loss budgets: may this wallet be sponsored at all now? */
  async function assertNotBarred(owner: Address): Promise<void> {
    const [struck, losses] = await Promise.all([ledger.struckUntil(owner), ledger.losses(owner, LOSS_WINDOW_MS)]);
    if (struck !== null) throw declined(owner, struck, 'a sponsored transaction of this wallet failed on chain at the sponsor\'s cost');
    if (losses.owner >= config.maxLossLamportsPerOwnerPerHour) {
      throw declined(owner, losses.ownerEndsAt, `sponsored transactions of this wallet cost the sponsor ${formatSol(losses.owner)} SOL in the last hour`);
    }
    if (losses.global + losses.reserved >= config.maxLossLamportsPerHour) {
      // Held by transactions in flight only: they land or expire within the turn's lifetime.
      const until = losses.global >= config.maxLossLamportsPerHour ? losses.endsAt : Math.min(losses.endsAt, Date.now() + SPONSORED_TURN_MS);
      throw unavailable(losses.global, losses.reserved, until);
    }
  }

  async function recordLoss(owner: Address, send: SponsoredSend): Promise<void> {
    deps.metrics.sponsorLamportsLost.inc(Number(send.feeLamports));
    deps.metrics.sponsorFailedTransactions.inc();
    deps.logger.warn(
      { owner, signature: send.signature, lamportsLost: send.feeLamports.toString() },
      'a sponsored transaction failed on chain: the fee sponsor paid its fee and was not repaid; the wallet is not sponsored again for a while',
    );
    // The loss is added before the reservation goes, so the cap never sees neither.
    await Promise.all([
      ledger.addLoss(owner, send.feeLamports, LOSS_WINDOW_MS),
      config.strikeMs > 0 ? ledger.strike(owner, config.strikeMs) : Promise.resolve(),
      ledger.endTurn(owner),
    ]);
    await ledger.release(send.signature, send.feeLamports);
  }

  /** What became of a sponsored transaction, in the ledger: landed, expired or not sent → out of the turn and its reservation; failed → a loss and a strike. */
  async function settle(owner: Address, send: SponsoredSend, outcome: LandingOutcome): Promise<void> {
    if (outcome.kind === 'unknown') return;
    if (outcome.kind === 'landed' && outcome.err) {
      await recordLoss(owner, send);
      return;
    }
    await ledger.finishMessage(owner, send.identity);
    await ledger.release(send.signature, send.feeLamports);
  }

  /**
   * A sponsored transaction still unconfirmed when its request answered is followed (by the same
   * shared landing loop) until it lands or expires, so that a failure is still counted and struck.
   */
  function followUntilFinal(owner: Address, send: SponsoredSend, until: number, land: (item: SponsoredSend, deadline: number) => Promise<LandingOutcome>) {
    void land(send, until)
      .then((outcome) => settle(owner, send, outcome.kind === 'unknown' ? { kind: 'expired' } : outcome))
      .catch((error: unknown) => deps.logger.warn({ owner, signature: send.signature, err: error }, 'could not follow a sponsored transaction to its end'));
  }

  return {
    sponsor,
    maxFeeLamports: config.maxFeeLamports,

    /** May this wallet be sponsored now? Strikes, loss budgets and its own signed sponsored messages in flight (prepare and keyed doors, before any chain work). */
    async admit(owner: Address): Promise<void> {
      await assertNotBarred(owner);
      const turn = await ledger.turnOf(owner);
      if (turn) throw sponsoredInFlight(turn);
    },

    ...rules,

    /**
     * The owner signed these sponsored messages and they are about to be sent: the wallet's turn
     * starts (or, for messages of the same operation `group`, grows). Returns the identities this
     * call added (the caller gives them back with `abandon` if it then sends nothing); 409 naming
     * the messages in flight when another operation of the wallet has them.
     */
    async beginTurn(
      owner: Address,
      group: string,
      messages: readonly { identity: string; signature: string }[],
      accounts: readonly Address[],
    ): Promise<string[]> {
      const result = await ledger.beginTurn({
        owner,
        group,
        expiresAt: Date.now() + SPONSORED_TURN_MS,
        messages: messages.map((m) => m.identity),
        signatures: messages.map((m) => m.signature),
        accounts: [...new Set(accounts)],
      });
      if ('busy' in result) throw sponsoredInFlight(result.busy);
      return result.added;
    },

    /** Messages added by `beginTurn` that were then not sent (refused before sending): out of the turn. */
    async abandon(owner: Address, identities: readonly string[]): Promise<void> {
      for (const identity of identities) await ledger.finishMessage(owner, identity);
    },

    /** The wallet's turn: its own signed sponsored messages in flight, or null. */
    turnOf(owner: Address): Promise<SponsoredTurn | null> {
      return ledger.turnOf(owner);
    },

    /** Keyed doors and many-owner jobs: a wallet whose own signed sponsored messages are in flight does nothing else meanwhile (it would close their accounts). */
    async assertNoTurn(owner: Address): Promise<void> {
      const turn = await ledger.turnOf(owner);
      if (turn) throw sponsoredInFlight(turn);
    },

    /**
     * Relay: the written token accounts that belong to a sponsored message in flight other than
     * the message `ownIdentity` (the message that writes them may be that very sponsored message),
     * each with its turn.
     */
    async conflicts(accounts: readonly Address[], ownIdentity: string | null): Promise<SponsoredConflict[]> {
      const owners = await ledger.ownersOf(accounts);
      const found: SponsoredConflict[] = [];
      for (const [i, owner] of owners.entries()) {
        if (owner === null) continue;
        const turn = await ledger.turnOf(owner as Address);
        if (turn && !(ownIdentity !== null && turn.messages.includes(ownIdentity))) found.push({ account: accounts[i]!, turn });
      }
      return found;
    },

    async cosign(transaction: Transaction, context: CosignContext): Promise<{ transaction: Transaction; paid: SponsoredMessage }> {
      const paid = await rules.check(transaction, context);
      // The one place the sponsor's key signs, and only after every check above passed.
      return { transaction: await partiallySignTransaction([deps.signer.keyPair], transaction), paid };
    },


    /**
     * Sends a wallet's sponsored transactions one after another (each after the previous landed),
     * under the wallet's sponsored-send turn (across requests and instances), and none after one
     * failed or is unconfirmed. Only messages of the wallet's turn in flight are sent (`known`
     * answers for one that is not: the chain may already have it). Each one's fee is reserved
     * against the hourly loss cap before it is sent, and released when it lands or expires.
     * Records what happened.
     */
    async land(
      owner: Address,
      sends: readonly SponsoredSend[],
      options: {
        deadline: number;
        send: (item: SponsoredSend, deadline: number) => Promise<LandingOutcome>;
        known: (item: SponsoredSend) => Promise<LandingOutcome | null>;
      },
    ): Promise<SponsoredOutcome[]> {
      await assertNotBarred(owner);
      return deps.locks.withLock(
        `sponsored-send:${owner}`,
        async (turnLock) => {
          const outcomes: SponsoredOutcome[] = [];
          let stop: string | null = null;
          for (const item of sends) {
            if (stop) {
              outcomes.push({ kind: 'withheld', reason: stop });
              continue;
            }
            const turn = await ledger.turnOf(owner);
            if (!turn?.messages.includes(item.identity)) {
              const known = await options.known(item);
              if (!known) {
                if (outcomes.length === 0) {
                  throw refuseMessage(item.index, 'is not part of a sponsored operation of its owner in flight (it ended: landed, expired or failed): prepare again');
                }
                stop = 'its sponsored operation has ended';
                outcomes.push({ kind: 'withheld', reason: stop });
                continue;
              }
              outcomes.push(known);
              continue;
            }
            // What it could lose, counted before it is sent: concurrent sends cannot overshoot the cap.
            const reserved = await ledger.reserve(item.signature, item.feeLamports, {
              capLamports: config.maxLossLamportsPerHour,
              windowMs: LOSS_WINDOW_MS,
              holdUntil: turn.expiresAt,
            });
            if (!reserved.ok) {
              const refusal = unavailable(reserved.lost, reserved.reserved, reserved.until);
              if (outcomes.length === 0) throw refusal;
              stop = 'the fee sponsor has reached its hourly loss budget';
              outcomes.push({ kind: 'withheld', reason: stop });
              continue;
            }
            let outcome: LandingOutcome;
            try {
              await turnLock.holdForLanding();
              outcome = await options.send(item, options.deadline);
            } catch (error) {
              // The first one not sent: nothing was, and the caller says so; a later one: the others are reported.
              if (outcomes.length === 0) {
                await ledger.release(item.signature, item.feeLamports);
                throw error;
              }
              outcome = { kind: 'not-sent' };
            }
            outcomes.push(outcome);
            await settle(owner, item, outcome);
            if (outcome.kind === 'unknown') followUntilFinal(owner, item, turn.expiresAt, options.send);
            if (outcome.kind === 'landed' && outcome.err) stop = 'an earlier sponsored transaction of this wallet failed on chain';
            if (outcome.kind === 'unknown' || outcome.kind === 'not-sent') stop = 'an earlier sponsored transaction of this wallet is not confirmed yet';
          }
          // Withheld ones were never sent: they hold the turn no longer.
          for (const [i, outcome] of outcomes.entries()) if (outcome.kind === 'withheld') await ledger.finishMessage(owner, sends[i]!.identity);
          return outcomes;
        },
        {
          busyCode: 'SPONSORED_OPERATION_IN_PROGRESS',
          maxWaitMs: turnWaitMs(options.deadline),
          keepWhile: (outcomes) => outcomes.some((o) => o.kind === 'unknown'),
        },
      );
    },
  };
}

/** Every rule of the sponsor's money (see the top of the file): who may be sponsored, what it pays for, and how its sends land. */
export interface SponsorPolicy {
  /** The sponsor's address. */
  readonly sponsor: Address;
  /** The most the sponsor pays for one transaction's fee. */
  readonly maxFeeLamports: bigint;
  /** May this wallet be sponsored now? Throws SPONSOR_DECLINED (strikes, loss budgets) or 409 (its sponsored messages in flight). */
  admit(owner: Address): Promise<void>;
  /** Throws a 400 naming the bound when the most a planned transaction can cost is over the sponsor's fee bound. */
  assertFeeWithinBound(feeUpperBounds: readonly bigint[]): void;
  /** Before any simulation of a sponsored plan: the fee bound on each transaction, and a sponsor balance that pays the largest and keeps its reserve (else 503). */
  assertCanPayPlan(feeUpperBounds: readonly bigint[], sponsorLamports: bigint, reserve: bigint): void;
  /** What the sponsor pays for runs only the allowed programs, at every depth (from a simulation's inner instructions). */
  assertInvokesOnlyAllowed(innerPrograms: Parameters<typeof innerProgramNotAllowed>[0]): void;
  /** Each sponsored transaction repays the sponsor its exact fee out of the owner's closes, leaving the owner a valid balance. */
  assertRepaid(ownerLamports: bigint, transactions: readonly { returnsLamports: bigint; feeLamports: bigint }[], reserve: bigint): void;
  /** Starts (or, for the same `group`, grows) the wallet's turn with these signed messages; returns the identities it added, 409 when another operation has the turn. */
  beginTurn(
    owner: Address,
    group: string,
    messages: readonly { identity: string; signature: string }[],
    accounts: readonly Address[],
  ): Promise<string[]>;
  /** Takes back messages `beginTurn` added that were then not sent. */
  abandon(owner: Address, identities: readonly string[]): Promise<void>;
  /** The wallet's turn: its own signed sponsored messages in flight, or null. */
  turnOf(owner: Address): Promise<SponsoredTurn | null>;
  /** Throws 409 when the wallet's own signed sponsored messages are in flight (keyed doors and many-owner jobs would close their accounts). */
  assertNoTurn(owner: Address): Promise<void>;
  /** The written token accounts that belong to a sponsored message in flight other than `ownIdentity`, each with its turn. */
  conflicts(accounts: readonly Address[], ownIdentity: string | null): Promise<SponsoredConflict[]>;
  /**
   * Throws unless the sponsor would pay for this message as signed (wallet additions included);
   * returns its fee, the owner who repays it, and the lowest sponsor balance its guards assert (or null).
   */
  paysFor(index: number, message: RelayableMessage): SponsoredMessage;
  /**
   * Every check of `cosign` (what the sponsor pays for, and a guard's floor on its balance), without
   * the signature: prepare asks it of each sponsored message before handing it out.
   */
  check(transaction: Transaction, context: CosignContext): Promise<SponsoredMessage>;
  /**
   * The one signing point of the sponsor's key: every check of `check`, on this very message, then
   * the sponsor's signature (the other signatures as they were). The keyed doors and the relay ask it.
   */
  cosign(transaction: Transaction, context: CosignContext): Promise<{ transaction: Transaction; paid: SponsoredMessage }>;
  /** Sends a wallet's sponsored transactions one after another under its turn, each fee reserved against the loss cap first; returns each one's outcome. */
  land(
    owner: Address,
    sends: readonly SponsoredSend[],
    options: {
      deadline: number;
      send: (item: SponsoredSend, deadline: number) => Promise<LandingOutcome>;
      known: (item: SponsoredSend) => Promise<LandingOutcome | null>;
    },
  ): Promise<SponsoredOutcome[]>;
}
