/**
 * The last step of the pipeline: signed transactions handed to the landing engine, and what
 * became of each. Shared by keyed burns and reclaims and by the relay of transactions signed
 * elsewhere: none of it assumes Cinder signed what it sends.
 */
import type { Base64EncodedWireTransaction, Signature } from '@solana/kit';
import type { ChainAdapter, SendOutcome } from '../chain/chainAdapter.ts';
import { describeTransactionError } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';

export type OperationStatus = 'success' | 'failed' | 'pending';

export interface SignedForSending {
  wire: Base64EncodedWireTransaction;
  signature: Signature;
  lastValidBlockHeight: bigint;
}

export type LandingOutcome = SendOutcome | { kind: 'not-sent' };

/** Told the signatures right before the first is sent (idempotency records them, so a retry after a crash finds them). */
export type BeforeSend = (signatures: Signature[], lastValidBlockHeight: bigint) => Promise<void>;

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
  beforeSend?: BeforeSend,
): Promise<LandingOutcome[]> {
  if (beforeSend && transactions.length > 0) {
    const lastValid = transactions.reduce((max, t) => (t.lastValidBlockHeight > max ? t.lastValidBlockHeight : max), 0n);
    await beforeSend(
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
    throw new CinderError('RPC_UNAVAILABLE', 'The Solana RPC node could not be reached to send the transactions; nothing was sent. Try again shortly.', {
      headers: { 'retry-after': '5' },
    });
  }
  return outcomes;
}

export interface LandingReport {
  status: OperationStatus;
  slot: bigint | null;
  /** Whether the transaction landed and paid its fee (it pays even when it fails on chain). */
  paidFee: boolean;
  error: string | null;
}

export function reportLanding(outcome: LandingOutcome): LandingReport {
  switch (outcome.kind) {
    case 'not-sent':
      return { status: 'failed', slot: null, paidFee: false, error: 'the RPC node could not be reached; not sent' };
    case 'landed':
      return {
        status: outcome.err ? 'failed' : 'success',
        slot: outcome.slot,
        paidFee: true,
        error: outcome.err ? describeTransactionError(outcome.err) : null,
      };
    case 'expired':
      return { status: 'failed', slot: null, paidFee: false, error: 'its blockhash expired before it landed; it did nothing' };
    case 'unknown':
      return { status: 'pending', slot: null, paidFee: false, error: null };
  }
}

/** failed if any failed, else pending if any is pending, else success. */
export function overallStatus(statuses: readonly OperationStatus[]): OperationStatus {
  if (statuses.includes('failed')) return 'failed';
  if (statuses.includes('pending')) return 'pending';
  return 'success';
}
