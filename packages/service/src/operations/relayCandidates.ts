/**
 * The relay's static checks of each transaction of a request (src/operations/relay.ts, steps 1 to 4):
 * it decodes to exactly the bytes given; what a wallet added is only what wallets add
 * (src/plan/walletAdditions.ts); every other instruction is of an allowed program and one Cinder
 * prepares (src/plan/relayRules.ts); every signature but the sponsor's verifies; no two
 * transactions take from one token account, and none carries a wallet's guard another of the
 * request can break. All before anything is simulated or sent.
 */
import {
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  verifySignature,
  type Address,
  type CompiledTransactionMessage,
  type Transaction,
} from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { CinderError } from '../errors.ts';
import { describeComparison } from '../plan/lighthouse.ts';
import { preparedMessageIdentity } from '../plan/messageIdentity.ts';
import { TRANSACTION_SIZE_LIMIT } from '../plan/pack.ts';
import {
  consumedTokenAccount,
  instructionName,
  messageInstructions,
  notCinderInstruction,
  RELAY_ALLOWED_PROGRAMS,
  writableStaticAccounts,
  type RelayableMessage,
} from '../plan/relayRules.ts';
import { checkWalletAdditions, feeOfMessage, isWalletAdditionKind, type WalletAdditions } from '../plan/walletAdditions.ts';
import { V1_TRANSACTION_SIZE_LIMIT } from '../plan/v1Format.ts';

export interface Candidate {
  index: number;
  transaction: Transaction;
  message: RelayableMessage;
  /** What Cinder prepared, whatever a wallet added (src/plan/messageIdentity.ts): relay tokens and turns know a message by it. */
  identity: string;
  feePayer: Address;
  sponsored: boolean;
  /** The token accounts its instructions take from (close, burn, withdraw, transfer), each once. */
  consumed: Address[];
  /** What the wallet added (accepted: src/plan/walletAdditions.ts). */
  additions: WalletAdditions;
  /** The fee of the message as signed. */
  feeLamports: bigint;
  /** What the sponsor's policy said of it (sponsored only): its fee, the owner who repays it, the least balance its guards require of the sponsor. */
  paid: { feeLamports: bigint; owner: Address; sponsorFloor: bigint | null } | null;
}

/** The problem's field name (problem.ts shows names of letters, digits, `_`, `.` and `-` only). */
export const field = (index: number) => `transactions.${index}`;

export type RefusalCode = 'INVALID_TRANSACTION' | 'TRANSACTION_NOT_SIGNED' | 'PROGRAM_NOT_ALLOWED' | 'INSTRUCTION_NOT_ALLOWED' | 'TRANSACTIONS_CONFLICT' | 'TRANSACTION_REJECTED';

export function refuse(code: RefusalCode, index: number, problem: string): CinderError {
  return new CinderError(code, { reason: 'item', field: field(index), problem }, { errors: [{ field: field(index), message: problem }] });
}

const base64 = getBase64Encoder();
const transactionDecoder = getTransactionDecoder();
const messageEncoder = getCompiledTransactionMessageEncoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
export const allowedProgramNames = () => [...RELAY_ALLOWED_PROGRAMS.values()].join(', ');

export function decodeCandidate(wire: string, index: number, sponsor: Address | null, relayAny: boolean, preparedHere: (identity: string) => boolean): Candidate {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(wire) || wire.length % 4 !== 0) throw refuse('INVALID_TRANSACTION', index, 'is not base64');
  const bytes = new Uint8Array(base64.encode(wire));
  // The largest size of any version first (v1's 4,096), then the version's own once it is known.
  if (bytes.length > V1_TRANSACTION_SIZE_LIMIT) {
    throw refuse('INVALID_TRANSACTION', index, `is ${bytes.length} bytes, over the ${V1_TRANSACTION_SIZE_LIMIT}-byte limit of a v1 transaction`);
  }
  let transaction: Transaction;
  let message: CompiledTransactionMessage;
  try {
    transaction = transactionDecoder.decode(bytes);
    message = messageDecoder.decode(transaction.messageBytes);
  } catch {
    throw refuse('INVALID_TRANSACTION', index, 'is not a Solana wire transaction');
  }
  if (message.version !== 'legacy' && message.version !== 0 && message.version !== 1) {
    throw refuse('INVALID_TRANSACTION', index, `is a version ${String((message as { version: unknown }).version)} transaction; only legacy, version 0 and version 1 transactions are relayed`);
  }
  if (message.version !== 1 && bytes.length > TRANSACTION_SIZE_LIMIT) {
    throw refuse('INVALID_TRANSACTION', index, `is ${bytes.length} bytes, over the ${TRANSACTION_SIZE_LIMIT}-byte limit of a ${message.version === 0 ? 'version 0' : 'legacy'} transaction`);
  }
  // The message decoder stops where the message ends: bytes after it would be signed but ignored.
  const reencoded = messageEncoder.encode(message);
  if (reencoded.length !== transaction.messageBytes.length || !reencoded.every((b, i) => b === transaction.messageBytes[i])) {
    throw refuse('INVALID_TRANSACTION', index, 'has bytes after the end of the transaction');
  }
  const feePayer = message.staticAccounts[0];
  if (!feePayer) throw refuse('INVALID_TRANSACTION', index, 'has no fee payer');
  const sponsored = sponsor !== null && feePayer === sponsor;
  const identity = preparedMessageIdentity(message);
  const instructions = messageInstructions(message);
  // What a wallet adds is judged first, by its own rules: a known guard, one Memo, a compute budget.
  // The relay holds no copy of the prepared message; the identity (the relay token's subject, or the
  // instruction rules below) vouches for the rest.
  const verdict = checkWalletAdditions(null, message, sponsored ? sponsor : null);
  if (!verdict.ok) {
    throw refuse(
      'INSTRUCTION_NOT_ALLOWED',
      index,
      `holds what a wallet may not add: ${verdict.reason}. Cinder accepts from a wallet only its safety checks (Lighthouse assertions), one Memo and a compute budget`,
    );
  }
  // Accepted additions run their own programs (Lighthouse, Memo): allowed for them, not for anything else.
  const cinderPart = instructions.filter((i) => !isWalletAdditionKind(i) || i.program === COMPUTE_BUDGET_PROGRAM_ADDRESS);
  for (const instruction of cinderPart) {
    if (instruction.program === null || !RELAY_ALLOWED_PROGRAMS.has(instruction.program)) {
      throw refuse(
        'PROGRAM_NOT_ALLOWED',
        index,
        `calls ${instruction.program ?? 'a program loaded from an address lookup table'}; only ${allowedProgramNames()} instructions are relayed`,
      );
    }
  }
  if (!relayAny) {
    // The token is checked only for a message that needs it (a close paying out elsewhere), and
    // never for a sponsored one: the sponsor pays for closes to the owner only.
    let prepared: boolean | null = null;
    const isPrepared = () => (prepared ??= !sponsored && preparedHere(identity));
    for (const instruction of cinderPart) {
      const refusal = notCinderInstruction(instruction, sponsored ? sponsor : null);
      const why = refusal && isPrepared() ? notCinderInstruction(instruction, null, true) : refusal;
      if (why) {
        throw refuse(
          'INSTRUCTION_NOT_ALLOWED',
          index,
          `has instruction ${instruction.index} (${instructionName(instruction)}), which ${why}; this relay lands only what Cinder prepares ` +
            '(compute budget; token Burn, BurnChecked, CloseAccount, WithdrawExcessLamports to the owner; HarvestWithheldTokensToMint; the repayment of the fee sponsor) ' +
            'and what a wallet adds (its safety checks, one Memo)',
        );
      }
    }
  }
  // One transaction is atomic: a burn and the close of the same account in it are one step.
  const consumed = [...new Set(instructions.map(consumedTokenAccount).filter((a): a is Address => a !== null))];
  const { additions } = verdict;
  const feeLamports = feeOfMessage(message.header.numSignerAccounts, additions.computeBudget);
  return { index, transaction, message, identity, feePayer, sponsored, consumed, additions, feeLamports, paid: null };
}

/** Every signature but the sponsor's must be present and valid for this exact message. */
export async function assertSigned(candidate: Candidate, sponsor: Address | null): Promise<void> {
  const { transaction, index } = candidate;
  for (const [signer, signature] of Object.entries(transaction.signatures) as [Address, Uint8Array | null][]) {
    if (candidate.sponsored && signer === sponsor) continue;
    if (!signature || signature.every((b) => b === 0)) throw refuse('TRANSACTION_NOT_SIGNED', index, `is not signed by ${signer}`);
    const publicKey = await getPublicKeyFromAddress(signer);
    if (!(await verifySignature(publicKey, signature as Parameters<typeof verifySignature>[1], transaction.messageBytes))) {
      throw refuse('TRANSACTION_NOT_SIGNED', index, `has a signature of ${signer} that does not verify for this message`);
    }
  }
}

/**
 * A wallet's guard that another transaction of the same request can break (an exact, upper-bound
 * or not-equal comparison on an account the other writes: each close pays the owner rent, each
 * transaction the owner pays for charges it a fee) would fail on chain after both passed their
 * simulations. Such a transaction is refused in company, with what to do: send it on its own.
 */
export function assertGuardsHold(candidates: readonly Candidate[]): void {
  for (const candidate of candidates) {
    for (const guard of candidate.additions.guards) {
      for (const { account, comparison } of guard.breakable) {
        if (account === null) continue;
        const other = candidates.find((c) => c !== candidate && writableStaticAccounts(c.message).includes(account));
        if (!other) continue;
        throw refuse(
          'TRANSACTIONS_CONFLICT',
          candidate.index,
          `has a safety check its wallet added (instruction ${guard.index}, Lighthouse ${guard.name}) that ${describeComparison(comparison)} on ${account}, which ${field(other.index)} changes: ` +
            'whichever lands second would fail on chain. Send this transaction in a request of its own, after the others landed',
        );
      }
    }
  }
}

/** No token account is taken from twice in one request: the second transaction could only fail after both passed their simulations. */
export function assertNoOverlap(candidates: readonly Candidate[]): void {
  const takenBy = new Map<Address, number>();
  for (const candidate of candidates) {
    for (const account of candidate.consumed) {
      const other = takenBy.get(account);
      if (other !== undefined) {
        throw refuse(
          'TRANSACTIONS_CONFLICT',
          candidate.index,
          `takes from token account ${account}, as ${field(other)} does: ` +
            'each transaction is simulated on today\'s state, so one of them would fail on chain after both passed; send them in separate requests, one after the other has landed',
        );
      }
      takenBy.set(account, candidate.index);
    }
  }
}
