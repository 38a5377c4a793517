import { isAddress, type Address } from '@solana/kit';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../../app.ts';
import { createBurnTokens, type BurnResult } from '../../burn/burnTokens.ts';
import { formatSol, priorityFeeToLamports } from '../../burn/priorityFee.ts';
import { CinderError } from '../../errors.ts';
import { parsePrivateKey, PRIVATE_KEY_FORMATS } from '../../keys/parsePrivateKey.ts';
import type { SentTransactionLog } from '../../store/sentTransactions.ts';

const U64 = Type.String({ pattern: '^[0-9]+$', description: 'u64 as a decimal string' });

export const BurnRequestSchema = Type.Object(
  {
    mint: Type.String({ description: 'Mint address (base58) of the token to burn; SPL Token or Token-2022', examples: ['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'] }),
    priorityFee: Type.Number({
      description: 'Total priority fee in SOL for the burn (0 to MAX_PRIORITY_FEE_SOL, default max 0.01; at most 9 decimals)',
      examples: [0.001],
    }),
    userPrivateKey: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 2048 }),
        Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 64, maxItems: 64 }),
      ],
      { description: `The token owner's key: ${PRIVATE_KEY_FORMATS}. Never logged or stored.` },
    ),
  },
  { additionalProperties: false },
);

const TransactionReportSchema = Type.Object({
  signature: Type.String(),
  status: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('pending')]),
  slot: Type.Union([Type.Integer(), Type.Null()]),
  closedAccounts: Type.Array(Type.String()),
  computeUnitLimit: Type.Integer(),
  computeUnitPriceMicroLamports: U64,
  feeLamports: U64,
  error: Type.Union([Type.String(), Type.Null()]),
});

export const BurnResponseSchema = Type.Object({
  transactionId: Type.String({ description: 'Signature of the (first) burn transaction' }),
  status: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('pending')]),
  message: Type.String(),
  tx_hash: Type.String({ description: 'Alias of transactionId (the specification\'s Form B)' }),
  details: Type.Object({
    signatures: Type.Array(Type.String()),
    slot: Type.Union([Type.Integer(), Type.Null()]),
    owner: Type.String(),
    mint: Type.String(),
    tokenProgram: Type.String(),
    burnedAmount: U64,
    decimals: Type.Integer(),
    closedAccounts: Type.Array(Type.String()),
    reclaimedLamports: U64,
    reclaimedSol: Type.String({ description: 'reclaimedLamports in SOL, as a decimal string' }),
    feeLamports: U64,
    computeUnitLimit: Type.Integer(),
    computeUnitPriceMicroLamports: U64,
    transactions: Type.Array(TransactionReportSchema),
  }),
});

export function toBurnResponse(result: BurnResult) {
  const transactionId = result.signatures[0]!;
  return {
    transactionId,
    status: result.status,
    message: result.message,
    tx_hash: transactionId,
    details: {
      signatures: result.signatures,
      slot: result.slot === null ? null : Number(result.slot),
      owner: result.owner,
      mint: result.mint,
      tokenProgram: result.tokenProgram,
      burnedAmount: result.burnedAmount.toString(),
      decimals: result.decimals,
      closedAccounts: result.closedAccounts,
      reclaimedLamports: result.reclaimedLamports.toString(),
      reclaimedSol: formatSol(result.reclaimedLamports),
      feeLamports: result.feeLamports.toString(),
      computeUnitLimit: result.computeUnitLimit,
      computeUnitPriceMicroLamports: result.computeUnitPriceMicroLamports.toString(),
      transactions: result.transactions.map((t) => ({
        ...t,
        slot: t.slot === null ? null : Number(t.slot),
        computeUnitPriceMicroLamports: t.computeUnitPriceMicroLamports.toString(),
        feeLamports: t.feeLamports.toString(),
      })),
    },
  };
}

export function parseMint(mint: string): Address {
  if (!isAddress(mint)) {
    throw new CinderError('INVALID_MINT', 'mint is not a valid base58 Solana address (32 bytes)', {
      errors: [{ field: 'mint', message: 'is not a base58 address of 32 bytes' }],
    });
  }
  return mint;
}

const problem = Type.Ref('Problem');

export function registerBurnTokensRoute(
  app: CinderApp,
  { chain, config, sentTransactions }: Pick<AppDeps, 'chain' | 'config'> & { sentTransactions: SentTransactionLog },
): void {
  const burnTokens = createBurnTokens({ chain, burnDeadlineMs: config.burnDeadlineMs, sentTransactions });

  app.post(
    '/api/burn_tokens',
    {
      schema: {
        summary: 'Burn a token and reclaim the rent of its accounts',
        description:
          'Burns the whole balance of every token account of `mint` owned by the key, closes the accounts and returns their rent to the owner, in one transaction (or several when they do not fit one).',
        tags: ['burn'],
        body: BurnRequestSchema,
        response: {
          200: BurnResponseSchema,
          400: problem,
          401: problem,
          409: problem,
          413: problem,
          415: problem,
          429: problem,
          500: problem,
          503: problem,
        },
      },
    },
    async (request) => {
      const { mint, priorityFee, userPrivateKey } = request.body;
      const mintAddress = parseMint(mint);
      const priorityFeeLamports = priorityFeeToLamports(priorityFee, config.maxPriorityFeeLamports);
      const signer = await parsePrivateKey(userPrivateKey);
      const result = await burnTokens({ mint: mintAddress, priorityFeeLamports, signer });
      request.log.info(
        { owner: result.owner, mint: result.mint, status: result.status, signatures: result.signatures },
        'burn finished',
      );
      return toBurnResponse(result);
    },
  );
}
