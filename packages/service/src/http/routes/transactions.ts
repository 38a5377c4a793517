import { isSignature } from '@solana/kit';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS } from '../routeConfig.ts';
import { expireUnknown, readVerdicts, reportOf, type Verdict } from '../../chain/verdicts.ts';
import type { Commitment } from '../../config.ts';
import { CinderError } from '../../errors.ts';
import { isSecretKeyText } from '../../keys/detectSecretKey.ts';
import type { SentTransactionLog } from '../../store/sentTransactions.ts';

export const TransactionStatusSchema = Type.Object({
  transactionId: Type.String(),
  tx_hash: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('success'), Type.Literal('failed')]),
  message: Type.String(),
  slot: Type.Optional(Type.Integer()),
});

export function registerTransactionsRoute(
  app: CinderApp,
  { chain, sentTransactions }: Pick<AppDeps, 'chain'> & { sentTransactions: SentTransactionLog },
): void {
  app.get(
    '/transactions/:signature',
    {
      config: {
        problemCodes: ['INVALID_SIGNATURE', 'TRANSACTION_NOT_FOUND', 'RPC_UNAVAILABLE', ...API_PROBLEMS],
      },
      schema: {
        summary: 'The current status of a burn transaction',
        description: 'pending → success | failed, never back. A signature the chain does not know is 404.',
        tags: ['burn'],
        params: Type.Object({ signature: Type.String({ description: 'Transaction signature (base58)' }) }),
        response: { 200: TransactionStatusSchema, 400: Type.Ref('Problem'), 401: Type.Ref('Problem'), 404: Type.Ref('Problem'), 429: Type.Ref('Problem'), 503: Type.Ref('Problem') },
      },
    },
    async (request) => {
      const { signature } = request.params;
      // The edge refuses a key anywhere in a URL before any route runs (src/http/edge.ts); this is
      // the same check where it matters most: a 64-byte key is a well-formed "signature" and would
      // otherwise be sent to the RPC in getSignatureStatuses.
      if (isSecretKeyText(signature)) {
        throw new CinderError('PRIVATE_KEY_IN_URL', { reason: 'signaturePath' });
      }
      if (!isSignature(signature)) {
        throw new CinderError('INVALID_SIGNATURE', { reason: 'notSignature' }, { errors: [{ field: 'signature', message: 'is not a base58 signature of 64 bytes' }] });
      }
      const deadline = Date.now() + 15_000;
      let [verdict]: Verdict[] = await readVerdicts(chain, [signature], deadline);
      if (verdict!.kind === 'unknown') {
        const lastValidBlockHeight = await sentTransactions.lastValidBlockHeightOf(signature).catch(() => null);
        if (lastValidBlockHeight === null) throw new CinderError('TRANSACTION_NOT_FOUND', { signature });
        [verdict] = await expireUnknown(chain, [{ signature, lastValidBlockHeight }], deadline);
      }
      return describeVerdict(signature, verdict!, chain.commitment);
    },
  );
}

function describeVerdict(signature: string, verdict: Verdict, commitment: Commitment) {
  const { status, slot, error } = reportOf(verdict);
  const base = { transactionId: signature, tx_hash: signature, status, ...(slot === null ? {} : { slot: Number(slot) }) };
  switch (verdict.kind) {
    case 'unknown':
      return { ...base, message: 'The transaction was sent and has not landed yet; it can still land until its blockhash expires (about a minute).' };
    case 'expired':
    case 'not-sent':
      return { ...base, message: 'The transaction expired without landing; nothing was burned. It is safe to send the burn again.' };
    case 'processed':
      return { ...base, message: `The transaction was processed but is not yet ${commitment}.` };
    case 'landed':
      return { ...base, message: error === null ? `The transaction is ${commitment}.` : `The transaction landed but failed: ${error}; nothing it contained took effect.` };
  }
}
