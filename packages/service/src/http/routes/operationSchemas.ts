/**
 * The request fields and answers that burn, reclaim, preview and prepare share: one definition
 * each, so the four doors of the pipeline speak the same JSON and the OpenAPI document says so.
 */
import { isAddress, type Address } from '@solana/kit';
import Type, { type TSchema } from 'typebox';
import { formatSol } from '../../plan/priorityFee.ts';
import { netOf } from '../../plan/net.ts';
import { CinderError, type AddressFieldsCode, type FieldProblem } from '../../errors.ts';
import { isSecretKeyText } from '../../keys/detectSecretKey.ts';
import { PRIVATE_KEY_FORMATS } from '../../keys/parsePrivateKey.ts';
import type { OperationResult, PlannedOperation } from '../../operations/pipeline.ts';
import type { AccountAction } from '../../plan/actions.ts';
import type { TransactionVersion } from '../../plan/transactionVersion.ts';

export const U64 = Type.String({ pattern: '^[0-9]+$', description: 'u64 as a decimal string' });
export const I64 = Type.String({ pattern: '^-?[0-9]+$', description: 'signed lamports as a decimal string' });
export const problem = Type.Ref('Problem');

export const PriorityFeeField = Type.Union(
  [
    Type.Number({ description: 'Total priority fee in SOL (0 to MAX_PRIORITY_FEE_SOL, default max 0.01; at most 9 decimals). 0 is enough on an idle cluster.' }),
    Type.Literal('auto', {
      description:
        'A fee from the cluster\'s recent fees (getRecentPrioritizationFees, 75th percentile) for the accounts the job writes, within AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS, MAX_PRIORITY_FEE_SOL, the money rules and the sponsor\'s fee bound; the preview states the number it resolved to (summary.priorityFee)',
    }),
  ],
  { description: 'Total priority fee in SOL, or "auto"', examples: [0, 'auto'] },
);
export const UserPrivateKeyField = Type.Union(
  [Type.String({ minLength: 1, maxLength: 2048 }), Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 64, maxItems: 64 })],
  { description: `The token owner's key: ${PRIVATE_KEY_FORMATS}. Never logged or stored.` },
);
export const AllowNetLossField = Type.Boolean({
  description: 'Send even when the fees are larger than what comes back (otherwise 400 FEE_EXCEEDS_RECLAIM)',
  default: false,
});
export const OwnerField = Type.String({ description: 'The wallet address (base58) that owns the token accounts' });
export const BurnListField = Type.Array(Type.String(), {
  maxItems: 100,
  description: 'Mints whose balances are burned (and their accounts closed); the native mint means "unwrap wrapped SOL"',
});
export const WithdrawExcessField = Type.Boolean({
  default: false,
  description: "Also take each kept account's lamports above its rent-exempt minimum (WithdrawExcessLamports)",
});
export const FeePayerField = Type.Union([Type.Literal('owner'), Type.Literal('sponsor')], {
  default: 'owner',
  description: "'sponsor': the service's fee sponsor pays and is repaid from the reclaimed rent in the same transaction",
});

export const SignerField = Type.Union([Type.Literal('key'), Type.Literal('wallet')], {
  default: 'key',
  description:
    "'wallet': a browser wallet signs, which may add its safety checks (Lighthouse assertions: Phantom adds four): each transaction leaves them room (160 bytes, one account key, 8,000 compute units), so a preview and a prepare with the same signer have the same transactions",
});

/**
 * The transaction versions the caller's signer takes (its wallet's `supportedTransactionVersions`).
 * v1 is used only where the cluster's gate is active too and 1 is listed; a preview given the same
 * list packs as the prepare does, so its count and net are what follows (docs/transaction-versions.md).
 */
const TRANSACTION_VERSIONS_DESCRIPTION =
  "The transaction versions your signer takes, e.g. [\"legacy\", 0, 1] (a wallet's supportedTransactionVersions). With 1 listed and the cluster's v1 gate active, the transactions are v1 (about 60 closes each instead of 25); otherwise legacy. Default: legacy and 0 for a prepare; every version for a preview (Cinder signs a keyed reclaim). Give a preview the same list as the prepare to see the same transactions";
export const TransactionVersionsField = Type.Array(Type.Union([Type.Literal('legacy'), Type.Literal(0), Type.Literal(1)]), {
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  description: TRANSACTION_VERSIONS_DESCRIPTION,
});
/** The preview's query form of the same field: comma-separated, e.g. `legacy,0,1`. */
export const TransactionVersionsQueryField = Type.String({
  pattern: '^(legacy|0|1)(,(legacy|0|1)){0,2}$',
  maxLength: 12,
  description: `${TRANSACTION_VERSIONS_DESCRIPTION}. Comma-separated here: legacy,0,1`,
});

/** The query form's versions (the schema's pattern already admits only legacy, 0 and 1). */
export function parseTransactionVersionsQuery(value: string | undefined): TransactionVersion[] | undefined {
  if (value === undefined) return undefined;
  return [...new Set(value.split(',').map((v): TransactionVersion => (v === 'legacy' ? 'legacy' : (Number(v) as 0 | 1))))];
}

export const StatusField = Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('pending')]);

const SkippedAccountSchema = Type.Object({ address: Type.String(), code: Type.String(), reason: Type.String() });

export const TransactionReportSchema = Type.Object({
  signature: Type.String(),
  status: StatusField,
  slot: Type.Union([Type.Integer(), Type.Null()]),
  closedAccounts: Type.Array(Type.String()),
  computeUnitLimit: Type.Integer(),
  computeUnitPriceMicroLamports: U64,
  feeLamports: U64,
  error: Type.Union([Type.String(), Type.Null()]),
});

/** Every answer of an operation that sent something: Form A + Form B's tx_hash + these details. */
export const OperationDetailsFields = {
  signatures: Type.Array(Type.String()),
  slot: Type.Union([Type.Integer(), Type.Null()]),
  owner: Type.String(),
  closedAccounts: Type.Array(Type.String()),
  skippedAccounts: Type.Array(SkippedAccountSchema),
  reclaimedLamports: U64,
  reclaimedSol: Type.String({ description: 'reclaimedLamports in SOL, as a decimal string' }),
  feeLamports: U64,
  netLamports: I64,
  netSol: Type.String({ description: 'netLamports in SOL, signed' }),
  sponsored: Type.Boolean({ description: 'The fee sponsor paid the fees and was repaid in the same transactions' }),
  transactions: Type.Array(TransactionReportSchema),
};

/**
 * Why `value` is not an address, or null when it is one. A private key pasted where an address
 * belongs is said to be one (it has left its owner's machine, so it must be treated as exposed),
 * and never echoed: only the field's name is.
 */
export function addressProblem(value: string, field: string): FieldProblem | null {
  if (isAddress(value)) return null;
  if (isSecretKeyText(value)) return { field, message: LOOKS_LIKE_KEY };
  return { field, message: 'is not a base58 address of 32 bytes' };
}

const LOOKS_LIKE_KEY = 'looks like a private key: treat it as exposed';

/**
 * Every problem of a request's fields as one 400: a client that pasted three bad lines learns of
 * all three at once. The code is the first problem's; the detail names each field and says what
 * to do about an exposed key, never quoting a value.
 */
export function fieldsError(problems: readonly (FieldProblem & { code: AddressFieldsCode })[]): CinderError {
  const fields = problems.map(({ field, message }) => ({ field, message }));
  const keyExposed = problems.some((p) => p.message === LOOKS_LIKE_KEY);
  return new CinderError(problems[0]!.code, { reason: 'addresses', problems: fields, keyExposed }, { errors: fields });
}

/**
 * Checks the address fields of one request and reports every problem at once (`done`): each
 * `address` or `list` call returns what it parsed (a bad value is returned as given, and the
 * request is refused at `done`, before the value is used).
 */
export function addressChecks() {
  const problems: (FieldProblem & { code: AddressFieldsCode })[] = [];
  return {
    problems,
    address(value: string, field: string, code: 'INVALID_MINT' | 'INVALID_OWNER'): Address {
      const problem = addressProblem(value, field);
      if (problem) problems.push({ ...problem, code });
      return value as Address;
    },
    /** `field[i]` each; `distinct`: a value given twice is named at its second index (what it is the same as: `distinct`). */
    list(values: readonly string[], field: string, code: 'INVALID_MINT' | 'INVALID_OWNER', distinct?: string): Address[] {
      const seen = new Map<string, number>();
      return values.map((value, i) => {
        const address = this.address(value, `${field}[${i}]`, code);
        const first = seen.get(value);
        if (distinct !== undefined && first !== undefined) problems.push({ field: `${field}[${i}]`, message: `is the same ${distinct} as ${field}[${first}]: each ${distinct} once`, code: 'VALIDATION_FAILED' });
        else seen.set(value, i);
        return address;
      });
    },
    /** Throws every problem found so far as one 400. */
    done(): void {
      if (problems.length > 0) throw fieldsError(problems);
    },
  };
}

export function parseAddress(value: string, field: string, code: 'INVALID_MINT' | 'INVALID_OWNER'): Address {
  const problem = addressProblem(value, field);
  if (problem) {
    if (problem.message === LOOKS_LIKE_KEY) throw fieldsError([{ ...problem, code }]);
    throw new CinderError(code, { reason: 'notAddress', field }, { errors: [problem] });
  }
  return value as Address;
}

/** Distinct mints; every bad one named at once. */
export function parseBurnList(values: readonly string[] | undefined, field = 'burn'): Address[] {
  const checks = addressChecks();
  const mints = checks.list(values ?? [], field, 'INVALID_MINT');
  checks.done();
  return [...new Set(mints)];
}

/** A u64 amount in JSON: a decimal string. */
export const u64 = (n: bigint): string => n.toString();
/** A slot in JSON: a number (slots stay far below 2^53), or null when the transaction did not land. */
export const slotJson = (slot: bigint | null) => (slot === null ? null : Number(slot));

/** The schema of operationAnswer's answer; `details` differ per operation. */
export function operationAnswerSchema<D extends TSchema>(details: D, descriptions: { transactionId: string; message?: string }) {
  return Type.Object({
    transactionId: Type.String({ description: descriptions.transactionId }),
    status: StatusField,
    message: Type.String(descriptions.message === undefined ? {} : { description: descriptions.message }),
    tx_hash: Type.String({ description: "Alias of transactionId (the specification's Form B)" }),
    details,
  });
}

/** The specification's Form A (transactionId, status, message), its Form B alias tx_hash, and the details. */
export function operationAnswer<D>(result: { signatures: readonly string[]; status: string; message: string }, details: D) {
  const transactionId = result.signatures[0]!;
  return { transactionId, status: result.status, message: result.message, tx_hash: transactionId, details };
}

export function operationDetails(result: OperationResult) {
  return {
    signatures: result.signatures,
    slot: slotJson(result.slot),
    owner: result.owner,
    closedAccounts: result.closedAccounts,
    skippedAccounts: result.skippedAccounts,
    reclaimedLamports: u64(result.reclaimedLamports),
    reclaimedSol: formatSol(result.reclaimedLamports),
    feeLamports: u64(result.feeLamports),
    netLamports: u64(result.netLamports),
    netSol: formatSol(result.netLamports),
    sponsored: result.sponsored,
    transactions: result.transactions.map((t) => ({
      ...t,
      slot: slotJson(t.slot),
      computeUnitPriceMicroLamports: u64(t.computeUnitPriceMicroLamports),
      feeLamports: u64(t.feeLamports),
    })),
  };
}

// ---- the preview (GET /api/reclaim_rent and the details of prepare) ----

export const AccountPreviewSchema = Type.Object({
  address: Type.String(),
  mint: Type.String(),
  tokenProgram: Type.String(),
  amount: U64,
  decimals: Type.Union([Type.Integer(), Type.Null()], { description: 'null when the mint no longer exists' }),
  lamports: U64,
  rentExemptLamports: U64,
  excessLamports: U64,
  state: Type.Union([Type.Literal('initialized'), Type.Literal('frozen')]),
  isNative: Type.Boolean(),
  action: Type.Union(['close', 'burn_and_close', 'unwrap', 'withdraw_excess', 'keep', 'skip'].map((a) => Type.Literal(a))),
  code: Type.Union([Type.String(), Type.Null()]),
  // Only with metadata=true on GET /api/reclaim_rent (src/operations/mintMetadata.ts).
  name: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "metadata=true: the mint's name (Token-2022 metadata or Metaplex), or null" })),
  symbol: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "metadata=true: the mint's symbol, or null" })),
  looksLikeNft: Type.Optional(
    Type.Boolean({ description: 'metadata=true: decimals 0, supply 1 and a Metaplex metadata account (a plain burn would leave that account and its rent behind)' }),
  ),
});

export const PreviewSummarySchema = Type.Object({
  accounts: Type.Integer(),
  close: Type.Integer(),
  burn_and_close: Type.Integer(),
  unwrap: Type.Integer(),
  withdraw_excess: Type.Integer(),
  keep: Type.Integer(),
  skip: Type.Integer(),
  transactions: Type.Integer(),
  reclaimLamports: U64,
  excessLamports: U64,
  feeLamports: U64,
  netLamports: I64,
  netSol: Type.String(),
  priorityFee: Type.Number({ description: 'The total priority fee in SOL this plan pays ("auto" resolved to a number): a prepare with this number plans the same fee and net' }),
  priorityFeeLamports: U64,
  sponsored: Type.Boolean(),
  problem: Type.Union([Type.Object({ code: Type.String(), detail: Type.String() }), Type.Null()], {
    description: 'What stands in the way of doing it now (the error the reclaim would answer), or null',
  }),
});

export const PreviewSchema = Type.Object({
  owner: Type.String(),
  accounts: Type.Array(AccountPreviewSchema),
  summary: PreviewSummarySchema,
});

/** One account of a preview: what it holds and the action a reclaim takes for it. */
export function accountPreviewOf(a: AccountAction) {
  return {
    address: a.account.address,
    mint: a.account.mint,
    tokenProgram: a.account.tokenProgram,
    amount: u64(a.account.amount),
    decimals: a.mint?.decimals ?? null,
    lamports: u64(a.account.lamports),
    rentExemptLamports: u64(a.rentExemptLamports),
    excessLamports: u64(a.excessLamports),
    state: a.account.frozen ? ('frozen' as const) : ('initialized' as const),
    isNative: a.account.isNative,
    action: a.action,
    code: a.code,
  };
}

/** How many accounts of a preview take each action (one owner's preview, and each owner's of many). */
export function actionCounts(actions: readonly AccountAction[]) {
  const count = (kind: AccountAction['action']) => actions.filter((a) => a.action === kind).length;
  return {
    accounts: actions.length,
    close: count('close'),
    burn_and_close: count('burn_and_close'),
    unwrap: count('unwrap'),
    withdraw_excess: count('withdraw_excess'),
    keep: count('keep'),
    skip: count('skip'),
  };
}

/** The job's resolved priority fee as the answers state it: SOL (the request field's unit, exact to the lamport) and lamports. */
export function priorityFeeOf(lamports: bigint) {
  return { priorityFee: Number(formatSol(lamports)), priorityFeeLamports: u64(lamports) };
}

export function previewOf(planned: PlannedOperation) {
  const { actions, compiled: plan, problem: blocker } = planned;
  const net = netOf(plan ? plan.transactions.flatMap((t) => t.packed.actions) : [], plan?.feeLamports ?? 0n);
  return {
    owner: planned.state.owner,
    accounts: actions.map(accountPreviewOf),
    summary: {
      ...actionCounts(actions),
      transactions: plan?.transactions.length ?? 0,
      reclaimLamports: u64(net.reclaimedLamports),
      excessLamports: u64(net.excessWithdrawnLamports),
      feeLamports: u64(net.feeLamports),
      netLamports: u64(net.netLamports),
      netSol: formatSol(net.netLamports),
      ...priorityFeeOf(planned.priorityFeeLamports),
      sponsored: plan?.sponsored ?? false,
      problem: blocker ? { code: blocker.code, detail: blocker.message } : null,
    },
  };
}
