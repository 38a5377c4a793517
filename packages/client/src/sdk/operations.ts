/**
 * The client's methods of the burn, reclaim, prepare and relay routes, and the status lookup.
 *
 * What may be sent twice decides the retries: a burn or a reclaim signs with the owner's key, so it
 * is retried only with an Idempotency-Key (the server answers a repeat with the first result); a
 * preview, a prepare, a relay (the same signed bytes land at most once) and a lookup always are.
 */
import type * as Api from '@cinder/service';
import { normaliseBurnResult, normaliseOperation, normalisePrepared, normalisePreparedMany, normalisePreview, normalisePreviewMany, normaliseTransaction, normaliseTransactions } from './answers.ts';
import { clientError } from './errors.ts';
import { isNonEmptyString, isObject } from './guards.ts';
import { idempotencyOf, type Transport } from './http.ts';
import type {
  BurnOptions,
  BurnTokensRequest,
  CinderClient,
  GetTransactionsOptions,
  PreviewReclaimRequest,
  PrivateKeyInput,
  ReclaimDetails,
  ReclaimManyDetails,
  ReclaimRentManyRequest,
  ReclaimRentRequest,
  RelayDetails,
  RequestOptions,
} from './types.ts';

type OperationMethods = Omit<CinderClient, 'baseUrl' | 'generateWallets' | 'streamWallets'>;

export function operationMethods({ request, post }: Transport): OperationMethods {
  return {
    async burnTokens(burn: BurnTokensRequest, burnOptions: BurnOptions = {}) {
      if (!isObject(burn)) throw clientError('INVALID_ARGUMENT', 'burnTokens needs { mint, priorityFee, userPrivateKey }');
      // Safe to resend only because the Idempotency-Key makes the server answer a repeat with the first result.
      const { json } = await request({ method: 'POST', path: 'api/burn_tokens', body: bodyWithKey(burn), ...idempotencyOf(burnOptions), signal: burnOptions.signal });
      return normaliseBurnResult(json);
    },

    async getTransaction(signature: string, requestOptions: RequestOptions = {}) {
      if (!isNonEmptyString(signature)) throw clientError('INVALID_ARGUMENT', 'getTransaction needs a transaction signature');
      const { json } = await request({ method: 'GET', path: `api/transactions/${encodeURIComponent(signature)}`, retryable: true, signal: requestOptions.signal });
      return normaliseTransaction(json, signature);
    },

    async getTransactions(signatures: readonly string[], options: GetTransactionsOptions = {}) {
      if (!Array.isArray(signatures) || signatures.length === 0 || !signatures.every(isNonEmptyString)) {
        throw clientError('INVALID_ARGUMENT', 'getTransactions needs one or more transaction signatures');
      }
      const body = { signatures: [...signatures], ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }) };
      return normaliseTransactions((await post('api/transactions/statuses', body, options.signal)).json, signatures);
    },

    async previewReclaim(preview: PreviewReclaimRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(preview) || !isNonEmptyString(preview.owner)) throw clientError('INVALID_ARGUMENT', 'previewReclaim needs { owner }, a wallet address');
      const query = new URLSearchParams({ owner: preview.owner });
      if (preview.burn !== undefined) query.set('burn', [...preview.burn].join(','));
      if (preview.priorityFee !== undefined) query.set('priorityFee', preview.priorityFee === 'auto' ? 'auto' : decimalString(preview.priorityFee));
      if (preview.withdrawExcess !== undefined) query.set('withdrawExcess', String(preview.withdrawExcess));
      if (preview.metadata !== undefined) query.set('metadata', String(preview.metadata));
      if (preview.signer !== undefined) query.set('signer', preview.signer);
      if (preview.transactionVersions !== undefined) query.set('transactionVersions', preview.transactionVersions.join(','));
      const { json } = await request({ method: 'GET', path: `api/reclaim_rent?${query}`, retryable: true, signal: requestOptions.signal });
      return normalisePreview(json);
    },

    async reclaimRent(reclaim: ReclaimRentRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(reclaim)) throw clientError('INVALID_ARGUMENT', 'reclaimRent needs { userPrivateKey, priorityFee }');
      // As burnTokens: one Idempotency-Key for every attempt, so that a retry can never reclaim twice.
      const { idempotencyKey, ...body } = reclaim;
      const { json } = await request({
        method: 'POST',
        path: 'api/reclaim_rent',
        body: bodyWithKey(body),
        ...idempotencyOf({ idempotencyKey }),
        signal: requestOptions.signal,
      });
      return normaliseOperation<ReclaimDetails>(json, 'reclaim');
    },

    async previewReclaimMany(preview: Api.ReclaimManyPreviewRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(preview) || !Array.isArray(preview.owners)) throw clientError('INVALID_ARGUMENT', 'previewReclaimMany needs { owners: [address, …] }');
      return normalisePreviewMany((await post('api/reclaim_rent/preview', preview, requestOptions.signal)).json);
    },

    async reclaimRentMany(reclaim: ReclaimRentManyRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(reclaim) || !Array.isArray(reclaim.userPrivateKeys)) {
        throw clientError('INVALID_ARGUMENT', 'reclaimRentMany needs { userPrivateKeys, feePayerPrivateKey, destination, priorityFee }');
      }
      // As reclaimRent: one Idempotency-Key for every attempt, so that a retry can never reclaim twice.
      const { idempotencyKey, userPrivateKeys, feePayerPrivateKey, ...rest } = reclaim;
      const { json } = await request({
        method: 'POST',
        path: 'api/reclaim_rent',
        body: JSON.stringify({ ...rest, userPrivateKeys: userPrivateKeys.map(wireKey), feePayerPrivateKey: wireKey(feePayerPrivateKey) }),
        ...idempotencyOf({ idempotencyKey }),
        signal: requestOptions.signal,
      });
      return normaliseOperation<ReclaimManyDetails>(json, 'reclaim');
    },

    async prepareReclaimMany(prepare: Api.PrepareReclaimManyRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare) || !Array.isArray(prepare.owners)) throw clientError('INVALID_ARGUMENT', 'prepareReclaimMany needs { owners, feePayer, destination }');
      return normalisePreparedMany((await post('api/reclaim_rent/prepare', prepare, requestOptions.signal)).json);
    },

    async prepareBurn(prepare: Api.PrepareBurnRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareBurn needs { owner, mint, priorityFee }');
      return normalisePrepared((await post('api/burn_tokens/prepare', prepare, requestOptions.signal)).json);
    },

    async prepareReclaim(prepare: Api.PrepareReclaimRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(prepare)) throw clientError('INVALID_ARGUMENT', 'prepareReclaim needs { owner, priorityFee }');
      return normalisePrepared((await post('api/reclaim_rent/prepare', prepare, requestOptions.signal)).json);
    },

    async relay(relayRequest: Api.RelayRequest, requestOptions: RequestOptions = {}) {
      if (!isObject(relayRequest) || !Array.isArray(relayRequest.transactions) || relayRequest.transactions.length === 0) {
        throw clientError('INVALID_ARGUMENT', 'relay needs { transactions: [base64 signed transaction, …] }');
      }
      return normaliseOperation<RelayDetails>((await post('api/transactions', relayRequest, requestOptions.signal)).json, 'relay');
    },
  };
}

/**
 * A priority fee in SOL as a plain decimal for a query string: String(1e-7) is "1e-7", which is
 * not an amount of SOL a server should have to parse.
 */
function decimalString(value: number): string {
  const text = String(value);
  const exponent = /^(\d)(?:\.(\d+))?e-(\d+)$/.exec(text);
  if (!exponent) return text;
  const digits = `${exponent[1]}${exponent[2] ?? ''}`;
  return `0.${'0'.repeat(Number(exponent[3]) - 1)}${digits}`;
}

/** A key as the routes take it: bytes as the 64 numbers of a solana-keygen file. */
function wireKey(key: PrivateKeyInput): Api.BurnRequest['userPrivateKey'] {
  return typeof key === 'string' ? key : Array.from(key);
}

/** A request body as JSON, its key as the routes take it. */
function bodyWithKey<T extends { userPrivateKey: PrivateKeyInput }>(request: T): string {
  return JSON.stringify({ ...request, userPrivateKey: wireKey(request.userPrivateKey) });
}
