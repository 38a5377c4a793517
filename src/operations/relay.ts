/**
 * The relay (POST /api/transactions): transactions signed elsewhere (Phantom, a Ledger, the
 * `solana` CLI, @solana/kit), checked and handed to the shared landing engine. Nothing is sent
 * unless every transaction of the request passes every check:
 *
 * 1. it decodes (kit's transaction and compiled-message decoders) to exactly the bytes given;
 * 2. every instruction belongs to Compute Budget, System, SPL Token, Token-2022 or Associated Token;
 * 3. every signature is present and verifies against its signer's public key (WebCrypto), except
 *    the fee sponsor's, which the relay adds itself, and only to a message that a relay token
 *    proves this service prepared (src/operations/relayToken.ts), that uses the sponsor as fee
 *    payer and nothing else, and that repays the sponsor at least its whole fee;
 * 4. a simulation of the signed transaction (signatures and blockhash checked) succeeds.
 *
 * Idempotent by signature: a transaction the chain already knows is reported, not simulated;
 * identical requests in flight in this process share one landing, and the tracker under
 * landTransactions shares one landing loop per signature (rebroadcasting identical bytes can never
 * act twice: the signature is the transaction's identity).
 */
import {
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getPublicKeyFromAddress,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  verifySignature,
  type Address,
  type CompiledTransactionMessage,
  type LegacyCompiledTransactionMessage,
  type ReadonlyUint8Array,
  type V0CompiledTransactionMessage,
  type Signature,
  type Transaction,
} from '@solana/kit';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from '@solana-program/compute-budget';
import { getTransferSolInstructionDataDecoder, identifySystemInstruction, SYSTEM_PROGRAM_ADDRESS, SystemInstruction } from '@solana-program/system';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { formatSol, priorityFeeCharged } from '../plan/priorityFee.ts';
import { hasReachedCommitment, type ChainAdapter, type SignatureStatus } from '../chain/chainAdapter.ts';
import { describeTransactionError } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';
import type { Sponsor } from '../keys/sponsor.ts';
import { BASE_FEE_LAMPORTS_PER_SIGNATURE } from '../plan/money.ts';
import { MAX_COMPUTE_UNIT_LIMIT, TRANSACTION_SIZE_LIMIT } from '../plan/pack.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';
import { landTransactions, overallStatus, reportLanding, type OperationStatus, type SignedForSending } from './land.ts';
import { checkRelayToken } from './relayToken.ts';

/** The programs whose instructions the relay lands; anything else is PROGRAM_NOT_ALLOWED. */
export const RELAY_ALLOWED_PROGRAMS: ReadonlyMap<Address, string> = new Map<Address, string>([
  [COMPUTE_BUDGET_PROGRAM_ADDRESS, 'Compute Budget'],
  [SYSTEM_PROGRAM_ADDRESS, 'System'],
  [TOKEN_PROGRAM_ADDRESS, 'SPL Token'],
  [TOKEN_2022_PROGRAM_ADDRESS, 'Token-2022'],
  [ASSOCIATED_TOKEN_PROGRAM_ADDRESS, 'Associated Token'],
]);

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
  sponsor: Sponsor | null;
  /** SERVER_SECRET: the key of relay tokens. Without it no token is valid, so the sponsor signs nothing. */
  serverSecret: string | undefined;
  burnDeadlineMs: number;
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
  error: string | null;
}

export interface RelayResult {
  status: OperationStatus;
  message: string;
  signatures: Signature[];
  slot: bigint | null;
  transactions: RelayedTransactionReport[];
}

interface Candidate {
  index: number;
  transaction: Transaction;
  /** Legacy or version 0: the versions the relay accepts. */
  message: LegacyCompiledTransactionMessage | V0CompiledTransactionMessage;
  feePayer: Address;
  sponsored: boolean;
}

/** The problem's field name (problem.ts shows names of letters, digits, `_`, `.` and `-` only). */
const field = (index: number) => `transactions.${index}`;

function refuse(code: 'INVALID_TRANSACTION' | 'TRANSACTION_NOT_SIGNED' | 'PROGRAM_NOT_ALLOWED' | 'TRANSACTION_REJECTED', index: number, problem: string): CinderError {
  return new CinderError(code, `${field(index)} ${problem}. Nothing was sent.`, { errors: [{ field: field(index), message: problem }] });
}

const base64 = getBase64Encoder();
const transactionDecoder = getTransactionDecoder();
const messageEncoder = getCompiledTransactionMessageEncoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

function decodeCandidate(wire: string, index: number, sponsor: Address | null): Candidate {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(wire) || wire.length % 4 !== 0) throw refuse('INVALID_TRANSACTION', index, 'is not base64');
  const bytes = new Uint8Array(base64.encode(wire));
  if (bytes.length > TRANSACTION_SIZE_LIMIT) {
    throw refuse('INVALID_TRANSACTION', index, `is ${bytes.length} bytes, over the ${TRANSACTION_SIZE_LIMIT}-byte limit of a transaction`);
  }
  let transaction: Transaction;
  let message: CompiledTransactionMessage;
  try {
    transaction = transactionDecoder.decode(bytes);
    message = messageDecoder.decode(transaction.messageBytes);
  } catch {
    throw refuse('INVALID_TRANSACTION', index, 'is not a Solana wire transaction');
  }
  if (message.version !== 'legacy' && message.version !== 0) {
    throw refuse('INVALID_TRANSACTION', index, `is a version ${message.version} transaction; only legacy and version 0 transactions are relayed`);
  }
  // The message decoder stops where the message ends: bytes after it would be signed but ignored.
  const reencoded = messageEncoder.encode(message);
  if (reencoded.length !== transaction.messageBytes.length || !reencoded.every((b, i) => b === transaction.messageBytes[i])) {
    throw refuse('INVALID_TRANSACTION', index, 'has bytes after the end of the transaction');
  }
  const feePayer = message.staticAccounts[0];
  if (!feePayer) throw refuse('INVALID_TRANSACTION', index, 'has no fee payer');
  for (const instruction of message.instructions) {
    const program = message.staticAccounts[instruction.programAddressIndex];
    if (!program || !RELAY_ALLOWED_PROGRAMS.has(program)) {
      throw refuse(
        'PROGRAM_NOT_ALLOWED',
        index,
        `calls ${program ?? 'a program loaded from an address lookup table'}; only ${[...RELAY_ALLOWED_PROGRAMS.values()].join(', ')} instructions are relayed`,
      );
    }
  }
  return { index, transaction, message, feePayer, sponsored: sponsor !== null && feePayer === sponsor };
}

/** Every signature but the sponsor's must be present and valid for this exact message. */
async function assertSigned(candidate: Candidate, sponsor: Address | null): Promise<void> {
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

function relayTokenInvalid(detail: string): CinderError {
  return new CinderError('RELAY_TOKEN_INVALID', `${detail} Nothing was sent.`, { errors: [{ field: 'relayToken', message: detail }] });
}

/**
 * Defence in depth behind the relay token: in a message for the sponsor to sign, the sponsor is
 * the fee payer and otherwise only the destination of System transfers, and those transfers
 * repay at least the whole fee of the transaction (base fee per signature + priority fee, as the
 * runtime charges it). Returns the fee.
 */
/** kit's identify* helpers throw on a discriminator they do not know: that is simply "not this one". */
function kindOf<T>(identify: (data: ReadonlyUint8Array) => T, data: ReadonlyUint8Array): T | null {
  try {
    return data.length > 0 ? identify(data) : null;
  } catch {
    return null;
  }
}

function assertSponsorOnlyPaysFees(candidate: Candidate, sponsor: Address): bigint {
  const { message, index } = candidate;
  const refuseSponsor = (problem: string) =>
    new CinderError('RELAY_TOKEN_INVALID', `${field(index)} ${problem}; the fee sponsor does not sign it. Nothing was sent.`, {
      errors: [{ field: field(index), message: problem }],
    });
  if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) throw refuseSponsor('uses address lookup tables');
  let limit: number | null = null;
  let price = 0n;
  let repaid = 0n;
  let otherInstructions = 0;
  for (const instruction of message.instructions) {
    const program = message.staticAccounts[instruction.programAddressIndex]!;
    const data: ReadonlyUint8Array = instruction.data ?? new Uint8Array();
    const accounts = instruction.accountIndices ?? [];
    if (program === COMPUTE_BUDGET_PROGRAM_ADDRESS) {
      const kind = kindOf(identifyComputeBudgetInstruction, data);
      if (kind === ComputeBudgetInstruction.SetComputeUnitLimit && data.length === 5) limit = getSetComputeUnitLimitInstructionDataDecoder().decode(data).units;
      else if (kind === ComputeBudgetInstruction.SetComputeUnitPrice && data.length === 9) price = getSetComputeUnitPriceInstructionDataDecoder().decode(data).microLamports;
      continue;
    }
    otherInstructions++;
    const isRepayment =
      program === SYSTEM_PROGRAM_ADDRESS &&
      data.length === 12 &&
      kindOf(identifySystemInstruction, data) === SystemInstruction.TransferSol &&
      accounts.length === 2 &&
      accounts[1] === 0 &&
      accounts[0] !== 0;
    if (isRepayment) repaid += getTransferSolInstructionDataDecoder().decode(data).amount;
    else if (accounts.includes(0)) throw refuseSponsor(`uses the fee sponsor ${sponsor} in an instruction other than its repayment`);
  }
  // The runtime's default limit without SetComputeUnitLimit: 200,000 per instruction, at most 1.4 M.
  const units = limit ?? Math.min(MAX_COMPUTE_UNIT_LIMIT, 200_000 * otherInstructions);
  const fee = BASE_FEE_LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + priorityFeeCharged(price, units);
  if (repaid < fee) {
    throw refuseSponsor(`repays the fee sponsor ${formatSol(repaid)} SOL of its ${formatSol(fee)} SOL fee`);
  }
  return fee;
}

function simulationRefusal(candidate: Candidate, err: unknown): CinderError {
  if (candidate.sponsored && (err === 'InsufficientFundsForFee' || err === 'AccountNotFound')) {
    return new CinderError('SPONSOR_UNAVAILABLE', 'The fee sponsor cannot pay fees right now. Nothing was sent; try again later.', {
      headers: { 'retry-after': '30' },
    });
  }
  if (err === 'BlockhashNotFound') {
    return refuse('TRANSACTION_REJECTED', candidate.index, 'has a blockhash that expired (or that this node does not know): prepare and sign it again');
  }
  if (err === 'SignatureFailure') return refuse('TRANSACTION_NOT_SIGNED', candidate.index, 'has a signature that does not verify');
  return refuse('TRANSACTION_REJECTED', candidate.index, `would fail on chain (${describeTransactionError(err)})`);
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

/** The report of a transaction the chain already knows, when its status is final. */
function finalReport(signature: Signature, sponsored: boolean, status: SignatureStatus | null, commitment: ChainAdapter['commitment']): RelayedTransactionReport | null {
  if (!status) return null;
  if (status.err) return { signature, status: 'failed', slot: status.slot, sponsored, error: describeTransactionError(status.err) };
  if (hasReachedCommitment(status, commitment)) return { signature, status: 'success', slot: status.slot, sponsored, error: null };
  return null;
}

export function createRelay(deps: RelayDeps) {
  const { chain } = deps;
  const sponsorAddress = deps.sponsor?.signer.address ?? null;
  /** Relays in flight, by their signatures: an identical request joins the running one. */
  const inFlight = new Map<string, Promise<RelayResult>>();

  async function land(candidates: readonly Candidate[], transactions: readonly Transaction[], deadline: number): Promise<RelayResult> {
    const signatures = transactions.map((t) => getSignatureFromTransaction(t));
    const statuses = await chain.getSignatureStatuses(signatures, deadline);
    const reports: (RelayedTransactionReport | null)[] = signatures.map((s, i) =>
      finalReport(s, candidates[i]!.sponsored, statuses[i]!, chain.commitment),
    );

    // Only what the chain does not know yet is simulated: a known signature was already checked
    // by the chain itself, and simulating it again would only say AlreadyProcessed.
    const unknown = candidates.filter((_, i) => statuses[i] === null);
    const wires = transactions.map((t) => getBase64EncodedWireTransaction(t));
    const simulations = await Promise.all(unknown.map((c) => chain.simulate(wires[c.index]!, deadline, { signed: true })));
    unknown.forEach((candidate, j) => {
      const err = simulations[j]!.err;
      // AlreadyProcessed: it landed between the status read and the simulation; the tracker reports it.
      if (err && err !== 'AlreadyProcessed') throw simulationRefusal(candidate, err);
    });

    const toLand = candidates.filter((_, i) => reports[i] === null);
    if (toLand.length > 0) {
      const lastValidBlockHeight = (await chain.getBlockHeight(deadline)) + BLOCKHASH_VALIDITY_BLOCKS + PROCESSED_AHEAD_MARGIN_BLOCKS;
      const sending: SignedForSending[] = toLand.map((c) => ({ wire: wires[c.index]!, signature: signatures[c.index]!, lastValidBlockHeight }));
      const outcomes = await landTransactions(deps, sending, deadline);
      toLand.forEach((candidate, j) => {
        const report = reportLanding(outcomes[j]!);
        reports[candidate.index] = { signature: signatures[candidate.index]!, status: report.status, slot: report.slot, sponsored: candidate.sponsored, error: report.error };
      });
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
      throw new CinderError('VALIDATION_FAILED', `transactions must hold 1 to ${MAX_RELAY_TRANSACTIONS} transactions.`, {
        errors: [{ field: 'transactions', message: `must hold 1 to ${MAX_RELAY_TRANSACTIONS} transactions` }],
      });
    }
    const candidates = request.transactions.map((wire, i) => decodeCandidate(wire, i, sponsorAddress));
    for (const candidate of candidates) await assertSigned(candidate, sponsorAddress);

    // The sponsor signs only messages this service prepared (relay token), only as fee payer.
    const sponsored = candidates.filter((c) => c.sponsored);
    let tokenExpired = false;
    if (sponsored.length > 0) {
      if (!request.relayToken) {
        throw relayTokenInvalid(
          `The fee payer of ${sponsored.map((c) => field(c.index)).join(', ')} is this service's fee sponsor, which signs only transactions this service prepared: send the relayToken of the prepare answer.`,
        );
      }
      const check = deps.serverSecret
        ? checkRelayToken(deps.serverSecret, request.relayToken, sponsored.map((c) => c.transaction.messageBytes))
        : 'invalid';
      if (check === 'invalid') {
        throw relayTokenInvalid('relayToken was not issued by this service for these exact transactions, so the fee sponsor does not sign them.');
      }
      tokenExpired = check === 'expired';
      for (const candidate of sponsored) assertSponsorOnlyPaysFees(candidate, sponsorAddress!);
    }
    const transactions = await Promise.all(
      candidates.map((c) => (c.sponsored ? partiallySignTransaction([deps.sponsor!.signer.keyPair], c.transaction) : c.transaction)),
    );

    if (tokenExpired) {
      // An expired token still proves the message is ours, so its (deterministic) signature is the
      // one a relay in time would have sent: report it if the chain knows it, never send it anew.
      const statuses = await chain.getSignatureStatuses(sponsored.map((c) => getSignatureFromTransaction(transactions[c.index]!)), deadline);
      if (statuses.some((s) => s === null)) {
        throw relayTokenInvalid('relayToken has expired (so has the blockhash of its transactions): prepare and sign them again.');
      }
    }

    const key = transactions.map((t) => getSignatureFromTransaction(t)).join(',');
    const running = inFlight.get(key);
    if (running) return running;
    const landing = land(candidates, transactions, deadline).finally(() => inFlight.delete(key));
    inFlight.set(key, landing);
    return landing;
  };
}

export type Relay = ReturnType<typeof createRelay>;
