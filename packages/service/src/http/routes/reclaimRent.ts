/**
 * Whole-wallet rent reclaim: GET previews (no key), POST does exactly what the preview showed.
 * Both are the burn's pipeline with the whole wallet as input (src/operations/pipeline.ts).
 */
import type { Address, KeyPairSigner } from '@solana/kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { FieldProblem } from '../../errors.ts';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';
import { priorityFeeRequest } from '../../plan/priorityFee.ts';
import type { Pipeline } from '../../operations/pipeline.ts';
import { readMintMetadata } from '../../operations/mintMetadata.ts';
import type { PreviewSlots } from '../rateLimit.ts';
import {
  addressChecks,
  AllowNetLossField,
  BurnListField,
  fieldsError,
  operationAnswer,
  operationAnswerSchema,
  OperationDetailsFields,
  operationDetails,
  OwnerField,
  parseAddress,
  parseBurnList,
  PreviewSchema,
  previewOf,
  PriorityFeeField,
  problem,
  SignerField,
  TransactionVersionsQueryField,
  parseTransactionVersionsQuery,
  U64,
  UserPrivateKeyField,
  WithdrawExcessField,
} from './operationSchemas.ts';
import { executeKeyed, keyedDeadline, parseKeyField } from './keyedOperation.ts';
import {
  chooseForm,
  eitherForm,
  manyOwnersBodyLimit,
  manyResultJson,
  reclaimManyRequestSchema,
  ReclaimManyResponseSchema,
  type ReclaimManyRouteDeps,
} from './reclaimMany.ts';

/** POST /api/reclaim_rent with `userPrivateKeys` (its route is below, beside the one-owner form). */
async function reclaimManyHandler(
  { config, reclaimMany }: ReclaimManyRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  body: { userPrivateKeys: (string | number[])[]; feePayerPrivateKey: string | number[]; destination: string; priorityFee: number | 'auto'; mints?: string[]; allowNetLoss?: boolean },
) {
  const deadline = keyedDeadline(config, reply);
  const checks = addressChecks();
  const destination = checks.address(body.destination, 'destination', 'INVALID_OWNER');
  const burn = checks.list(body.mints ?? [], 'mints', 'INVALID_MINT');
  // Every key is decoded, and every bad one named, before any is used: a list of keys with three
  // bad lines is answered with the three. Decoded at once into non-extractable keys (the bytes are
  // wiped): only CryptoKeys are kept.
  const keyProblems: FieldProblem[] = [];
  const feePayerKey = await parseKeyField(body.feePayerPrivateKey, 'feePayerPrivateKey');
  const feePayer = 'signer' in feePayerKey ? feePayerKey.signer : null;
  if (!('signer' in feePayerKey)) keyProblems.push(feePayerKey);
  const owners = new Map<Address, KeyPairSigner>();
  const indexOf = new Map<Address, number>();
  /** Owners whose key came as a 32-byte seed, by their field: a wallet address pasted as a key reads as one (operations/reclaimMany.ts). */
  const seedKeys = new Map<Address, string>();
  for (const [i, key] of body.userPrivateKeys.entries()) {
    const parsed = await parseKeyField(key, `userPrivateKeys[${i}]`);
    if (!('signer' in parsed)) {
      keyProblems.push(parsed);
      continue;
    }
    const first = indexOf.get(parsed.signer.address);
    if (first !== undefined) {
      keyProblems.push({ field: `userPrivateKeys[${i}]`, message: `is the same owner as userPrivateKeys[${first}]: each owner once` });
      continue;
    }
    indexOf.set(parsed.signer.address, i);
    owners.set(parsed.signer.address, parsed.signer);
    if (parsed.isSeed) seedKeys.set(parsed.signer.address, `userPrivateKeys[${i}]`);
  }
  if (feePayer === null || keyProblems.length > 0 || checks.problems.length > 0) {
    throw fieldsError([...keyProblems.map((p) => ({ ...p, code: 'INVALID_PRIVATE_KEY' as const })), ...checks.problems]);
  }
  const priorityFeeLamports = priorityFeeRequest(body.priorityFee, config.maxPriorityFeeLamports);
  const result = await reclaimMany.execute(
    { owners: [...owners.keys()], feePayer: feePayer.address, destination, burn: [...new Set(burn)], priorityFeeLamports, allowNetLoss: body.allowNetLoss ?? false, seedKeys },
    { feePayer, owners },
    { deadline, recordSent: (signatures, lastValidBlockHeight) => request.cinderRecordSent(signatures, lastValidBlockHeight) },
  );
  request.log.info({ owners: owners.size, feePayer: feePayer.address, destination, status: result.status, signatures: result.signatures }, 'reclaim of many wallets finished');
  return manyResultJson(result);
}

export const ReclaimRequestSchema = Type.Object(
  {
    userPrivateKey: UserPrivateKeyField,
    priorityFee: PriorityFeeField,
    burn: Type.Optional(BurnListField),
    withdrawExcess: Type.Optional(WithdrawExcessField),
    allowNetLoss: Type.Optional(AllowNetLossField),
  },
  { additionalProperties: false },
);

export const ReclaimResponseSchema = operationAnswerSchema(
  Type.Object({
    ...OperationDetailsFields,
    burned: Type.Array(Type.Object({ mint: Type.String(), amount: U64, decimals: Type.Integer() })),
    excessWithdrawnLamports: U64,
  }),
  { transactionId: 'Signature of the first transaction' },
);

export const PreviewQuerySchema = Type.Object(
  {
    owner: OwnerField,
    burn: Type.Optional(Type.String({ description: 'Comma-separated mints to burn as well', maxLength: 4600 })),
    priorityFee: Type.Optional(Type.String({ description: 'Total priority fee in SOL, as in a reclaim (default 0), or "auto": summary.priorityFee states the number it resolved to', pattern: '^([0-9]+(\\.[0-9]+)?|auto)$', maxLength: 20 })),
    withdrawExcess: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    signer: Type.Optional(SignerField),
    transactionVersions: Type.Optional(TransactionVersionsQueryField),
    metadata: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: "true: each account also has its mint's name, symbol and looksLikeNft (one more batch of account reads)",
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerReclaimRentRoutes(
  app: CinderApp,
  deps: Pick<AppDeps, 'config' | 'chain'> & { pipeline: Pipeline; previewSlots: PreviewSlots; many: ReclaimManyRouteDeps },
): void {
  const { config, pipeline, chain, previewSlots } = deps;
  app.get(
    '/reclaim_rent',
    {
      config: {
        budget: 'preview',
        problemCodes: [
          'VALIDATION_FAILED',
          'UNKNOWN_FIELD',
          'INVALID_OWNER',
          'INVALID_MINT',
          'INVALID_PRIORITY_FEE',
          'RPC_UNAVAILABLE',
          ...API_PROBLEMS,
        ],
      },
      schema: {
        summary: 'Preview a whole-wallet rent reclaim (no key)',
        description:
          "Every token account of `owner` in both token programs, the action a reclaim would take for each, and what would come back: lamports, fees and net. Nothing is signed or sent. `summary.problem` says what would stop the reclaim now (e.g. INSUFFICIENT_SOL_FOR_FEE).",
        tags: ['reclaim'],
        querystring: PreviewQuerySchema,
        response: { 200: PreviewSchema, 400: problem, 401: problem, 429: problem, 500: problem, 503: problem },
      },
    },
    async (request) => {
      const { owner, burn, priorityFee, withdrawExcess, metadata, signer, transactionVersions } = request.query;
      const versions = parseTransactionVersionsQuery(transactionVersions);
      const ownerAddress = parseAddress(owner, 'owner', 'INVALID_OWNER');
      const burnList = parseBurnList(burn === undefined || burn === '' ? [] : burn.split(','));
      const priorityFeeLamports = priorityFeeRequest(priorityFee === undefined || priorityFee === 'auto' ? priorityFee : Number(priorityFee), config.maxPriorityFeeLamports);
      // A few previews per client at once (src/http/rateLimit.ts): the slot is held for the work,
      // whether or not the client waits for the answer.
      const release = previewSlots.acquire(request.cinderClient);
      let planned;
      try {
        planned = await pipeline.preview({
          owner: ownerAddress,
          operation: { kind: 'reclaim', burn: burnList, withdrawExcess: withdrawExcess === 'true' },
          priorityFeeLamports,
          allowNetLoss: false,
          feePayer: 'auto',
          signer: signer ?? 'key',
          ...(versions ? { transactionVersions: versions } : {}),
        });
      } finally {
        release();
      }
      const preview = previewOf(planned);
      if (metadata !== 'true') return preview;
      const byMint = await readMintMetadata(chain, preview.accounts.map((a) => a.mint), Date.now() + config.operationDeadlineMs);
      return { ...preview, accounts: preview.accounts.map((a) => ({ ...a, ...byMint.get(a.mint)! })) };
    },
  );

  const reclaimManySchema = reclaimManyRequestSchema(config.maxOwnersPerRequest);
  app.post(
    '/reclaim_rent',
    {
      config: {
        budget: 'burn',
        ownersField: 'userPrivateKeys',
        idempotent: true,
        problemCodes: [
          ...JSON_BODY_PROBLEMS,
          'INVALID_MINT',
          'INVALID_PRIORITY_FEE',
          'INVALID_PRIVATE_KEY',
          'INVALID_IDEMPOTENCY_KEY',
          'IDEMPOTENCY_KEY_REUSED',
          'NOTHING_TO_RECLAIM',
          'INSUFFICIENT_SOL_FOR_FEE',
          'FEE_EXCEEDS_RECLAIM',
          'TRANSACTION_REJECTED',
          'REQUEST_IN_PROGRESS',
          'RECLAIM_IN_PROGRESS',
          'RPC_UNAVAILABLE',
          'SERVICE_UNAVAILABLE',
          'SPONSOR_UNAVAILABLE',
          'SPONSOR_DECLINED',
          'SPONSORED_OPERATION_IN_PROGRESS',
          'PROGRAM_NOT_ALLOWED',
          ...API_PROBLEMS,
        ],
      },
      bodyLimit: manyOwnersBodyLimit(config),
      preValidation: chooseForm({ single: 'userPrivateKey', many: 'userPrivateKeys', singleSchema: ReclaimRequestSchema, manySchema: reclaimManySchema }),
      schema: {
        summary: 'Reclaim the rent of a whole wallet',
        description:
          'Does what GET /api/reclaim_rent shows for the key\'s wallet: closes every empty token account (unwrapping empty wrapped SOL), burns and closes the listed mints, optionally withdraws excess rent, in as few transactions as fit. Money rules as for burns. One reclaim per owner at a time.',
        tags: ['reclaim'],
        // The second form, userPrivateKeys: many wallets to one destination (docs/many-wallets.md).
        body: eitherForm(ReclaimRequestSchema, reclaimManySchema),
        response: { 200: Type.Union([ReclaimResponseSchema, ReclaimManyResponseSchema]), 400: problem, 401: problem, 403: problem, 409: problem, 413: problem, 415: problem, 429: problem, 500: problem, 503: problem },
      },
    },
    async (request, reply) => {
      if ('userPrivateKeys' in request.body) return reclaimManyHandler(deps.many, request, reply, request.body);
      const { userPrivateKey, priorityFee, burn, withdrawExcess, allowNetLoss } = request.body;
      const burnList = parseBurnList(burn);
      const priorityFeeLamports = priorityFeeRequest(priorityFee, config.maxPriorityFeeLamports);
      // As for burns: one operation per owner at a time (executeKeyed).
      const result = await executeKeyed(deps, { request, reply }, userPrivateKey, {
        operation: { kind: 'reclaim', burn: burnList, withdrawExcess: withdrawExcess ?? false },
        priorityFeeLamports,
        allowNetLoss: allowNetLoss ?? false,
      });
      request.log.info({ owner: result.owner, status: result.status, signatures: result.signatures }, 'reclaim finished');
      return operationAnswer(result, {
        ...operationDetails(result),
        burned: result.burned.map((b) => ({ mint: b.mint, amount: b.amount.toString(), decimals: b.decimals })),
        excessWithdrawnLamports: result.excessWithdrawnLamports.toString(),
      });
    },
  );
}
