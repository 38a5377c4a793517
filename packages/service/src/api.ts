/**
 * The HTTP API's shapes, as TypeScript types: every route's request and answer, each the static
 * type of the TypeBox schema the route validates and serialises with (and the OpenAPI document is
 * made from). The one place the SDK (@cinder/client) and the web app (@cinder/web) take them from, as types
 * only (`import type`): they load no server code, and a schema change that a consumer does not
 * follow fails to compile (packages/client/test/sdk/apiTypes.test.ts).
 *
 * u64 amounts are decimal strings and signed lamports (net) are signed decimal strings, as on the wire.
 */
import type { Static } from 'typebox';
import type { ProblemSchema } from './http/problem.ts';
import type { BurnRequestSchema, BurnResponseSchema } from './http/routes/burnTokens.ts';
import type {
  GenerateWalletsResponseSchema,
  GenerateWalletsStreamLineSchema,
  generateWalletsQuerySchema,
} from './http/routes/generateWallets.ts';
import type { AccountPreviewSchema, PreviewSchema, StatusField } from './http/routes/operationSchemas.ts';
import type { PrepareBurnRequestSchema, PrepareReclaimRequestSchema, PrepareResponseSchema } from './http/routes/prepare.ts';
import type { PreviewQuerySchema, ReclaimRequestSchema, ReclaimResponseSchema } from './http/routes/reclaimRent.ts';
import type {
  PrepareManyResponseSchema,
  prepareManyRequestSchema,
  PreviewManyResponseSchema,
  previewManyRequestSchema,
  ReclaimManyResponseSchema,
  reclaimManyRequestSchema,
} from './http/routes/reclaimMany.ts';
import type { RelayRequestSchema, RelayResponseSchema } from './http/routes/relayTransactions.ts';
import type { TransactionStatusSchema } from './http/routes/transactions.ts';
import type { TransactionStatusesRequestSchema, TransactionStatusesResponseSchema } from './http/routes/transactionStatuses.ts';

/** A transaction's outcome: `pending` → `success` | `failed`, never back. */
export type TransactionStatus = Static<typeof StatusField>;

/** POST /api/burn_tokens */
export type BurnRequest = Static<typeof BurnRequestSchema>;
export type BurnResponse = Static<typeof BurnResponseSchema>;

/** GET /api/reclaim_rent (the preview: no key) */
export type ReclaimPreviewQuery = Static<typeof PreviewQuerySchema>;
export type ReclaimPreviewResponse = Static<typeof PreviewSchema>;
export type ReclaimPreviewAccount = Static<typeof AccountPreviewSchema>;

/** POST /api/reclaim_rent */
export type ReclaimRequest = Static<typeof ReclaimRequestSchema>;
export type ReclaimResponse = Static<typeof ReclaimResponseSchema>;

/**
 * Many owners at once (the request schemas' limits depend on MAX_OWNERS_PER_REQUEST, their shapes do not):
 * POST /api/reclaim_rent/preview, POST /api/reclaim_rent with userPrivateKeys, POST /api/reclaim_rent/prepare with owners.
 */
export type ReclaimManyPreviewRequest = Static<ReturnType<typeof previewManyRequestSchema>>;
export type ReclaimManyPreviewResponse = Static<typeof PreviewManyResponseSchema>;
export type ReclaimManyRequest = Static<ReturnType<typeof reclaimManyRequestSchema>>;
export type ReclaimManyResponse = Static<typeof ReclaimManyResponseSchema>;
export type PrepareReclaimManyRequest = Static<ReturnType<typeof prepareManyRequestSchema>>;
export type PrepareReclaimManyResponse = Static<typeof PrepareManyResponseSchema>;

/** POST /api/burn_tokens/prepare and POST /api/reclaim_rent/prepare (keyless: unsigned transactions) */
export type PrepareBurnRequest = Static<typeof PrepareBurnRequestSchema>;
export type PrepareReclaimRequest = Static<typeof PrepareReclaimRequestSchema>;
export type PrepareResponse = Static<typeof PrepareResponseSchema>;

/** POST /api/transactions (relay signed transactions) */
export type RelayRequest = Static<typeof RelayRequestSchema>;
export type RelayResponse = Static<typeof RelayResponseSchema>;

/** GET /api/transactions/{signature} */
export type TransactionStatusResponse = Static<typeof TransactionStatusSchema>;

/** POST /api/transactions/statuses (many at once; waitMs holds it open until one settles) */
export type TransactionStatusesRequest = Static<typeof TransactionStatusesRequestSchema>;
export type TransactionStatusesResponse = Static<typeof TransactionStatusesResponseSchema>;

/** GET /api/generate_wallets (the query's limits depend on the server's configuration, its shape does not) */
export type GenerateWalletsQuery = Static<ReturnType<typeof generateWalletsQuerySchema>>;
export type GenerateWalletsResponse = Static<typeof GenerateWalletsResponseSchema>;
/** One line of GET /api/generate_wallets with Accept: application/x-ndjson */
export type GenerateWalletsStreamLine = Static<typeof GenerateWalletsStreamLineSchema>;

/** Every error answer: RFC 9457 problem details (application/problem+json). */
export type Problem = Static<typeof ProblemSchema>;
export type FieldProblem = NonNullable<Problem['errors']>[number];
/** The stable error codes, and the members each code adds to its problem body (the error catalogue, src/errors/). */
export type { CinderErrorCode, CinderProblemMembers, CinderProblemMembersOf, SkippedAccountMember } from './errors/contexts.ts';
