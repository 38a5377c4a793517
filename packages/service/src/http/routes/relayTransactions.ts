import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';
import { createRelay, MAX_RELAY_TRANSACTIONS, type RelayResult } from '../../operations/relay.ts';
import { V1_TRANSACTION_SIZE_LIMIT } from '../../plan/v1Format.ts';
import type { SponsorPolicy } from '../../operations/sponsorPolicy.ts';
import type { SentTransactionLog } from '../../store/sentTransactions.ts';
import { operationAnswer, operationAnswerSchema, problem, slotJson, StatusField } from './operationSchemas.ts';

/** Base64 of the largest transaction (v1's 4,096 bytes; legacy and v0 are held to 1,232 by the relay's own check). */
const MAX_WIRE_BASE64 = Math.ceil(V1_TRANSACTION_SIZE_LIMIT / 3) * 4;

export const RelayRequestSchema = Type.Object(
  {
    transactions: Type.Array(Type.String({ minLength: 1, maxLength: MAX_WIRE_BASE64, description: 'A signed wire transaction, base64: legacy and v0 up to 1,232 bytes, v1 up to 4,096 (a request body is at most 16 KiB: two full v1 transactions)' }), {
      minItems: 1,
      maxItems: MAX_RELAY_TRANSACTIONS,
      description: `1 to ${MAX_RELAY_TRANSACTIONS} signed transactions (base64 wire format), e.g. those of a prepare answer after the owner signed them`,
    }),
    relayToken: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 12_000,
        description: 'The relayToken of a sponsored prepare answer: lets the fee sponsor add its signature to those exact messages',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RelayResponseSchema = operationAnswerSchema(
  Type.Object({
    signatures: Type.Array(Type.String()),
    slot: Type.Union([Type.Integer(), Type.Null()]),
    transactions: Type.Array(
      Type.Object({
        signature: Type.String(),
        status: StatusField,
        slot: Type.Union([Type.Integer(), Type.Null()]),
        sponsored: Type.Boolean({ description: 'The fee sponsor paid the fee and was repaid in the same transaction' }),
        fee: Type.String({ pattern: '^[0-9]+$', description: 'The fee of the transaction as signed, in lamports (decimal string): a wallet may have changed its compute budget' }),
        walletAdded: Type.Object(
          {
            safetyChecks: Type.Integer({ minimum: 0, description: 'Lighthouse assertion instructions the wallet added (Phantom adds 4, Solflare 2)' }),
            memo: Type.Boolean({ description: 'The wallet added a Memo' }),
          },
          { description: 'What the signing wallet added to the prepared transaction (docs/wallet-additions.md)' },
        ),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  }),
  { transactionId: 'Signature of the first transaction' },
);

export function toRelayResponse(result: RelayResult) {
  return operationAnswer(result, {
    signatures: result.signatures,
    slot: slotJson(result.slot),
    transactions: result.transactions.map(({ feeLamports, ...t }) => ({ ...t, fee: feeLamports.toString(), slot: slotJson(t.slot) })),
  });
}

export function registerRelayTransactionsRoute(
  app: CinderApp,
  {
    chain,
    config,
    sentTransactions,
    serverSecret,
    sponsorPolicy,
  }: Pick<AppDeps, 'chain' | 'config'> & { sentTransactions: SentTransactionLog; serverSecret: string; sponsorPolicy: SponsorPolicy | null },
): void {
  const relay = createRelay({
    chain,
    sentTransactions,
    sponsorPolicy,
    serverSecret,
    burnDeadlineMs: config.operationDeadlineMs,
    relayAnyTransaction: config.relayAnyTransaction,
  });

  app.post(
    '/transactions',
    {
      config: {
        budget: 'burn',
        relaysPrepared: true,
        problemCodes: [
          ...JSON_BODY_PROBLEMS,
          'INVALID_TRANSACTION',
          'TRANSACTION_NOT_SIGNED',
          'PROGRAM_NOT_ALLOWED',
          'INSTRUCTION_NOT_ALLOWED',
          'TRANSACTIONS_CONFLICT',
          'RELAY_TOKEN_INVALID',
          'TRANSACTION_REJECTED',
          'RPC_UNAVAILABLE',
          'SPONSOR_UNAVAILABLE',
          'SPONSOR_DECLINED',
          'SPONSORED_OPERATION_IN_PROGRESS',
          'SERVICE_UNAVAILABLE',
          ...API_PROBLEMS,
        ],
      },
      schema: {
        summary: 'Relay transactions signed elsewhere (keyless burn or reclaim)',
        description:
          'Lands transactions that a wallet signed (typically those of POST /api/burn_tokens/prepare or /api/reclaim_rent/prepare) and answers like a burn. ' +
          'Each is checked first, and nothing is sent unless all pass: fully signed (every signature verified), only the instructions Cinder itself ' +
          'prepares (compute budget; token Burn, BurnChecked, CloseAccount, WithdrawExcessLamports; HarvestWithheldTokensToMint; the repayment of the fee ' +
          'sponsor; any instruction of Compute Budget, System, SPL Token, Token-2022 and Associated Token with RELAY_ANY_TRANSACTION), no token account ' +
          'taken from twice or written while a sponsored transaction of it is outstanding, and a simulation that succeeds and invokes only those programs ' +
          'at any depth. The fee sponsor signs only messages this service prepared (relayToken). Relaying the same transactions again answers with their ' +
          'current status and never acts twice.',
        tags: ['keyless'],
        body: RelayRequestSchema,
        response: { 200: RelayResponseSchema, 400: problem, 401: problem, 403: problem, 409: problem, 413: problem, 415: problem, 429: problem, 500: problem, 503: problem },
      },
    },
    async (request) => {
      const result = await relay({ transactions: request.body.transactions, relayToken: request.body.relayToken });
      request.log.info(
        { status: result.status, signatures: result.signatures, sponsored: result.transactions.some((t) => t.sponsored) },
        'relay finished',
      );
      return toRelayResponse(result);
    },
  );
}
