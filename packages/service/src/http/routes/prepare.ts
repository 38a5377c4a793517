/**
 * Keyless: the unsigned transactions a burn or a reclaim would send, for a wallet (Phantom, a
 * Ledger, the `solana` CLI) to sign and POST /api/transactions to relay. The same pipeline as the
 * keyed doors (plan, compute budget, money rules); it stops before signing.
 */
import type { Address } from '@solana/kit';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';
import type { CinderErrorCode } from '../../errors.ts';
import { priorityFeeRequest } from '../../plan/priorityFee.ts';
import type { Pipeline, PipelineRequest } from '../../operations/pipeline.ts';
import { issuePreparedRelayTokens } from '../../operations/relayToken.ts';
import { landingOrderOf } from '../../operations/compile.ts';
import { MAX_RELAY_TRANSACTIONS } from '../../operations/relay.ts';
import { manyOwnersNotSponsored } from '../../operations/sponsorPolicy.ts';
import { getBase64EncodedWireTransaction } from '@solana/kit';
import { formatSol } from '../../plan/priorityFee.ts';
import type { TransactionVersion } from '../../plan/transactionVersion.ts';
import {
  addressChecks,
  AllowNetLossField,
  BurnListField,
  FeePayerField,
  OwnerField,
  parseAddress,
  parseBurnList,
  PreviewSchema,
  previewOf,
  PriorityFeeField,
  problem,
  SignerField,
  TransactionVersionsField,
  U64,
  u64,
  WithdrawExcessField,
} from './operationSchemas.ts';
import { chooseForm, eitherForm, manyOwnersBodyLimit, prepareManyRequestSchema, PrepareManyResponseSchema, skippedJson, type ReclaimManyRouteDeps } from './reclaimMany.ts';

/** POST /api/reclaim_rent/prepare with `owners` (its route is below, beside the one-owner form). */
async function prepareManyHandler(
  { config, reclaimMany, serverSecret }: ReclaimManyRouteDeps,
  body: { owners: string[]; feePayer: string; destination: string; priorityFee?: number | 'auto'; mints?: string[]; allowNetLoss?: boolean; transactionVersions?: TransactionVersion[] },
) {
  if (body.feePayer === 'sponsor') throw manyOwnersNotSponsored();
  const checks = addressChecks();
  const owners = checks.list(body.owners, 'owners', 'INVALID_OWNER', 'owner');
  const feePayer = checks.address(body.feePayer, 'feePayer', 'INVALID_OWNER');
  const destination = checks.address(body.destination, 'destination', 'INVALID_OWNER');
  const burn = checks.list(body.mints ?? [], 'mints', 'INVALID_MINT');
  checks.done();
  const job = {
    owners,
    feePayer,
    destination,
    burn: [...new Set(burn)],
    priorityFeeLamports: priorityFeeRequest(body.priorityFee, config.maxPriorityFeeLamports),
    allowNetLoss: body.allowNetLoss ?? false,
    // Without it, the versions every signer takes (legacy and 0): v1 only for a caller that says so.
    ...(body.transactionVersions ? { transactionVersions: body.transactionVersions } : {}),
  };
  // Refused over MAX_PREPARED_TRANSACTIONS from the packing, before any simulation (operations/reclaimMany.ts).
  const { plan, transactions } = await reclaimMany.prepare(job);
  // One relay token per group of transactions that fits one relay request: each proves the
  // service prepared these exact messages (their closes pay out to the destination, not the owner).
  const tokens = issuePreparedRelayTokens(serverSecret, transactions.map((t) => t.messageBytes), MAX_RELAY_TRANSACTIONS);
  return {
    transactions: plan.transactions.map((t, i) => ({
      transaction: getBase64EncodedWireTransaction(transactions[i]!),
      signers: [...new Set([feePayer, ...t.owners])],
      owners: t.owners,
      closedAccounts: t.actions.map((a) => a.action.account.address),
      computeUnitLimit: t.computeUnitLimit,
      computeUnitPriceMicroLamports: u64(t.computeUnitPriceMicroLamports),
      feeLamports: u64(t.feeLamports),
      relayToken: tokens[Math.floor(i / MAX_RELAY_TRANSACTIONS)]!,
    })),
    lastValidBlockHeight: u64(plan.lifetime.lastValidBlockHeight),
    feePayer,
    destination,
    reclaimLamports: u64(plan.returnsLamports),
    feeLamports: u64(plan.feeLamports),
    netLamports: plan.netLamports.toString(),
    netSol: formatSol(plan.netLamports),
    skippedAccounts: skippedJson(plan.skippedAccounts),
    priorityFeeLamports: u64(plan.priorityFeeLamports),
  };
}

export const PrepareBurnRequestSchema = Type.Object(
  {
    mint: Type.String({ description: 'Mint address (base58) of the token to burn' }),
    owner: OwnerField,
    priorityFee: PriorityFeeField,
    feePayer: Type.Optional(FeePayerField),
    allowNetLoss: Type.Optional(AllowNetLossField),
    signer: Type.Optional(SignerField),
    transactionVersions: Type.Optional(TransactionVersionsField),
  },
  { additionalProperties: false },
);

export const PrepareReclaimRequestSchema = Type.Object(
  {
    owner: OwnerField,
    priorityFee: PriorityFeeField,
    burn: Type.Optional(BurnListField),
    withdrawExcess: Type.Optional(WithdrawExcessField),
    feePayer: Type.Optional(FeePayerField),
    allowNetLoss: Type.Optional(AllowNetLossField),
    signer: Type.Optional(SignerField),
    transactionVersions: Type.Optional(TransactionVersionsField),
  },
  { additionalProperties: false },
);

export const PrepareResponseSchema = Type.Object({
  transactions: Type.Array(Type.String({ description: 'base64 wire transaction, unsigned (signature slots zeroed)' })),
  lastValidBlockHeight: U64,
  feePayer: Type.String({
    description: 'The fee payer of the plan: the owner, or the service\'s fee sponsor. Where the sponsor pays, it pays only the first `sponsoredTransactions`; the owner pays the rest',
  }),
  sponsoredTransactions: Type.Integer({
    minimum: 0,
    description:
      'How many transactions, from the first, the fee sponsor pays for (0 when the owner pays everything). Relay those first, with the relayToken; the others have the owner as fee payer and are paid from the rent the sponsored ones return',
  }),
  dependsOn: Type.Array(Type.Array(Type.Integer({ minimum: 0 })), {
    description:
      'For each transaction, the indexes of the transactions that must have landed before it is relayed (its fees come from their rent). Transactions with nothing left to wait for may be relayed together; the relay refuses one relayed too early, nothing sent',
  }),
  relayToken: Type.Optional(
    Type.String({ description: 'Sponsored only: POST it to /api/transactions with the sponsored transactions; the sponsor signs only these messages' }),
  ),
  details: PreviewSchema,
});

/** The problem codes of each prepare route (its route config: src/http/routeConfig.ts). */
const PREPARE_BURN_PROBLEMS: readonly CinderErrorCode[] = [
  ...JSON_BODY_PROBLEMS,
  'INVALID_MINT',
  'INVALID_OWNER',
  'INVALID_PRIORITY_FEE',
  'MINT_NOT_FOUND',
  'NO_TOKEN_ACCOUNT',
  'ACCOUNT_FROZEN',
  'CLOSE_AUTHORITY_NOT_OWNER',
  'CONFIDENTIAL_BALANCE_NOT_EMPTY',
  'MINT_PAUSED',
  'BURN_NOT_PERMITTED',
  'INSUFFICIENT_SOL_FOR_FEE',
  'FEE_EXCEEDS_RECLAIM',
  'TRANSACTION_REJECTED',
  'RPC_UNAVAILABLE',
  'SPONSOR_UNAVAILABLE',
  'SPONSOR_DECLINED',
  'SPONSORED_OPERATION_IN_PROGRESS',
  'SPONSORED_OPERATION_TOO_LARGE',
  'PROGRAM_NOT_ALLOWED',
  ...API_PROBLEMS,
];
const PREPARE_RECLAIM_PROBLEMS: readonly CinderErrorCode[] = [
  ...JSON_BODY_PROBLEMS,
  'INVALID_MINT',
  'INVALID_OWNER',
  'INVALID_PRIORITY_FEE',
  'NOTHING_TO_RECLAIM',
  'INSUFFICIENT_SOL_FOR_FEE',
  'FEE_EXCEEDS_RECLAIM',
  'TRANSACTION_REJECTED',
  'RPC_UNAVAILABLE',
  'SPONSOR_UNAVAILABLE',
  'SPONSOR_DECLINED',
  'SPONSORED_OPERATION_IN_PROGRESS',
  'SPONSORED_OPERATION_TOO_LARGE',
  'PROGRAM_NOT_ALLOWED',
  ...API_PROBLEMS,
];

export function registerPrepareRoutes(
  app: CinderApp,
  { config, pipeline, serverSecret, many }: Pick<AppDeps, 'config'> & { pipeline: Pipeline; serverSecret: string; many: ReclaimManyRouteDeps },
): void {
  async function prepare(request: PipelineRequest) {
    const prepared = await pipeline.prepare(request);
    const { compiled: plan } = prepared;
    return {
      transactions: prepared.wireTransactions,
      lastValidBlockHeight: plan.lifetime.lastValidBlockHeight.toString(),
      feePayer: plan.parties.feePayer.address,
      ...landingOrderOf(plan),
      // Sponsored: the proof that the service prepared these messages (the sponsored ones only); it reserves nothing (src/operations/relayToken.ts).
      ...(prepared.relayTokenMessages !== null ? { relayToken: issuePreparedRelayTokens(serverSecret, prepared.relayTokenMessages)[0]! } : {}),
      details: previewOf(prepared),
    };
  }

  const describe = {
    description:
      'The unsigned transactions the keyed operation would send (same plan, compute budget and money rules), for a wallet to sign. Nothing is signed by the service. With `feePayer: "sponsor"` the service\'s fee sponsor pays and is repaid from the reclaimed rent; relay them with the `relayToken`.',
    tags: ['keyless'],
    response: { 200: PrepareResponseSchema, 400: problem, 401: problem, 403: problem, 409: problem, 413: problem, 415: problem, 429: problem, 500: problem, 503: problem },
  };

  app.post('/burn_tokens/prepare', { config: { budget: 'burn', problemCodes: PREPARE_BURN_PROBLEMS }, schema: { ...describe, summary: 'Prepare a burn for a wallet to sign', body: PrepareBurnRequestSchema } }, async (request) => {
    const { mint, owner, priorityFee, feePayer, allowNetLoss, signer, transactionVersions } = request.body;
    const mintAddress: Address = parseAddress(mint, 'mint', 'INVALID_MINT');
    return prepare({
      owner: parseAddress(owner, 'owner', 'INVALID_OWNER'),
      operation: { kind: 'burn', mint: mintAddress },
      priorityFeeLamports: priorityFeeRequest(priorityFee, config.maxPriorityFeeLamports),
      allowNetLoss: allowNetLoss ?? false,
      feePayer: feePayer ?? 'owner',
      signer: signer ?? 'key',
      ...(transactionVersions ? { transactionVersions } : {}),
    });
  });

  const prepareManySchema = prepareManyRequestSchema(config.maxOwnersPerRequest);
  app.post(
    '/reclaim_rent/prepare',
    {
      config: { budget: 'burn', ownersField: 'owners', problemCodes: PREPARE_RECLAIM_PROBLEMS },
      bodyLimit: manyOwnersBodyLimit(config),
      preValidation: chooseForm({ single: 'owner', many: 'owners', singleSchema: PrepareReclaimRequestSchema, manySchema: prepareManySchema }),
      schema: {
        ...describe,
        summary: 'Prepare a whole-wallet reclaim for a wallet to sign, or (with owners) a reclaim of many wallets for their keys to sign',
        // The second form, owners: many wallets to one destination, one fee payer (docs/many-wallets.md).
        body: eitherForm(PrepareReclaimRequestSchema, prepareManySchema),
        response: { ...describe.response, 200: Type.Union([PrepareResponseSchema, PrepareManyResponseSchema]) },
      },
    },
    async (request) => {
      if ('owners' in request.body) return prepareManyHandler(many, request.body);
      const { owner, priorityFee, burn, withdrawExcess, feePayer, allowNetLoss, signer, transactionVersions } = request.body;
      return prepare({
        owner: parseAddress(owner, 'owner', 'INVALID_OWNER'),
        operation: { kind: 'reclaim', burn: parseBurnList(burn), withdrawExcess: withdrawExcess ?? false },
        priorityFeeLamports: priorityFeeRequest(priorityFee, config.maxPriorityFeeLamports),
        allowNetLoss: allowNetLoss ?? false,
        feePayer: feePayer ?? 'owner',
        signer: signer ?? 'key',
        ...(transactionVersions ? { transactionVersions } : {}),
      });
    },
  );
}
