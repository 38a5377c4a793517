import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { priorityFeeToLamports } from '../../plan/priorityFee.ts';
import type { OperationResult, Pipeline } from '../../operations/pipeline.ts';
import type { OperationLocks } from '../../store/operationLocks.ts';
import {
  AllowNetLossField,
  executeKeyed,
  formA,
  formASchema,
  OperationDetailsFields,
  operationDetails,
  parseAddress,
  PriorityFeeField,
  problem,
  U64,
  UserPrivateKeyField,
} from './operationSchemas.ts';

export const BurnRequestSchema = Type.Object(
  {
    mint: Type.String({ description: 'Mint address (base58) of the token to burn; SPL Token or Token-2022' }),
    priorityFee: PriorityFeeField,
    userPrivateKey: UserPrivateKeyField,
    allowNetLoss: Type.Optional(AllowNetLossField),
  },
  { additionalProperties: false },
);

export const BurnResponseSchema = formASchema(
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
  return formA(result, {
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
  deps: Pick<AppDeps, 'config'> & { pipeline: Pipeline; locks: OperationLocks },
): void {
  const { config } = deps;
  app.post(
    '/api/burn_tokens',
    {
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
      const priorityFeeLamports = priorityFeeToLamports(priorityFee, config.maxPriorityFeeLamports);
      // One burn per owner and mint at a time (money rules): see executeKeyed.
      const result = await executeKeyed(deps, { request, reply }, userPrivateKey, {
        door: { kind: 'burn', mint: mintAddress },
        priorityFeeLamports,
        allowNetLoss: allowNetLoss ?? false,
      });
      request.log.info({ owner: result.owner, mint: mintAddress, status: result.status, signatures: result.signatures }, 'burn finished');
      return toBurnResponse(result, result.mint!);
    },
  );
}
