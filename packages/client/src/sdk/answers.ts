/**
 * Answers in one shape: each reader checks the fields the SDK relies on before it hands an answer
 * over typed, and refuses one it cannot read with INVALID_RESPONSE (never a TypeError later, in the
 * caller's code). A burn is read in any form of the specification (A, B, or Cinder's A+B).
 */
import type * as Api from '@cinder/service';
import { invalidResponse } from './errors.ts';
import { isNonEmptyString, isObject } from './guards.ts';
import type { BurnDetails, BurnResult, OperationResult, ResultStatus, TransactionStatusesEntry, TransactionStatusResult } from './types.ts';

const STATUSES: readonly string[] = ['success', 'failed', 'pending'] satisfies Api.TransactionStatus[];

function statusOf(value: unknown): ResultStatus {
  return typeof value === 'string' && STATUSES.includes(value) ? (value as Api.TransactionStatus) : 'unknown';
}

/** The signatures of an answer's details, or the one transaction id when it lists none. */
function signaturesOf(details: Record<string, unknown> | null, id: string): string[] {
  const listed = details?.signatures;
  return Array.isArray(listed) && listed.length > 0 && listed.every(isNonEmptyString) ? [...listed] : [id];
}

/**
 * Normalises a burn answer of any form (used by burnTokens; exported for callers with their own HTTP).
 *
 * @example
 * ```ts
 * const answer = await (await fetch(`${base}/api/burn_tokens`, { method: 'POST', headers, body })).json();
 * const burn = normaliseBurnResult(answer); // Form B's { tx_hash } too
 * console.log(burn.form, burn.status, burn.signatures);
 * ```
 */
export function normaliseBurnResult(body: unknown): BurnResult {
  if (!isObject(body)) throw invalidResponse('The burn answer is not a JSON object');
  const { transactionId, tx_hash: txHash } = body;
  const hasA = transactionId !== undefined;
  const hasB = txHash !== undefined;
  if (hasA && !isNonEmptyString(transactionId)) throw invalidResponse('The burn answer has a transactionId that is not a string');
  if (hasB && !isNonEmptyString(txHash)) throw invalidResponse('The burn answer has a tx_hash that is not a string');
  if (!hasA && !hasB) throw invalidResponse('The burn answer has neither transactionId (Form A) nor tx_hash (Form B)');
  if (hasA && hasB && transactionId !== txHash) throw invalidResponse('The burn answer has a transactionId and a tx_hash that differ');
  const id = (hasA ? transactionId : txHash) as string;
  const details = isObject(body.details) ? body.details : null;
  return {
    transactionId: id,
    status: hasA ? statusOf(body.status) : 'unknown',
    message: typeof body.message === 'string' ? body.message : null,
    signatures: signaturesOf(details, id),
    details: details as BurnDetails | null,
    form: hasA && hasB ? 'A+B' : hasA ? 'A' : 'B',
  };
}

export function normaliseTransaction(body: unknown, signature: string): TransactionStatusResult {
  if (!isObject(body)) throw invalidResponse('The transaction answer is not a JSON object');
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : signature;
  return {
    transactionId: id,
    status: statusOf(body.status),
    message: typeof body.message === 'string' ? body.message : null,
    slot: typeof body.slot === 'number' ? body.slot : null,
  };
}

/** POST /api/transactions/statuses: one entry per signature asked for, in order, or an invalid-response error. */
export function normaliseTransactions(body: unknown, signatures: readonly string[]): TransactionStatusesEntry[] {
  const listed = isObject(body) ? body.transactions : undefined;
  if (!Array.isArray(listed) || listed.length !== signatures.length) throw invalidResponse('The statuses answer does not list every signature asked for');
  return signatures.map((signature, i) => {
    const entry: unknown = listed[i];
    if (!isObject(entry) || entry.signature !== signature) throw invalidResponse('The statuses answer is not in the order asked for');
    return {
      signature,
      status: statusOf(entry.status),
      slot: typeof entry.slot === 'number' ? entry.slot : null,
      error: typeof entry.error === 'string' ? entry.error : null,
    };
  });
}

/** A reclaim's or relay's answer (Cinder's combined form: transactionId, status, message, tx_hash, details) in the SDK's shape. */
export function normaliseOperation<Details>(body: unknown, what: string): OperationResult<Details> {
  if (!isObject(body)) throw invalidResponse(`The ${what} answer is not a JSON object`);
  const id = isNonEmptyString(body.transactionId) ? body.transactionId : isNonEmptyString(body.tx_hash) ? body.tx_hash : undefined;
  if (id === undefined) throw invalidResponse(`The ${what} answer has no transactionId`);
  const details = isObject(body.details) ? body.details : null;
  return {
    transactionId: id,
    status: statusOf(body.status),
    message: typeof body.message === 'string' ? body.message : null,
    signatures: signaturesOf(details, id),
    details: details as Details | null,
  };
}

export function normalisePreview(body: unknown): Api.ReclaimPreviewResponse {
  if (!isObject(body) || !isNonEmptyString(body.owner) || !Array.isArray(body.accounts) || !isObject(body.summary)) {
    throw invalidResponse('The preview answer has no owner, accounts and summary');
  }
  return body as unknown as Api.ReclaimPreviewResponse;
}

export function normalisePreparedMany(body: unknown): Api.PrepareReclaimManyResponse {
  if (!isObject(body) || !Array.isArray(body.transactions) || !body.transactions.every((t) => isObject(t) && isNonEmptyString(t.transaction) && Array.isArray(t.signers))) {
    throw invalidResponse('The prepare answer has no transactions with their signers');
  }
  return body as unknown as Api.PrepareReclaimManyResponse;
}

export function normalisePreviewMany(body: unknown): Api.ReclaimManyPreviewResponse {
  if (!isObject(body) || !Array.isArray(body.owners) || !isNonEmptyString(body.totalReclaimableLamports)) {
    throw invalidResponse('The preview answer has no owners and totalReclaimableLamports');
  }
  return body as unknown as Api.ReclaimManyPreviewResponse;
}

export function normalisePrepared(body: unknown): Api.PrepareResponse {
  if (!isObject(body) || !Array.isArray(body.transactions) || body.transactions.length === 0 || !body.transactions.every(isNonEmptyString)) {
    throw invalidResponse('The prepare answer has no transactions');
  }
  return body as unknown as Api.PrepareResponse;
}
