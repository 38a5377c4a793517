/**
 * The Cinder SDK (`@cinder/client`): one function per route, answers in one shape, errors as
 * CinderApiError, and the one retry policy of the client (the CLI uses it too, through
 * `retry.onRetry`). This file is the entry only; the SDK lives in ./sdk/:
 * - client.ts: createCinderClient, the methods over one transport;
 * - http.ts: the transport: each attempt's time limit and the retry policy;
 * - errors.ts: CinderApiError and how an error answer becomes one;
 * - answers.ts: each answer checked and read into the SDK's one shape;
 * - wallets.ts: generate_wallets, whole or streamed;
 * - operations.ts: burn, reclaim, prepare, relay and the status lookup;
 * - types.ts: the SDK's own types (its options, CinderClient, the shapes of its answers).
 *
 * Every request and answer type is the service's route schema (its src/api.ts, TypeBox `Static`),
 * imported as types only: the SDK loads no server code, and a schema change it does not follow
 * fails to compile (test/sdk/apiTypes.ts).
 *
 * Never puts a private key in an error, a log or a URL: keys only ever travel in a request body.
 */
export type {
  FieldProblem,
  Problem as ProblemDetails,
  ReclaimPreviewAccount,
  ReclaimPreviewResponse as ReclaimPreview,
  PrepareResponse as PreparedTransactions,
  PrepareBurnRequest,
  PrepareReclaimRequest,
  PrepareReclaimManyRequest,
  PrepareReclaimManyResponse,
  ReclaimManyPreviewRequest,
  ReclaimManyPreviewResponse,
  RelayRequest,
  TransactionStatus,
} from '@cinder/service';

export type {
  BurnDetails,
  BurnOptions,
  BurnResult,
  BurnTokensRequest,
  BurnTransactionReport,
  CinderClient,
  CinderClientOptions,
  FeePayer,
  FetchLike,
  GeneratedWallets,
  GenerateWalletsOptions,
  Keypair,
  OperationResult,
  PreviewReclaimRequest,
  PrivateKeyInput,
  ReclaimAction,
  ReclaimDetails,
  ReclaimManyDetails,
  ReclaimManyResult,
  ReclaimRentManyRequest,
  ReclaimRentRequest,
  ReclaimResult,
  RelayDetails,
  RelayResult,
  RequestOptions,
  ResultStatus,
  RetryNotice,
  RetryOptions,
  TransactionStatusResult,
  TransactionStatusesEntry,
  GetTransactionsOptions,
  WalletStreamLine,
} from './sdk/types.ts';
export {
  CinderApiError,
  isCinderApiError,
  isRetryable,
  parseRetryAfter,
  type CinderApiErrorCode,
  type CinderApiErrorInit,
  type ClientErrorCode,
  type ProblemMembers,
  type ProblemOf,
} from './sdk/errors.ts';
export { normaliseBurnResult } from './sdk/answers.ts';
export { createCinderClient } from './sdk/client.ts';
