import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';
import { priorityFeeRequest } from '../../plan/priorityFee.ts';
import type { OperationResult, Pipeline } from '../../operations/pipeline.ts';
import {
  AllowNetLossField,
  operationAnswer,
  operationAnswerSchema,
  OperationDetailsFields,
  operationDetails,
  parseAddress,
  PriorityFeeField,
  problem,
  U64,
  UserPrivateKeyField,
} from './operationSchemas.ts';
import { executeKeyed } from './keyedOperation.ts';

export const BurnRequestSchema = Type.Object(
  {
    mint: Type.String({ description: 'Mint address (base58) of the token to burn; SPL Token or Token-2022' }),
    priorityFee: PriorityFeeField,
    userPrivateKey: UserPrivateKeyField,
    allowNetLoss: Type.Optional(AllowNetLossField),
  },
  { additionalProperties: false },
);

export const BurnResponseSchema = operationAnswerSchema(
  Type.Object({
    ...OperationDetailsFields,
    mint: Type.String(),
    tokenProgram: Type.String(),
    burnedAmount: U64,
    decimals: Type.Integer(),
    computeUnitLimit: Type.Integer(),
    computeUnitPriceMicroLamports: U64,
  }),
  {
    transactionId: 'Signature of the (first) burn transaction',
    message: 'What was burned, closed and reclaimed, the fees and the net ("net +0.00203428 SOL")',
  },
);

export function toBurnResponse(result: OperationResult, mint: { address: string; tokenProgram: string; decimals: number }) {
  const details = operationDetails(result);
  return operationAnswer(result, {
    ...details,
    mint: mint.address,
    tokenProgram: mint.tokenProgram,
    burnedAmount: (result.burned[0]?.amount ?? 0n).toString(),
    decimals: mint.decimals,
    computeUnitLimit: details.transactions[0]!.computeUnitLimit,
    computeUnitPriceMicroLamports: details.transactions[0]!.computeUnitPriceMicroLamports,
  });
}

export function registerBurnTokensRoute(
  app: CinderApp,
  deps: Pick<AppDeps, 'config'> & { pipeline: Pipeline },
): void {
  const { config } = deps;
  app.post(
    '/burn_tokens',
    {
      config: {
        budget: 'burn',
        idempotent: true,
        problemCodes: [
          ...JSON_BODY_PROBLEMS,
          'INVALID_MINT',
          'INVALID_PRIORITY_FEE',
          'INVALID_PRIVATE_KEY',
          'INVALID_IDEMPOTENCY_KEY',
          'IDEMPOTENCY_KEY_REUSED',
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
          'REQUEST_IN_PROGRESS',
          'BURN_IN_PROGRESS',
          'RPC_UNAVAILABLE',
          'SERVICE_UNAVAILABLE',
          'SPONSOR_UNAVAILABLE',
          'SPONSOR_DECLINED',
          'SPONSORED_OPERATION_IN_PROGRESS',
          'PROGRAM_NOT_ALLOWED',
          ...API_PROBLEMS,
        ],
      },
      schema: {
        summary: 'Burn a token and reclaim the rent of its accounts',
        description:
          'Burns the whole balance of every token account of `mint` owned by the key, closes the accounts and returns their rent to the owner, in one transaction (or several when they do not fit one). Accounts that cannot be closed (frozen, paused mint, …) are skipped and listed; the fees never exceed what comes back unless `allowNetLoss` is true.',
        tags: ['burn'],
        body: BurnRequestSchema,
        response: { 200: BurnResponseSchema, 400: problem, 401: problem, 403: problem, 409: problem, 413: problem, 415: problem, 429: problem, 500: problem, 503: problem },
      },
    },
    async (request, reply) => {
      const { mint, priorityFee, userPrivateKey, allowNetLoss } = request.body;
      const mintAddress = parseAddress(mint, 'mint', 'INVALID_MINT');
      const priorityFeeLamports = priorityFeeRequest(priorityFee, config.maxPriorityFeeLamports);
      // One operation per owner at a time, a duplicate joining the first (money rules): see executeKeyed.
      const result = await executeKeyed(deps, { request, reply }, userPrivateKey, {
        operation: { kind: 'burn', mint: mintAddress },
        priorityFeeLamports,
        allowNetLoss: allowNetLoss ?? false,
      });
      request.log.info({ owner: result.owner, mint: mintAddress, status: result.status, signatures: result.signatures }, 'burn finished');
      return toBurnResponse(result, result.mint!);
    },
  );
}
