/**
 * What the fee sponsor pays for, judged on a plan or on a message as signed: the fee bound, its
 * balance before any simulation, the programs a sponsored transaction runs, the owner's
 * repayment, and every check before the sponsor's signature (src/operations/sponsoredMessage.ts,
 * and a wallet's guard on the sponsor's balance). The budgets, strikes and turns that decide
 * whether a wallet is sponsored at all, and how its sends land, are the policy's
 * (src/operations/sponsorPolicy.ts), which hands these rules out as its own.
 */
import type { Address, Transaction } from '@solana/kit';
import type { Config } from '../config.ts';
import { CinderError } from '../errors.ts';
import { signatureFees } from '../plan/fees.ts';
import { canRepaySponsor, sponsorCanPay } from '../plan/money.ts';
import { formatSol } from '../plan/priorityFee.ts';
import { innerProgramNotAllowed, RELAY_ALLOWED_PROGRAMS, type RelayableMessage } from '../plan/relayRules.ts';
import { sponsorFloorHolds } from '../plan/walletAdditions.ts';
import { cannotRepaySponsor, decodeMessage, refuseMessage, sponsoredMessage, type SponsoredMessage } from './sponsoredMessage.ts';

/** What `cosign` is told besides the message. */
export interface CosignContext {
  /** The message's place in its request (for the answer's field names). */
  index: number;
  /**
   * The sponsor's balance and what this request's sponsored transactions could cost it: needed only
   * for a message carrying a wallet's guard on the sponsor's balance (the relay reads them then).
   */
  floor?: { sponsorLamports: bigint; requestFeesLamports: bigint };
}

export interface SponsorRulesDeps {
  sponsor: Address;
  config: Config['sponsorPolicy'];
  /** What the sponsored transactions in flight could still lose (the loss ledger's reservations). */
  reservedLamports: (owner: Address) => Promise<bigint>;
}

/** The rules a sponsored plan or message must meet; each throws the refusal, nothing is signed here. */
export interface SponsorRules {
  /** The fee bound on each planned transaction's most (a priorityFee over it is a 400 naming the bound). */
  assertFeeWithinBound(feeUpperBounds: readonly bigint[]): void;
  /** The bound, then the sponsor's balance against every fee of the plan and its reserve. */
  assertCanPayPlan(feeUpperBounds: readonly bigint[], sponsorLamports: bigint, reserve: bigint): void;
  /** Only the programs a sponsored transaction may run, inner calls included. */
  assertInvokesOnlyAllowed(innerPrograms: Parameters<typeof innerProgramNotAllowed>[0]): void;
  /** Each transaction returns the owner enough to repay its sponsored fee. */
  assertRepaid(ownerLamports: bigint, transactions: readonly { returnsLamports: bigint; feeLamports: bigint }[], reserve: bigint): void;
  /** What the sponsor pays for in a relayable message (refused when it is not a sponsored message of Cinder's shape). */
  paysFor(index: number, message: RelayableMessage): SponsoredMessage;
  /** Every check before the sponsor's signature, on the message exactly as it will be signed. */
  check(transaction: Transaction, context: CosignContext): Promise<SponsoredMessage>;
}

export function createSponsorRules({ sponsor, config, reservedLamports }: SponsorRulesDeps): SponsorRules {
  const signatureFeeLamports = signatureFees(2);

  /**
   * A guard's floor on the sponsor's balance holds when the sponsor, less the fees of this
   * request's sponsored transactions and of every sponsored transaction in flight (each lost if
   * it fails), still has it: only the sponsor's own spending can lower its balance.
   */
  async function assertFloorHolds(index: number, owner: Address, floor: bigint | null, sponsorLamports: bigint, requestFeesLamports: bigint): Promise<void> {
    if (floor === null) return;
    const reserved = await reservedLamports(owner);
    if (sponsorFloorHolds(floor, sponsorLamports, requestFeesLamports + reserved)) return;
    throw refuseMessage(
      index,
      `has a safety check its wallet added that requires the fee sponsor to hold at least ${formatSol(floor)} SOL, which it may not hold when this transaction runs ` +
        `(it holds ${formatSol(sponsorLamports)} SOL, ${formatSol(requestFeesLamports + reserved)} SOL of it at stake in sponsored transactions): pay the fee yourself without the sponsor`,
    );
  }

  /**
   * The fee bound, on the most each planned transaction can cost (two signatures + its share of
   * the priority fee): a caller's priorityFee over it is a 400 that names the bound.
   */
  function assertFeeWithinBound(feeUpperBounds: readonly bigint[]): void {
    const largest = feeUpperBounds.reduce((max, fee) => (fee > max ? fee : max), 0n);
    if (largest <= config.maxFeeLamports) return;
    const maxPriority = config.maxFeeLamports - signatureFeeLamports;
    const problem =
      `with feePayer "sponsor" the fee of each transaction is at most ${formatSol(config.maxFeeLamports)} SOL ` +
      `(two signatures and a priority fee of at most ${formatSol(maxPriority > 0n ? maxPriority : 0n)} SOL per transaction; ` +
      `this plan has ${feeUpperBounds.length} transaction${feeUpperBounds.length === 1 ? '' : 's'}, one would cost up to ${formatSol(largest)} SOL)`;
    throw new CinderError('INVALID_PRIORITY_FEE', { reason: 'sponsorMax', problem, maxFeeLamports: config.maxFeeLamports }, {
      errors: [{ field: 'priorityFee', message: problem }],
    });
  }

  return {
    assertFeeWithinBound,

    assertCanPayPlan(feeUpperBounds: readonly bigint[], sponsorLamports: bigint, reserve: bigint): void {
      assertFeeWithinBound(feeUpperBounds);
      if (!sponsorCanPay(sponsorLamports, feeUpperBounds, reserve)) {
        throw new CinderError('SPONSOR_UNAVAILABLE', { reason: 'lowBalance', lamports: sponsorLamports }, {
          headers: { 'retry-after': '30' },
        });
      }
    },

    assertInvokesOnlyAllowed(innerPrograms: Parameters<typeof innerProgramNotAllowed>[0]): void {
      // An extension of a mint could make a token instruction call another program.
      const invoked = innerProgramNotAllowed(innerPrograms);
      if (!invoked) return;
      throw new CinderError('PROGRAM_NOT_ALLOWED', { reason: 'sponsored', invoked, allowed: [...RELAY_ALLOWED_PROGRAMS.values()] });
    },

    assertRepaid(ownerLamports: bigint, transactions: readonly { returnsLamports: bigint; feeLamports: bigint }[], reserve: bigint): void {
      for (const t of transactions) if (!canRepaySponsor(ownerLamports, t.returnsLamports, t.feeLamports, reserve)) throw cannotRepaySponsor();
    },

    paysFor(index: number, message: RelayableMessage): SponsoredMessage {
      return sponsoredMessage(index, message, sponsor, config.maxFeeLamports);
    },

    async check(transaction: Transaction, context: CosignContext): Promise<SponsoredMessage> {
      const paid = sponsoredMessage(context.index, decodeMessage(context.index, transaction), sponsor, config.maxFeeLamports);
      if (paid.sponsorFloor !== null) {
        // A guard reading the sponsor's balance: only a relay of the owner's signed message carries one.
        if (!context.floor) throw refuseMessage(context.index, 'has a safety check on the fee sponsor\'s balance where none can be checked');
        await assertFloorHolds(context.index, paid.owner, paid.sponsorFloor, context.floor.sponsorLamports, context.floor.requestFeesLamports);
      }
      return paid;
    },
  };
}
