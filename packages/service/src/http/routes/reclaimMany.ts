/**
 * Many wallets at once (docs/many-wallets.md): the route of the preview of many owners
 * (POST /api/reclaim_rent/preview), and the body schemas and answers of the keyed reclaim of many
 * owners (POST /api/reclaim_rent with `userPrivateKeys`) and its keyless twin
 * (POST /api/reclaim_rent/prepare with `owners`), whose routes and handlers are those of the
 * one-owner forms (reclaimRent.ts, prepare.ts): `chooseForm` picks the body's form and checks it
 * against that form's schema, so a mistake is reported in that form's terms.
 */
import type { FastifyRequest } from 'fastify';
import Type, { type TSchema } from 'typebox';
import type { Config } from '../../config.ts';
import { CinderError } from '../../errors.ts';
import type { ManyPlan, ManyResultWithFee, ManySkippedAccount, ReclaimMany } from '../../operations/reclaimMany.ts';
import { MAX_RELAY_TRANSACTIONS } from '../../operations/relay.ts';
import { formatSol, priorityFeeRequest } from '../../plan/priorityFee.ts';
import { TRANSACTION_VERSIONS } from '../../plan/transactionVersion.ts';
import { validationToCinderError } from '../problem.ts';
import type { PreviewSlots } from '../rateLimit.ts';
import type { CinderApp } from '../types.ts';
import {
  accountPreviewOf,
  AccountPreviewSchema,
  actionCounts,
  addressChecks,
  AllowNetLossField,
  BurnListField,
  operationAnswer,
  operationAnswerSchema,
  I64,
  problem,
  slotJson,
  StatusField,
  TransactionVersionsField,
  U64,
  u64,
} from './operationSchemas.ts';
import { API_PROBLEMS, JSON_BODY_PROBLEMS } from '../routeConfig.ts';

/** Bytes of body allowed per owner of a keyed reclaim: a key in any accepted form, quoted, with its comma (a JSON array of 64 numbers is at most 258). */
const BODY_BYTES_PER_KEY = 320;
/** The body limit of the doors that take many owners: the general 16 KiB plus room for every key. */
export const manyOwnersBodyLimit = (config: Pick<Config, 'maxOwnersPerRequest'>) => 16 * 1024 + config.maxOwnersPerRequest * BODY_BYTES_PER_KEY;

/**
 * Longer than any address (44 characters) on purpose: a private key pasted where an address belongs
 * (88 characters of base58, or a keygen array as text) must reach the check that names it as a key
 * (operationSchemas.ts: addressProblem), not fail on its length with no word of what it is.
 */
const PASTED_TEXT_MAX = 400;
const AddressField = Type.String({ minLength: 1, maxLength: PASTED_TEXT_MAX });
const KeyField = Type.Union(
  [Type.String({ minLength: 1, maxLength: 300 }), Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 64, maxItems: 64 })],
  { description: 'A private key: base58 of the 64-byte secret key, base58 of the 32-byte seed, or the solana-keygen JSON array. Never logged or stored.' },
);
const ownersField = (max: number) =>
  Type.Array(AddressField, { minItems: 1, maxItems: max, description: `1 to ${max} distinct wallet addresses (MAX_OWNERS_PER_REQUEST)` });
const MintsField = { ...BurnListField, description: 'Mints whose balances are burned before their accounts are closed (the native mint: unwrap wrapped SOL). Others holding tokens are skipped.' };
/** `priorityFee` of the many-owner forms: as the one-owner field, "auto" resolved for the whole job (no sponsor here). */
const ManyPriorityFeeField = Type.Union(
  [
    Type.Number({ description: 'Total priority fee of the whole job in SOL (0 to MAX_PRIORITY_FEE_SOL, default max 0.01; at most 9 decimals), shared evenly among its transactions' }),
    Type.Literal('auto', {
      description:
        "A fee from the cluster's recent fees (getRecentPrioritizationFees, 75th percentile) for the accounts the job writes (fee payer, destination, the accounts that close, the mints burned), " +
        'over the compute units of its transactions, within AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS, MAX_PRIORITY_FEE_SOL and the money rule of the whole job (no net loss unless allowNetLoss); ' +
        'the answer states the number it resolved to (priorityFeeLamports), and a prepare asking for that number plans the fees and net the preview stated',
    }),
  ],
  { description: 'Total priority fee of the job in SOL, or "auto"', examples: [0, 'auto'] },
);
const PriorityFeeLamportsField = { ...U64, description: 'The total priority fee of the job in lamports: the number asked for, or what "auto" resolved to' };
const DestinationField = Type.String({ minLength: 1, maxLength: PASTED_TEXT_MAX, description: 'The address every close pays its rent to (any address outside the owners; it needs no SOL)' });

export const previewManyRequestSchema = (max: number) =>
  Type.Object(
    {
      owners: ownersField(max),
      mints: Type.Optional(MintsField),
      priorityFee: Type.Optional(ManyPriorityFeeField),
      transactionVersions: Type.Optional(TransactionVersionsField),
    },
    { additionalProperties: false },
  );

export const reclaimManyRequestSchema = (max: number) =>
  Type.Object(
    {
      userPrivateKeys: Type.Array(KeyField, { minItems: 1, maxItems: max, description: `1 to ${max} owners' keys, one owner each` }),
      feePayerPrivateKey: KeyField,
      destination: DestinationField,
      priorityFee: ManyPriorityFeeField,
      mints: Type.Optional(MintsField),
      allowNetLoss: Type.Optional(AllowNetLossField),
    },
    { additionalProperties: false },
  );

export const prepareManyRequestSchema = (max: number) =>
  Type.Object(
    {
      owners: ownersField(max),
      feePayer: Type.String({ minLength: 1, maxLength: PASTED_TEXT_MAX, description: 'The address that pays every fee and signs every transaction ("sponsor" is refused: see docs/many-wallets.md)' }),
      destination: DestinationField,
      priorityFee: Type.Optional(ManyPriorityFeeField),
      mints: Type.Optional(MintsField),
      allowNetLoss: Type.Optional(AllowNetLossField),
      transactionVersions: Type.Optional(TransactionVersionsField),
    },
    { additionalProperties: false },
  );

const ManySkippedSchema = Type.Object({ owner: Type.String(), address: Type.String(), code: Type.String(), reason: Type.String() });

export const PreviewManyResponseSchema = Type.Object({
  owners: Type.Array(
    Type.Object({
      owner: Type.String(),
      ownerLamports: U64,
      accounts: Type.Array(AccountPreviewSchema),
      summary: Type.Object({
        accounts: Type.Integer(),
        close: Type.Integer(),
        burn_and_close: Type.Integer(),
        unwrap: Type.Integer(),
        keep: Type.Integer(),
        skip: Type.Integer(),
      }),
      reclaimableLamports: U64,
    }),
  ),
  totalReclaimableLamports: U64,
  totalReclaimableSol: Type.String(),
  transactions: Type.Integer({ description: 'Transactions of a reclaim of all these owners by one fee payer outside them' }),
  signatures: Type.Integer({ description: 'Signatures of those transactions (the fee payer once per transaction, each owner once per transaction it is in)' }),
  feeLamports: U64,
  netLamports: I64,
  netSol: Type.String(),
  skippedAccounts: Type.Array(ManySkippedSchema),
  priorityFeeLamports: PriorityFeeLamportsField,
});

const ManyTransactionSchema = Type.Object({
  signature: Type.String(),
  status: StatusField,
  slot: Type.Union([Type.Integer(), Type.Null()]),
  owners: Type.Array(Type.String()),
  closedAccounts: Type.Array(Type.String()),
  computeUnitLimit: Type.Integer(),
  computeUnitPriceMicroLamports: U64,
  feeLamports: U64,
  error: Type.Union([Type.String(), Type.Null()]),
});

export const ReclaimManyResponseSchema = operationAnswerSchema(
  Type.Object({
    signatures: Type.Array(Type.String()),
    feePayer: Type.String(),
    destination: Type.String(),
    transactions: Type.Array(ManyTransactionSchema),
    reclaimedLamports: U64,
    feeLamports: U64,
    netLamports: I64,
    netSol: Type.String(),
    skippedAccounts: Type.Array(ManySkippedSchema),
    priorityFeeLamports: PriorityFeeLamportsField,
  }),
  { transactionId: 'Signature of the first transaction' },
);

export const PrepareManyResponseSchema = Type.Object({
  transactions: Type.Array(
    Type.Object({
      transaction: Type.String({ description: 'base64 wire transaction (version 0), unsigned (signature slots zeroed)' }),
      signers: Type.Array(Type.String(), { description: 'Who must sign it: the fee payer, then its owners' }),
      owners: Type.Array(Type.String()),
      closedAccounts: Type.Array(Type.String()),
      computeUnitLimit: Type.Integer(),
      computeUnitPriceMicroLamports: U64,
      feeLamports: U64,
      relayToken: Type.String({
        description: `POST it to /api/transactions with this transaction: it proves the service prepared its closes to the destination. Transactions with the same relayToken (at most ${MAX_RELAY_TRANSACTIONS}) may be relayed in one request`,
      }),
    }),
  ),
  lastValidBlockHeight: U64,
  feePayer: Type.String(),
  destination: Type.String(),
  reclaimLamports: U64,
  feeLamports: U64,
  netLamports: I64,
  netSol: Type.String(),
  skippedAccounts: Type.Array(ManySkippedSchema),
  priorityFeeLamports: PriorityFeeLamportsField,
});

/** A key decoded into a non-extractable signer, or the problem of `field` (its reason, never the key). */
export const skippedJson = (skipped: readonly ManySkippedAccount[]) => skipped.map(({ owner, address, code, reason }) => ({ owner, address, code, reason }));

function previewJson(plan: ManyPlan) {
  const total = plan.owners.reduce((sum, o) => sum + o.returnsLamports, 0n);
  return {
    owners: plan.owners.map((o) => ({
      owner: o.state.owner,
      ownerLamports: u64(o.state.ownerLamports),
      accounts: o.actions.map(accountPreviewOf),
      // A many-owner reclaim withdraws no excess rent: its summary has no such count.
      summary: (({ withdraw_excess: _, ...counts }) => counts)(actionCounts(o.actions)),
      reclaimableLamports: u64(o.returnsLamports),
    })),
    totalReclaimableLamports: u64(total),
    totalReclaimableSol: formatSol(total),
    transactions: plan.transactions.length,
    signatures: plan.transactions.reduce((sum, t) => sum + t.signatures, 0),
    feeLamports: u64(plan.feeLamports),
    netLamports: plan.netLamports.toString(),
    netSol: formatSol(plan.netLamports),
    skippedAccounts: skippedJson(plan.skippedAccounts),
    priorityFeeLamports: u64(plan.priorityFeeLamports),
  };
}

/** A keyed reclaim of many wallets' answer: the specification's answer shape, its details those of many owners. */
export function manyResultJson(result: ManyResultWithFee) {
  return operationAnswer(result, {
    signatures: result.signatures,
    feePayer: result.feePayer,
    destination: result.destination,
    transactions: result.transactions.map((t) => ({
      ...t,
      slot: slotJson(t.slot),
      computeUnitPriceMicroLamports: u64(t.computeUnitPriceMicroLamports),
      feeLamports: u64(t.feeLamports),
    })),
    reclaimedLamports: u64(result.reclaimedLamports),
    feeLamports: u64(result.feeLamports),
    netLamports: result.netLamports.toString(),
    netSol: formatSol(result.netLamports),
    skippedAccounts: skippedJson(result.skippedAccounts),
    priorityFeeLamports: u64(result.priorityFeeLamports),
  });
}

/** The `maxItems` of a list field of an object schema (TypeBox schemas are JSON Schema objects). */
function maxItemsOf(schema: TSchema, field: string): number | undefined {
  const property = (schema as { properties?: Record<string, { maxItems?: unknown }> }).properties?.[field];
  return typeof property?.maxItems === 'number' ? property.maxItems : undefined;
}

/**
 * A list of owners (or of their keys) longer than MAX_OWNERS_PER_REQUEST is refused naming that
 * variable, before the schema runs: the operator can raise it, the client can split the list, and
 * Ajv's "must NOT have more than 1000 items" says neither.
 */
function assertWithinOwnerLimit(values: unknown, field: string, max: number | undefined): void {
  if (max === undefined || !Array.isArray(values) || values.length <= max) return;
  const message = `holds ${values.length} items; at most ${max} per request (MAX_OWNERS_PER_REQUEST)`;
  throw new CinderError('VALIDATION_FAILED', { reason: 'tooManyItems', field, problem: message }, { errors: [{ field, message }] });
}

/**
 * preValidation of a door with two body forms: both keys at once is a 400 naming them; otherwise
 * the body is checked against the form its key names, so errors speak of that form only (the
 * route's own schema, the union of both, then passes).
 */
export function chooseForm(options: { single: string; many: string; singleSchema: TSchema; manySchema: TSchema }) {
  return async (request: FastifyRequest) => {
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return; // the union schema answers
    const hasSingle = options.single in body;
    const hasMany = options.many in body;
    if (hasSingle && hasMany) {
      const message = `send either ${options.single} (one wallet) or ${options.many} (many wallets), not both`;
      throw new CinderError('VALIDATION_FAILED', { reason: 'bothForms', single: options.single, many: options.many, problem: message }, {
        errors: [
          { field: options.single, message },
          { field: options.many, message },
        ],
      });
    }
    if (hasMany) assertWithinOwnerLimit((body as Record<string, unknown>)[options.many], options.many, maxItemsOf(options.manySchema, options.many));
    const validate = request.compileValidationSchema(hasMany ? options.manySchema : options.singleSchema);
    if (!validate(body)) throw validationToCinderError((validate.errors ?? []) as Parameters<typeof validationToCinderError>[0], 'body');
  };
}

/** A schema without its `default` keywords (kept for its JSON shape; Ajv's strict mode refuses defaults under anyOf). */
function withoutDefaults<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutDefaults) as T;
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'default').map(([key, value]) => [key, withoutDefaults(value)])) as T;
}

/**
 * The body schema of a door with two forms: either one. `chooseForm` has already checked the body
 * against its own form, defaults included; this union only describes both (for the OpenAPI
 * document) and lets them through.
 */
export function eitherForm<A extends TSchema, B extends TSchema>(single: A, many: B) {
  return Type.Union([withoutDefaults(single), withoutDefaults(many)]);
}

export interface ReclaimManyRouteDeps {
  config: Config;
  reclaimMany: ReclaimMany;
  serverSecret: string;
}

export function registerReclaimManyRoutes(app: CinderApp, deps: ReclaimManyRouteDeps & { previewSlots: PreviewSlots }): void {
  const { config, reclaimMany, previewSlots } = deps;
  app.post(
    '/reclaim_rent/preview',
    {
      config: { budget: 'preview', ownersField: 'owners', problemCodes: [...JSON_BODY_PROBLEMS, 'INVALID_OWNER', 'INVALID_MINT', 'INVALID_PRIORITY_FEE', 'RPC_UNAVAILABLE', 'SERVICE_UNAVAILABLE', ...API_PROBLEMS] },
      bodyLimit: manyOwnersBodyLimit(config),
      preValidation: async (request) => {
        const body = request.body as { owners?: unknown } | null;
        if (body && typeof body === 'object') assertWithinOwnerLimit(body.owners, 'owners', config.maxOwnersPerRequest);
      },
      schema: {
        summary: 'Preview a rent reclaim of many wallets (no key)',
        description:
          'Every token account of each owner, the action a reclaim would take for each, what each owner would send to the destination, and the whole job: its transactions (owners sharing them, one fee payer outside the owners), fees and net. ' +
          'One entry per owner, in the order given. RPC calls: 2 getTokenAccountsByOwner per owner, plus one getMultipleAccounts per 100 owners and mints. Nothing is signed or sent.',
        tags: ['reclaim'],
        body: previewManyRequestSchema(config.maxOwnersPerRequest),
        response: { 200: PreviewManyResponseSchema, 400: problem, 401: problem, 413: problem, 415: problem, 429: problem, 500: problem, 503: problem },
      },
    },
    async (request) => {
      const checks = addressChecks();
      const owners = checks.list(request.body.owners, 'owners', 'INVALID_OWNER', 'owner');
      const burn = [...new Set(checks.list(request.body.mints ?? [], 'mints', 'INVALID_MINT'))];
      checks.done();
      const priorityFeeLamports = priorityFeeRequest(request.body.priorityFee, config.maxPriorityFeeLamports);
      // One of the client's preview slots for the whole request (src/http/rateLimit.ts), whatever its size.
      const release = previewSlots.acquire(request.cinderClient);
      try {
        // Without the field, the versions of the keyed door (Cinder signs every version), as the one-owner preview.
        const transactionVersions = request.body.transactionVersions ?? TRANSACTION_VERSIONS;
        return previewJson(await reclaimMany.preview({ owners, burn, priorityFeeLamports, allowNetLoss: false, transactionVersions }));
      } finally {
        release();
      }
    },
  );
}
