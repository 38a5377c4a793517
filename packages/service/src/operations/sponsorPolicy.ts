/**
 * The fee sponsor's policy, in one place (docs/architecture.md, "The sponsor's policy, in one place"). Prepare,
 * the keyed doors and the relay ask it; they never decide about the sponsor's money themselves.
 *
 * A transaction that fails on chain still charges its fee payer, and anyone can make a sponsored
 * transaction fail by changing its accounts first (the owner closes one of them straight on chain
 * between the service's simulation and the landing). What can be prevented is; the rest is bounded:
 *
 * - The fee bound: a sponsored transaction's whole fee (signatures + priority fee) is at most
 *   SPONSOR_MAX_FEE_LAMPORTS (default 20,000: two signatures and 10,000 of priority fee). Checked
 *   before anything is simulated (the caller's priorityFee) and on every message the sponsor signs.
 * - The turn: one sponsored operation per wallet at a time, from its prepare until all of its
 *   messages landed or its blockhash expired (SPONSORED_TURN_MS, which is also the relay token's
 *   lifetime). A second sponsored prepare meanwhile is 409; a keyed burn or reclaim of that wallet
 *   is 409; a relayed transaction that writes a token account of an outstanding sponsored message
 *   is refused (the relay asks `conflicts`). Shared through Redis when configured.
 * - One in flight: the sponsored transactions of one wallet are sent one after another, each
 *   after the previous landed, and none after one failed: a race can fail at most one of them.
 * - Strikes: a wallet whose sponsored transaction failed on chain is not sponsored again for
 *   SPONSOR_STRIKE_MS (default 24 h): 403 SPONSOR_DECLINED, pay the fee from the wallet itself.
 * - The loss budget: lamports lost per hour, all wallets (SPONSOR_MAX_LOSS_LAMPORTS_PER_HOUR,
 *   over it 503 SPONSOR_UNAVAILABLE with Retry-After) and per wallet
 *   (SPONSOR_MAX_LOSS_LAMPORTS_PER_OWNER_PER_HOUR, over it 403 SPONSOR_DECLINED); every loss is
 *   counted (cinder_sponsor_lamports_lost_total, cinder_sponsor_failed_transactions_total) and
 *   logged as a warning naming the owner.
 * - What it signs: only a message Cinder would have built (src/plan/relayRules.ts), with the sponsor
 *   only as fee payer and as the destination of the owner's repayment, every compute-budget
 *   instruction read as the runtime reads it (src/plan/computeBudget.ts), a fee within the bound,
 *   and a repayment of at least that fee; and only a message of the owner's outstanding turn.
 */
import { createHash } from 'node:crypto';
import type { Address, ReadonlyUint8Array } from '@solana/kit';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { describeComputeBudgetError, readComputeBudget } from '../plan/computeBudget.ts';
import { signatureFees, transactionFee } from '../plan/fees.ts';
import { formatSol } from '../plan/priorityFee.ts';
import { messageInstructions, notCinderInstruction, transferSolOf, type RelayableMessage } from '../plan/relayRules.ts';
import type { OperationLocks } from '../store/operationLocks.ts';
import type { SponsorLedger } from '../store/sponsorLedger.ts';
import { reportOf } from '../chain/verdicts.ts';
import { reportLanding, type LandingOutcome, type LandingReport, type SignedForSending } from './land.ts';

/**
 * A sponsored operation's turn, and its relay token's lifetime: a prepared message can land while
 * its blockhash lives (150 blocks, about 60–90 s); the turn outlasts that a little, so it never
 * ends while one of its messages can still land.
 */
export const SPONSORED_TURN_MS = 2 * 60 * 1000;
const LOSS_WINDOW_MS = 60 * 60 * 1000;

export const messageHash = (messageBytes: ReadonlyUint8Array) => createHash('sha256').update(messageBytes as Uint8Array).digest('hex');

/** A sponsored transaction the policy sends: the signed wire, its message and the fee it costs the sponsor. */
export interface SponsoredSend extends SignedForSending {
  /** Its place in the request (for the answer's field names). */
  index: number;
  messageBytes: ReadonlyUint8Array;
  feeLamports: bigint;
}

/** Not sent, by the policy's choice (an earlier sponsored transaction of the wallet failed or is unconfirmed). */
export type SponsoredOutcome = LandingOutcome | { kind: 'withheld'; reason: string };

export function reportSponsoredLanding(outcome: SponsoredOutcome): LandingReport {
  return outcome.kind === 'withheld' ? reportOf({ kind: 'not-sent', reason: `not sent: ${outcome.reason}` }) : reportLanding(outcome);
}

const iso = (ms: number) => new Date(ms).toISOString();
const retryAfter = (until: number) => String(Math.max(1, Math.ceil((until - Date.now()) / 1000)));

export interface SponsorPolicyDeps {
  sponsor: Address;
  config: Config['sponsorPolicy'];
  ledger: SponsorLedger;
  /** Sponsored sends of one wallet take turns across requests and instances. */
  locks: Pick<OperationLocks, 'takeTurn'>;
  metrics: Metrics;
  logger: Logger;
}

export function createSponsorPolicy(deps: SponsorPolicyDeps) {
  const { sponsor, config, ledger } = deps;
  const signatureFeeLamports = signatureFees(2);

  function declined(owner: Address, until: number, why: string): CinderError {
    return new CinderError(
      'SPONSOR_DECLINED',
      `The fee sponsor does not pay for ${owner} until ${iso(until)}: ${why}. Pay the fee from the wallet itself ` +
        '(send feePayer "owner" after funding it with a little SOL). Nothing was sent.',
      { headers: { 'retry-after': retryAfter(until) }, extensions: { until: iso(until) } },
    );
  }

  /** Strikes and the loss budgets: may this wallet be sponsored at all now? */
  async function assertNotBarred(owner: Address): Promise<void> {
    const [struck, losses] = await Promise.all([ledger.struckUntil(owner), ledger.losses(owner, LOSS_WINDOW_MS)]);
    if (struck !== null) throw declined(owner, struck, 'a sponsored transaction of this wallet failed on chain at the sponsor\'s cost');
    if (losses.owner >= config.maxLossLamportsPerOwnerPerHour) {
      throw declined(owner, losses.endsAt, `sponsored transactions of this wallet cost the sponsor ${formatSol(losses.owner)} SOL this hour`);
    }
    if (losses.global >= config.maxLossLamportsPerHour) {
      throw new CinderError(
        'SPONSOR_UNAVAILABLE',
        `The fee sponsor has lost its hourly budget (${formatSol(config.maxLossLamportsPerHour)} SOL) to sponsored transactions that failed on chain; it pays again from ${iso(losses.endsAt)}. Nothing was sent.`,
        { headers: { 'retry-after': retryAfter(losses.endsAt) } },
      );
    }
  }

  function busy(turn: { owner: string; expiresAt: number }): CinderError {
    return new CinderError(
      'SPONSORED_OPERATION_IN_PROGRESS',
      `A sponsored operation of ${turn.owner} is outstanding until ${iso(turn.expiresAt)} (until its transactions land or their blockhash expires); ` +
        'a wallet has one at a time, so that none of its transactions can make another fail at the sponsor\'s cost. Nothing was sent; relay the prepared transactions, or retry after that time.',
      { headers: { 'retry-after': retryAfter(turn.expiresAt) }, extensions: { expiresAt: iso(turn.expiresAt) } },
    );
  }

  function refuseMessage(index: number, problem: string): CinderError {
    const field = `transactions.${index}`;
    return new CinderError('RELAY_TOKEN_INVALID', `${field} ${problem}; the fee sponsor does not sign it. Nothing was sent.`, {
      errors: [{ field, message: problem }],
    });
  }

  async function recordLoss(owner: Address, send: SponsoredSend): Promise<void> {
    deps.metrics.sponsorLamportsLost.inc(Number(send.feeLamports));
    deps.metrics.sponsorFailedTransactions.inc();
    deps.logger.warn(
      { owner, signature: send.signature, lamportsLost: send.feeLamports.toString() },
      'a sponsored transaction failed on chain: the fee sponsor paid its fee and was not repaid; the wallet is not sponsored again for a while',
    );
    await Promise.all([
      ledger.addLoss(owner, send.feeLamports, LOSS_WINDOW_MS),
      config.strikeMs > 0 ? ledger.strike(owner, config.strikeMs) : Promise.resolve(),
      ledger.endTurn(owner),
    ]);
  }

  /** What became of a sent sponsored transaction, in the ledger: landed → out of the turn; failed → a loss and a strike. */
  async function settle(owner: Address, send: SponsoredSend, outcome: LandingOutcome): Promise<void> {
    if (outcome.kind === 'landed' && outcome.err) await recordLoss(owner, send);
    else if (outcome.kind === 'landed' || outcome.kind === 'expired') await ledger.finishMessage(owner, messageHash(send.messageBytes));
  }

  /**
   * A sponsored transaction still unconfirmed when its request answered is followed (by the same
   * shared landing loop) until it lands or expires, so that a failure is still counted and struck.
   */
  function followUntilFinal(owner: Address, send: SponsoredSend, until: number, land: (item: SponsoredSend, deadline: number) => Promise<LandingOutcome>) {
    void land(send, until)
      .then((outcome) => settle(owner, send, outcome))
      .catch((error: unknown) => deps.logger.warn({ owner, signature: send.signature, err: error }, 'could not follow a sponsored transaction to its end'));
  }

  return {
    sponsor,
    maxFeeLamports: config.maxFeeLamports,

    /** May this wallet be sponsored now? Strikes, loss budgets and an outstanding turn (prepare and keyed doors, before any chain work). */
    async admit(owner: Address): Promise<void> {
      await assertNotBarred(owner);
      const turn = await ledger.turnOf(owner);
      if (turn) throw busy(turn);
    },

    /**
     * The fee bound, on the most each planned transaction can cost (two signatures + its share of
     * the priority fee): a caller's priorityFee over it is a 400 that names the bound.
     */
    assertFeeWithinBound(feeUpperBounds: readonly bigint[]): void {
      const largest = feeUpperBounds.reduce((max, fee) => (fee > max ? fee : max), 0n);
      if (largest <= config.maxFeeLamports) return;
      const maxPriority = config.maxFeeLamports - signatureFeeLamports;
      const problem =
        `with feePayer "sponsor" the fee of each transaction is at most ${formatSol(config.maxFeeLamports)} SOL ` +
        `(two signatures and a priority fee of at most ${formatSol(maxPriority > 0n ? maxPriority : 0n)} SOL per transaction; ` +
        `this plan has ${feeUpperBounds.length} transaction${feeUpperBounds.length === 1 ? '' : 's'}, one would cost up to ${formatSol(largest)} SOL)`;
      throw new CinderError('INVALID_PRIORITY_FEE', `priorityFee is too high: ${problem}. Lower priorityFee, or pay the fee yourself. Nothing was sent.`, {
        errors: [{ field: 'priorityFee', message: problem }],
        extensions: { maxFeeLamports: config.maxFeeLamports.toString() },
      });
    },

    /** Starts the wallet's sponsored turn for these prepared messages; returns when it ends at the latest. */
    async beginTurn(owner: Address, messages: readonly ReadonlyUint8Array[], accounts: readonly Address[]): Promise<number> {
      const expiresAt = Date.now() + SPONSORED_TURN_MS;
      const current = await ledger.beginTurn({ owner, expiresAt, messages: messages.map(messageHash), accounts: [...new Set(accounts)] });
      if (current) throw busy(current);
      return expiresAt;
    },

    /** Keyed doors: a wallet with an outstanding sponsored operation does nothing else meanwhile (it would close that operation's accounts). */
    async assertNoTurn(owner: Address): Promise<void> {
      const turn = await ledger.turnOf(owner);
      if (turn) throw busy(turn);
    },

    /**
     * Relay: the written token accounts that belong to an outstanding sponsored message other than
     * `ownMessage` (the message that writes them may be that very sponsored message).
     */
    async conflicts(accounts: readonly Address[], ownMessage: ReadonlyUint8Array | null): Promise<Address[]> {
      const owners = await ledger.ownersOf(accounts);
      const own = ownMessage ? messageHash(ownMessage) : null;
      const found: Address[] = [];
      for (const [i, owner] of owners.entries()) {
        if (owner === null) continue;
        const turn = own ? await ledger.turnOf(owner as Address) : null;
        if (!turn || !turn.messages.includes(own!)) found.push(accounts[i]!);
      }
      return found;
    },

    /**
     * Is this a message the sponsor would pay for? (Behind the relay token, on its own: a token
     * minted with a leaked secret still buys nothing else.) Returns its fee and the owner who repays it.
     */
    paysFor(index: number, message: RelayableMessage): { feeLamports: bigint; owner: Address } {
      if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) throw refuseMessage(index, 'uses address lookup tables');
      const instructions = messageInstructions(message);
      const budget = readComputeBudget(instructions.map((i) => ({ programAddress: i.program!, data: i.data })));
      if (!budget.ok) throw refuseMessage(index, `has a compute budget the runtime refuses: ${describeComputeBudgetError(budget.error)}`);
      if (budget.limits.computeUnitLimit === null) throw refuseMessage(index, 'sets no compute unit limit');
      const feeLamports = transactionFee(
        message.header.numSignerAccounts,
        budget.limits.computeUnitPriceMicroLamports,
        budget.limits.computeUnitLimit,
      );
      if (feeLamports > config.maxFeeLamports) {
        throw refuseMessage(index, `pays a fee of ${formatSol(feeLamports)} SOL, over the fee sponsor's bound of ${formatSol(config.maxFeeLamports)} SOL`);
      }
      let repaid = 0n;
      let owner: Address | null = null;
      for (const instruction of instructions) {
        const why = notCinderInstruction(instruction, sponsor);
        if (why) throw refuseMessage(index, `has instruction ${instruction.index}, which ${why}`);
        const transfer = transferSolOf(instruction);
        if (transfer) {
          if (owner !== null && transfer.from !== owner) throw refuseMessage(index, 'repays the fee sponsor from more than one account');
          owner = transfer.from;
          repaid += transfer.lamports;
        } else if (instruction.accounts.includes(sponsor)) {
          throw refuseMessage(index, `uses the fee sponsor ${sponsor} in an instruction other than its repayment`);
        }
      }
      if (owner === null || repaid < feeLamports) {
        throw refuseMessage(index, `repays the fee sponsor ${formatSol(repaid)} SOL of its ${formatSol(feeLamports)} SOL fee`);
      }
      return { feeLamports, owner };
    },

    /**
     * Sends a wallet's sponsored transactions one after another (each after the previous landed),
     * under the wallet's sponsored-send turn (across requests and instances), and none after one
     * failed or is unconfirmed. Only messages of the wallet's outstanding turn are sent
     * (`known` answers for one that is not: the chain may already have it). Records what happened.
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
      return deps.locks.takeTurn(
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
            if (!turn?.messages.includes(messageHash(item.messageBytes))) {
              const known = await options.known(item);
              if (!known) {
                if (outcomes.length === 0) {
                  throw refuseMessage(item.index, 'is not part of an outstanding sponsored operation of its owner (it ended: landed, expired or failed): prepare again');
                }
                stop = 'its sponsored operation has ended';
                outcomes.push({ kind: 'withheld', reason: stop });
                continue;
              }
              outcomes.push(known);
              continue;
            }
            await turnLock.holdForLanding();
            let outcome: LandingOutcome;
            try {
              outcome = await options.send(item, options.deadline);
            } catch (error) {
              // The first one not sent: nothing was, and the caller says so; a later one: the others are reported.
              if (outcomes.length === 0) throw error;
              outcome = { kind: 'not-sent' };
            }
            outcomes.push(outcome);
            await settle(owner, item, outcome);
            if (outcome.kind === 'unknown') followUntilFinal(owner, item, turn.expiresAt, options.send);
            if (outcome.kind === 'landed' && outcome.err) stop = 'an earlier sponsored transaction of this wallet failed on chain';
            if (outcome.kind === 'unknown' || outcome.kind === 'not-sent') stop = 'an earlier sponsored transaction of this wallet is not confirmed yet';
          }
          return outcomes;
        },
        {
          busyCode: 'SPONSORED_OPERATION_IN_PROGRESS',
          busyDetail:
            'Another sponsored transaction of this wallet is landing, or was sent and may still land (for up to about a minute). Nothing was sent by this request; retry shortly.',
          maxWaitMs: Math.max(0, Math.floor((options.deadline - Date.now()) / 2)),
          keepWhile: (outcomes) => outcomes.some((o) => o.kind === 'unknown'),
        },
      );
    },
  };
}

export type SponsorPolicy = ReturnType<typeof createSponsorPolicy>;
