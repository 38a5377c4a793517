/**
 * Type-level test: the SDK's requests and answers are the route schemas' (src/api.ts). Checked by
 * `tsc --noEmit` (npm run typecheck, and test/sdk/apiTypes.test.ts): when a schema changes and the
 * SDK does not follow (a hand-written copy, a query parameter the SDK cannot send, a field it
 * drops), one of these lines no longer compiles.
 */
import type * as Api from '@cinder/service';
import { isCinderApiError } from '../../src/index.ts';
import type {
  BurnResult,
  CinderApiError,
  CinderApiErrorCode,
  CinderClient,
  ClientErrorCode,
  GenerateWalletsOptions,
  ProblemMembers,
  ReclaimAction,
  TransactionStatusResult,
} from '../../src/index.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Method = Exclude<keyof CinderClient, 'baseUrl'>;
type Returned<K extends Method> = Awaited<ReturnType<CinderClient[K]>>;
type Param<K extends Method> = Parameters<CinderClient[K]>[0];
/** What the SDK's one shape of an operation keeps of a Form A answer (tx_hash is transactionId again). */
type OperationFields<R> = Exclude<keyof R, 'tx_hash'>;

export const apiTypeChecks: [
  // Answers: the route's response type itself, or its details in the SDK's one shape.
  Equal<Returned<'previewReclaim'>, Api.ReclaimPreviewResponse>,
  Equal<Returned<'prepareBurn'>, Api.PrepareResponse>,
  Equal<Returned<'prepareReclaim'>, Api.PrepareResponse>,
  Equal<Returned<'generateWallets'>, Api.GenerateWalletsResponse>,
  Equal<NonNullable<Returned<'burnTokens'>['details']>, Api.BurnResponse['details']>,
  Equal<NonNullable<Returned<'reclaimRent'>['details']>, Api.ReclaimResponse['details']>,
  Equal<NonNullable<Returned<'relay'>['details']>, Api.RelayResponse['details']>,
  Equal<Exclude<keyof BurnResult, 'signatures' | 'form'>, OperationFields<Api.BurnResponse>>,
  Equal<Exclude<keyof Returned<'reclaimRent'>, 'signatures'>, OperationFields<Api.ReclaimResponse>>,
  Equal<Exclude<keyof Returned<'relay'>, 'signatures'>, OperationFields<Api.RelayResponse>>,
  Equal<Exclude<BurnResult['status'], 'unknown'>, Api.BurnResponse['status']>,
  Equal<keyof TransactionStatusResult, Exclude<keyof Api.TransactionStatusResponse, 'tx_hash'>>,
  Equal<Exclude<TransactionStatusResult['status'], 'unknown'>, Api.TransactionStatusResponse['status']>,
  Equal<ReclaimAction, Api.ReclaimPreviewAccount['action']>,
  Equal<Returned<'getTransactions'>[number], Api.TransactionStatusesResponse['transactions'][number]>,
  // Requests: the route's body (a key may also be a Uint8Array; the Idempotency-Key is a header).
  Equal<Param<'prepareBurn'>, Api.PrepareBurnRequest>,
  Equal<Param<'prepareReclaim'>, Api.PrepareReclaimRequest>,
  Equal<Param<'relay'>, Api.RelayRequest>,
  Equal<Omit<Param<'burnTokens'>, 'userPrivateKey'>, Omit<Api.BurnRequest, 'userPrivateKey'>>,
  Equal<Omit<Param<'reclaimRent'>, 'userPrivateKey' | 'idempotencyKey'>, Omit<Api.ReclaimRequest, 'userPrivateKey'>>,
  Equal<Exclude<Param<'burnTokens'>['userPrivateKey'], Uint8Array | readonly number[]>, Exclude<Api.BurnRequest['userPrivateKey'], number[]>>,
  // Query strings: every parameter of the route, as a value (12 for '12', true for 'true').
  Equal<keyof Param<'previewReclaim'>, keyof Api.ReclaimPreviewQuery>,
  Equal<Exclude<keyof GenerateWalletsOptions, 'signal'>, Exclude<keyof Api.GenerateWalletsQuery, 'n'>>,
  Equal<GenerateWalletsOptions['mnemonic'], 12 | 24 | undefined>,
  Equal<GenerateWalletsOptions['ignoreCase'], boolean | undefined>,
  // Errors: the problem body's fields.
  Equal<NonNullable<CinderApiError['problem']>, Api.Problem>,
  Equal<CinderApiError['errors'][number], Api.FieldProblem>,
  // Errors: the codes are the server's catalogue's and the client's own; a code's problem members are the catalogue's.
  Equal<CinderApiErrorCode, Api.CinderErrorCode | ClientErrorCode>,
  Equal<ProblemMembers<'VANITY_TIMEOUT'>, Api.CinderProblemMembers['VANITY_TIMEOUT']>,
  Equal<ProblemMembers<'INSUFFICIENT_SOL_FOR_FEE'>, Api.CinderProblemMembers['INSUFFICIENT_SOL_FOR_FEE']>,
  Equal<CinderApiError<'VANITY_TIMEOUT'>['extensions']['keysTried'], number>,
  Equal<NonNullable<CinderApiError<'SPONSOR_DECLINED'>['problem']>['until'], string>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

/** What callers write compiles (and a wrong call does not). */
export async function sdkUsage(cinder: CinderClient): Promise<void> {
  const preview = await cinder.previewReclaim({ owner: 'So11111111111111111111111111111111111111112', burn: ['M'], priorityFee: 0.000005, withdrawExcess: true, metadata: true });
  const net: bigint = BigInt(preview.summary.netLamports);
  const reclaimed = await cinder.reclaimRent({ userPrivateKey: new Uint8Array(64), priorityFee: 0, burn: ['M'], allowNetLoss: true, idempotencyKey: 'k' });
  const closed: string[] | undefined = reclaimed.details?.closedAccounts;
  const prepared = await cinder.prepareBurn({ owner: 'O', mint: 'M', priorityFee: 0, feePayer: 'sponsor' });
  const again = await cinder.prepareReclaim({ owner: 'O', priorityFee: 0, withdrawExcess: false });
  const relayed = await cinder.relay({ transactions: [...prepared.transactions, ...again.transactions], relayToken: prepared.relayToken });
  const sponsored: boolean | undefined = relayed.details?.transactions[0]?.sponsored;
  const hd = await cinder.generateWallets(3, { hd: 12 });
  const phrase: string | undefined = hd.mnemonic;
  // @ts-expect-error reclaimRent needs a priorityFee
  await cinder.reclaimRent({ userPrivateKey: 'k' });
  // @ts-expect-error feePayer is owner or sponsor
  await cinder.prepareReclaim({ owner: 'O', priorityFee: 0, feePayer: 'someone' });
  // @ts-expect-error the route takes no such field
  await cinder.relay({ transactions: ['t'], sponsor: true });
  void [net, closed, sponsored, phrase];
}

/** isCinderApiError narrows the code, its problem members and its problem body; a code neither side has does not compile. */
export function errorNarrowing(error: unknown): void {
  if (isCinderApiError(error, 'VANITY_TIMEOUT')) {
    const tried: number = error.extensions.keysTried;
    const code: 'VANITY_TIMEOUT' = error.code;
    void [tried, code];
  }
  if (isCinderApiError(error, 'INSUFFICIENT_SOL_FOR_FEE')) {
    const missing: string | undefined = error.extensions.missingLamports;
    const detail: string | undefined = error.problem?.detail;
    void [missing, detail];
  }
  if (isCinderApiError(error, 'NOTHING_TO_RECLAIM')) {
    const skipped: { address: string; reason: string }[] = error.extensions.skippedAccounts;
    void skipped;
  }
  if (isCinderApiError(error, 'RATE_LIMITED')) {
    // @ts-expect-error RATE_LIMITED declares no keysTried
    const tried: number = error.extensions.keysTried;
    void tried;
  }
  // @ts-expect-error a code that neither the server's catalogue nor the client has
  void isCinderApiError(error, 'NOT_A_CODE');
}
