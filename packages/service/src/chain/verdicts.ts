/**
 * Transaction verdicts, in one place: what a signature status says (landed, failed, still in
 * flight), when a transaction the node does not know is dead ("expired" only after one more status
 * read once its blockhash can no longer land), and the status of several transactions together.
 * Everyone who reports a transaction asks here: the signature tracker, the landing step, the relay,
 * the Idempotency-Key recovery and GET /api/transactions.
 *
 * As kit's recent-signature confirmation strategy does, the reading part needs only a narrow
 * reader (`StatusReader`: signature statuses and the block height), so any caller can hand it
 * whatever reads the chain for it; the rest is pure.
 */
import type { Signature } from '@solana/kit';
import type { Commitment } from '../config.ts';
import { describeTransactionError } from './transactionError.ts';
import type { SendOutcome, SignatureStatus } from './types.ts';

/** What an operation or a transaction reports: pending → success | failed, never back. */
export type OperationStatus = 'success' | 'failed' | 'pending';

/**
 * What is known of one transaction:
 * - landed: at the commitment, or failed on chain (a failure is final at any commitment);
 * - processed: in a block, not yet at the commitment;
 * - unknown: the node has no status for it; it may land until its blockhash expires;
 * - expired: no status even after its blockhash expired, read twice: it never landed and never will;
 * - not-sent: it never left this service (`reason` says why).
 * The signature tracker's outcomes (SendOutcome) are the landed, unknown and expired verdicts.
 */
export type Verdict = SendOutcome | { kind: 'processed'; slot: bigint } | { kind: 'not-sent'; reason: string };

const COMMITMENT_RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** Whether a signature's status has reached `commitment` (confirmed is reached by finalized too). */
export function hasReachedCommitment(status: SignatureStatus | null, commitment: Commitment): boolean {
  return !!status?.confirmationStatus && COMMITMENT_RANK[status.confirmationStatus] >= COMMITMENT_RANK[commitment];
}

/** What one signature status says on its own (null: the node does not know the signature). */
export function verdictOf(status: SignatureStatus | null, commitment: Commitment): Extract<Verdict, { kind: 'landed' | 'processed' | 'unknown' }> {
  if (!status) return { kind: 'unknown' };
  if (status.err || hasReachedCommitment(status, commitment)) return { kind: 'landed', slot: status.slot, err: status.err };
  return { kind: 'processed', slot: status.slot };
}

export const EXPIRED_ERROR = 'its blockhash expired before it landed; it did nothing';

export interface VerdictReport {
  status: OperationStatus;
  slot: bigint | null;
  /** Whether the transaction is in a block and so paid its fee (it pays even when it fails on chain). */
  paidFee: boolean;
  /** Why it failed, in words; null unless failed. */
  error: string | null;
}

/** A verdict as reported: success, failed (and why) or pending. */
export function reportOf(verdict: Verdict): VerdictReport {
  switch (verdict.kind) {
    case 'landed':
      return verdict.err
        ? { status: 'failed', slot: verdict.slot, paidFee: true, error: describeTransactionError(verdict.err) }
        : { status: 'success', slot: verdict.slot, paidFee: true, error: null };
    case 'processed':
      return { status: 'pending', slot: verdict.slot, paidFee: true, error: null };
    case 'unknown':
      return { status: 'pending', slot: null, paidFee: false, error: null };
    case 'expired':
      return { status: 'failed', slot: null, paidFee: false, error: EXPIRED_ERROR };
    case 'not-sent':
      return { status: 'failed', slot: null, paidFee: false, error: verdict.reason };
  }
}

/** Several transactions together: failed if any failed, else pending if any is pending, else success. */
export function overallStatus(statuses: readonly OperationStatus[]): OperationStatus {
  if (statuses.includes('failed')) return 'failed';
  if (statuses.includes('pending')) return 'pending';
  return 'success';
}

/** What the verdicts need of the chain. */
export interface StatusReader {
  readonly commitment: Commitment;
  /** Each signature's status (null: unknown to the node), searching the whole history. */
  getSignatureStatuses(signatures: readonly Signature[], deadline: number): Promise<(SignatureStatus | null)[]>;
  getBlockHeight(deadline: number): Promise<bigint>;
}

/** The verdict of each signature from one status read: landed, processed or unknown. */
export async function readVerdicts(reader: StatusReader, signatures: readonly Signature[], deadline: number) {
  const statuses = await reader.getSignatureStatuses(signatures, deadline);
  return signatures.map((_, i) => verdictOf(statuses[i] ?? null, reader.commitment));
}

export interface SentSignature {
  signature: Signature;
  /** The last block height at which its blockhash lets it land. */
  lastValidBlockHeight: bigint;
}

/**
 * For transactions the node did not know: still `unknown` while the chain is at or below their
 * last valid block height; past it, one more status read (it may have landed between the two
 * calls), and only a signature still unknown then is `expired`. One block-height read, and one
 * status read for the expired ones, whatever their number; none when `unknown` is empty.
 */
export async function expireUnknown(reader: StatusReader, unknown: readonly SentSignature[], deadline: number): Promise<Verdict[]> {
  if (unknown.length === 0) return [];
  const blockHeight = await reader.getBlockHeight(deadline);
  const verdicts: Verdict[] = unknown.map(() => ({ kind: 'unknown' }));
  const past = unknown.flatMap((sent, i) => (blockHeight > sent.lastValidBlockHeight ? [i] : []));
  if (past.length === 0) return verdicts;
  const late = await reader.getSignatureStatuses(past.map((i) => unknown[i]!.signature), deadline);
  past.forEach((i, j) => {
    const status = late[j] ?? null;
    verdicts[i] = status ? verdictOf(status, reader.commitment) : { kind: 'expired' };
  });
  return verdicts;
}

/** The verdict of each sent transaction now: one status read, then `expireUnknown` for those the node does not know. */
export async function readSentVerdicts(reader: StatusReader, sent: readonly SentSignature[], deadline: number): Promise<Verdict[]> {
  const verdicts: Verdict[] = await readVerdicts(reader, sent.map((s) => s.signature), deadline);
  const unknown = sent.flatMap((s, i) => (verdicts[i]!.kind === 'unknown' ? [i] : []));
  const settled = await expireUnknown(reader, unknown.map((i) => sent[i]!), deadline);
  unknown.forEach((i, j) => {
    verdicts[i] = settled[j]!;
  });
  return verdicts;
}
