/**
 * POST /api/transactions/statuses: the status of many transactions in one request, optionally
 * held open until one of them settles (a long poll). A page or CLI following a job of dozens of
 * transactions learns each landing from one open request instead of one poll per signature: the
 * server reads all of them with one getSignatureStatuses per round, and answers as soon as any
 * listed transaction is no longer pending.
 */
import { isSignature, type Signature } from '@solana/kit';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';
import { expireUnknown, readVerdicts, reportOf, type Verdict } from '../../chain/verdicts.ts';
import { CinderError } from '../../errors.ts';
import { isSecretKeyText } from '../../keys/detectSecretKey.ts';
import type { SentTransactionLog } from '../../store/sentTransactions.ts';

/** Signatures per request: 128 base58 signatures (≤ 88 characters each) stay well inside the 16 KiB body limit. */
export const MAX_STATUS_SIGNATURES = 128;
/** The longest a request is held open; below the 15 s any status answer is bounded by. */
export const MAX_STATUS_WAIT_MS = 10_000;
/** How often an open request reads the chain again: well inside the half second a landing should take to be seen. */
const ROUND_MS = 200;

export const TransactionStatusesRequestSchema = Type.Object(
  {
    signatures: Type.Array(Type.String({ minLength: 1, maxLength: 100, description: 'A transaction signature (base58)' }), {
      minItems: 1,
      maxItems: MAX_STATUS_SIGNATURES,
      description: `1 to ${MAX_STATUS_SIGNATURES} transaction signatures`,
    }),
    waitMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_STATUS_WAIT_MS,
        description:
          'Hold the request open until at least one listed transaction is no longer pending, for at most this long (0, the default: answer at once). A transaction already settled answers at once.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TransactionStatusesResponseSchema = Type.Object({
  transactions: Type.Array(
    Type.Object({
      signature: Type.String(),
      status: Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed'), Type.Literal('unknown')], {
        description: "pending → success | failed, never back; 'unknown': neither the chain nor this service has a record of it",
      }),
      slot: Type.Union([Type.Integer(), Type.Null()]),
      error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, in words (failed on chain, or expired without landing); null otherwise' }),
    }),
    { description: 'One entry per signature asked for, in the same order' },
  ),
});

type Entry = { signature: Signature; status: 'pending' | 'success' | 'failed' | 'unknown'; slot: number | null; error: string | null };

function checkSignatures(signatures: readonly string[]): Signature[] {
  // A 64-byte key is a well-formed "signature" and would otherwise be sent to the RPC in
  // getSignatureStatuses: refused without being echoed (the contract's rule for keys anywhere).
  const keys = signatures.flatMap((s, i) => (isSecretKeyText(s) ? [i] : []));
  if (keys.length > 0) {
    throw new CinderError('INVALID_SIGNATURE', { reason: 'listedKey' }, {
      errors: keys.map((i) => ({ field: `signatures[${i}]`, message: 'is a private key, not a signature' })),
    });
  }
  const bad = signatures.flatMap((s, i) => (isSignature(s) ? [] : [i]));
  if (bad.length > 0) {
    throw new CinderError('INVALID_SIGNATURE', { reason: 'listedNotSignatures', count: bad.length }, {
      errors: bad.map((i) => ({ field: `signatures[${i}]`, message: 'is not a base58 signature of 64 bytes' })),
    });
  }
  return signatures as Signature[];
}

export function registerTransactionStatusesRoute(
  app: CinderApp,
  { chain, sentTransactions }: Pick<AppDeps, 'chain'> & { sentTransactions: SentTransactionLog },
): void {
  /** Every signature's status now: one status read, and one block-height read for those the node does not know. */
  async function readAll(signatures: readonly Signature[], deadline: number): Promise<Entry[]> {
    const verdicts: (Verdict | null)[] = await readVerdicts(chain, signatures, deadline);
    const unknown = signatures.flatMap((_, i) => (verdicts[i]!.kind === 'unknown' ? [i] : []));
    const sent: { index: number; lastValidBlockHeight: bigint }[] = [];
    for (const i of unknown) {
      const lastValidBlockHeight = await sentTransactions.lastValidBlockHeightOf(signatures[i]!).catch(() => null);
      if (lastValidBlockHeight === null) verdicts[i] = null;
      else sent.push({ index: i, lastValidBlockHeight });
    }
    const settled = await expireUnknown(chain, sent.map(({ index, lastValidBlockHeight }) => ({ signature: signatures[index]!, lastValidBlockHeight })), deadline);
    sent.forEach(({ index }, j) => {
      verdicts[index] = settled[j]!;
    });
    return signatures.map((signature, i) => {
      const verdict = verdicts[i]!;
      if (verdict === null) return { signature, status: 'unknown', slot: null, error: null };
      const { status, slot, error } = reportOf(verdict);
      return { signature, status, slot: slot === null ? null : Number(slot), error };
    });
  }

  app.post(
    '/transactions/statuses',
    {
      config: { problemCodes: ['INVALID_SIGNATURE', 'RPC_UNAVAILABLE', ...JSON_BODY_PROBLEMS, ...API_PROBLEMS] },
      schema: {
        summary: 'The status of many transactions at once, optionally waiting for the next landing',
        description:
          'Each signature: pending → success | failed, never back; unknown when neither the chain nor this service has a record of it. ' +
          'With waitMs, the answer comes as soon as any listed transaction is no longer pending (send only those still pending to follow a job), or after waitMs.',
        tags: ['burn'],
        body: TransactionStatusesRequestSchema,
        response: {
          200: TransactionStatusesResponseSchema,
          400: Type.Ref('Problem'),
          401: Type.Ref('Problem'),
          413: Type.Ref('Problem'),
          415: Type.Ref('Problem'),
          429: Type.Ref('Problem'),
          503: Type.Ref('Problem'),
        },
      },
    },
    async (request) => {
      const signatures = checkSignatures(request.body.signatures);
      const waitUntil = Date.now() + (request.body.waitMs ?? 0);
      for (;;) {
        const entries = await readAll(signatures, Date.now() + 15_000);
        const settled = entries.some((e) => e.status === 'success' || e.status === 'failed');
        // A client that went away needs no more rounds of reading the chain for it.
        if (settled || Date.now() + ROUND_MS > waitUntil || request.raw.destroyed) return { transactions: entries };
        await new Promise((resolve) => setTimeout(resolve, ROUND_MS));
      }
    },
  );
}
