/**
 * The last step of the pipeline: signed transactions handed to the landing engine, and what
 * became of each. Shared by keyed burns and reclaims and by the relay of transactions signed
 * elsewhere: none of it assumes Cinder signed what it sends.
 */
import type { Base64EncodedWireTransaction, Signature } from '@solana/kit';
import type { ChainAdapter, SendOutcome } from '../chain/types.ts';
import { reportOf, type VerdictReport } from '../chain/verdicts.ts';
import { CinderError } from '../errors.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';

// The verdicts' own names, kept here for the pipeline's and the relay's callers (src/chain/verdicts.ts decides).
export { overallStatus, type OperationStatus } from '../chain/verdicts.ts';

export interface SignedForSending {
  wire: Base64EncodedWireTransaction;
  signature: Signature;
  lastValidBlockHeight: bigint;
}

export type LandingOutcome = SendOutcome | { kind: 'not-sent' };

/**
 * Told the signatures right before the first is sent (the caller records them: its lock's hold for
 * landing, an Idempotency-Key record, so a retry after a crash finds them). Throwing sends nothing.
 */
export type RecordSent = (signatures: Signature[], lastValidBlockHeight: bigint) => Promise<void>;

export interface LandingDeps {
  chain: ChainAdapter;
  sentTransactions: SentTransactionLog;
}

/**
 * Sends every transaction and follows each until it lands, expires or the deadline passes. When
 * none could even be handed to the RPC, nothing was sent: 503, so the caller may retry.
 */
export async function landTransactions(
  { chain, sentTransactions }: LandingDeps,
  transactions: readonly SignedForSending[],
  deadline: number,
  recordSent?: RecordSent,
): Promise<LandingOutcome[]> {
  if (recordSent && transactions.length > 0) {
    const lastValid = transactions.reduce((max, t) => (t.lastValidBlockHeight > max ? t.lastValidBlockHeight : max), 0n);
    await recordSent(
      transactions.map((t) => t.signature),
      lastValid,
    );
  }
  const outcomes = await Promise.all(
    transactions.map(async (transaction): Promise<LandingOutcome> => {
      // Recorded first, so GET /api/transactions can say `pending` for it from any instance. Best
      // effort: without the record that endpoint answers 404 until the transaction lands.
      await sentTransactions.record(transaction.signature, transaction.lastValidBlockHeight).catch(() => undefined);
      try {
        return await chain.sendAndConfirm(transaction, deadline);
      } catch (error) {
        if (error instanceof CinderError && error.code === 'RPC_UNAVAILABLE') return { kind: 'not-sent' };
        throw error;
      }
    }),
  );
  if (outcomes.length > 0 && outcomes.every((o) => o.kind === 'not-sent')) {
    throw new CinderError('RPC_UNAVAILABLE', { reason: 'cannotSend' }, {
      headers: { 'retry-after': '5' },
    });
  }
  return outcomes;
}

export type LandingReport = VerdictReport;

/** What became of a transaction handed to the landing engine, as reported. */
export function reportLanding(outcome: LandingOutcome): LandingReport {
  return reportOf(outcome.kind === 'not-sent' ? { kind: 'not-sent', reason: 'the RPC node could not be reached; not sent' } : outcome);
}
