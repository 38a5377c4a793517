/**
 * What the fee sponsor pays for, read from a message as signed (src/operations/sponsorPolicy.ts
 * asks it before the sponsor's key signs anything): Cinder's own instructions (src/plan/relayRules.ts)
 * plus what a browser wallet adds (src/plan/walletAdditions.ts), the sponsor only as fee payer, as
 * the destination of the owner's repayment and where a guard may read it, a compute unit limit
 * set, the fee within the sponsor's bound and repaid in full by one owner. Pure: no I/O.
 */
import { getCompiledTransactionMessageDecoder, type Address, type Transaction } from '@solana/kit';
import { CinderError } from '../errors.ts';
import { formatSol } from '../plan/priorityFee.ts';
import { MAX_RELAY_TOKEN_MESSAGES } from './relayToken.ts';
import { messageInstructions, notCinderInstruction, transferSolOf, type RelayableMessage } from '../plan/relayRules.ts';
import { checkWalletAdditions, isWalletAdditionKind, sponsorFeeRepaid } from '../plan/walletAdditions.ts';

/** A message the sponsor pays for: its fee, the owner who repays it, the lowest sponsor balance its guards assert (or null). */
export interface SponsoredMessage {
  feeLamports: bigint;
  owner: Address;
  sponsorFloor: bigint | null;
}

/** RELAY_TOKEN_INVALID naming the request's transaction: the sponsor does not sign it. */
export function refuseMessage(index: number, problem: string): CinderError {
  const field = `transactions.${index}`;
  return new CinderError('RELAY_TOKEN_INVALID', { reason: 'field', field, problem }, {
    errors: [{ field, message: problem }],
  });
}

const messageDecoder = getCompiledTransactionMessageDecoder();

/** The compiled message of a transaction; a version the relay does not read is refused. */
export function decodeMessage(index: number, transaction: Transaction): RelayableMessage {
  const message = messageDecoder.decode(transaction.messageBytes);
  if (message.version !== 'legacy' && message.version !== 0) throw refuseMessage(index, `is a version ${String(message.version)} message`);
  return message as RelayableMessage;
}

/**
 * Throws unless the sponsor would pay for this message (behind the relay token, on its own: a
 * token minted with a leaked secret still buys nothing else); returns what it pays and who repays.
 */
export function sponsoredMessage(index: number, message: RelayableMessage, sponsor: Address, maxFeeLamports: bigint): SponsoredMessage {
  if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) throw refuseMessage(index, 'uses address lookup tables');
  // The message as signed: what the wallet added is judged first (the sponsor only ever the
  // account a guard reads for a lower bound or a key-holder-only property), then Cinder's part.
  const verdict = checkWalletAdditions(null, message, sponsor);
  if (!verdict.ok) throw refuseMessage(index, `holds what a wallet may not add: ${verdict.reason}`);
  const { computeBudget, sponsorFloor } = verdict.additions;
  if (computeBudget.computeUnitLimit === null) throw refuseMessage(index, 'sets no compute unit limit');
  const instructions = messageInstructions(message);
  let repaid = 0n;
  let owner: Address | null = null;
  for (const instruction of instructions) {
    // Accepted additions (guards, a Memo) name the sponsor only as checkWalletAdditions allows.
    if (isWalletAdditionKind(instruction)) continue;
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
  const fee = sponsorFeeRepaid(message.header.numSignerAccounts, computeBudget, repaid);
  if (fee.feeLamports > maxFeeLamports) {
    throw refuseMessage(index, `pays a fee of ${formatSol(fee.feeLamports)} SOL, over the fee sponsor's bound of ${formatSol(maxFeeLamports)} SOL`);
  }
  if (owner === null) throw refuseMessage(index, `repays the fee sponsor nothing of its ${formatSol(fee.feeLamports)} SOL fee`);
  if (!fee.ok) {
    // A unit price above 0 is what a wallet sets on its own: say what the person can do about it.
    const hint = computeBudget.computeUnitPriceMicroLamports > 0n ? `: ${fee.reason}` : '';
    throw refuseMessage(index, `repays the fee sponsor ${formatSol(repaid)} SOL of its ${formatSol(fee.feeLamports)} SOL fee${hint}`);
  }
  return { feeLamports: fee.feeLamports, owner, sponsorFloor };
}

/** A sponsored transaction whose closes would not repay the sponsor in full: never sent (the sponsor would pay for a failure). */
export function cannotRepaySponsor(): CinderError {
  return new CinderError('FEE_EXCEEDS_RECLAIM', { reason: 'sponsorNotRepaid' });
}

/** Many owners in one transaction: the sponsor pays one owner per turn, repaid from that owner's rent, so it does not pay for them. */
export function manyOwnersNotSponsored(): CinderError {
  const message =
    'the fee sponsor pays only one owner per turn, repaid from that owner\'s own rent in the same transaction; a transaction shared by many owners would need each of them to repay it, which its policy does not check: give the address of a wallet of yours that holds the fees';
  return new CinderError('VALIDATION_FAILED', { reason: 'sponsorForMany', problem: message }, { errors: [{ field: 'feePayer', message }] });
}

/**
 * A sponsored prepare's relay token covers at most MAX_RELAY_TOKEN_MESSAGES messages (the token
 * names each one), and it covers only the transactions the sponsor pays (the prefix the owner cannot
 * pay; the owner-paid rest needs no token), so only those count: a 0-SOL wallet of thousands of
 * accounts has one. A plan whose sponsored prefix is longer cannot be sponsored in one go; with a
 * little SOL of its own the wallet pays its fees and needs no sponsor.
 */
export function assertFitsOneRelayToken(transactions: readonly { ownerPays?: boolean | undefined; packed: { actions: readonly unknown[] } }[], feeLamports: bigint): void {
  const sponsored = transactions.filter((t) => t.ownerPays !== true);
  if (sponsored.length <= MAX_RELAY_TOKEN_MESSAGES) return;
  const accounts = transactions.reduce((sum, t) => sum + t.packed.actions.length, 0);
  throw new CinderError(
    'SPONSORED_OPERATION_TOO_LARGE',
    { max: MAX_RELAY_TOKEN_MESSAGES, transactions: sponsored.length, accounts, fees: feeLamports },
    { errors: [{ field: 'feePayer', message: `sponsored operations hold at most ${MAX_RELAY_TOKEN_MESSAGES} transactions` }] },
  );
}
