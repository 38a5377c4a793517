/**
 * What each error code carries: its context (everything its one message is written from) and,
 * for the codes whose problem+json body has members beyond the standard ones, those members.
 * Types only: the SDK reads them through `@cinder/service` (src/api.ts) without loading any of
 * the service's code, so a context changed here and not followed by the SDK fails to compile.
 *
 * Rules the contexts keep:
 * - every member is safe to echo: an address, an amount, a count, a field name, a field problem
 *   written by the service; never a value a client sent that could be a key;
 * - amounts are bigint here (code) and decimal strings in the members (JSON);
 * - a code met in several situations has a `reason`, one per situation, so that each situation
 *   still has exactly one wording, the catalogue's.
 */

/** One problem of one request field (`errors` of a problem body). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A token account an operation did not touch, and why (in `skippedAccounts`). */
export interface SkippedAccountMember {
  /** The owner, where a request names several. */
  owner?: string;
  address: string;
  code: string;
  reason: string;
}

/** A context without members: the code has one situation and says it the same way each time. */
export type NoContext = Record<never, never>;

/** A 4xx a plugin or Fastify raised with its own status: only the status is kept (its message may quote the path). */
export interface StatusRefusal {
  reason: 'status';
}

/** Schema failures of request fields: each field and its problem, and how many more were not listed. */
export interface SchemaFields {
  reason: 'schema';
  problems: readonly FieldProblem[];
  more?: number;
}

/**
 * Address fields of a request refused together (with its key fields, where it has some): a key
 * pasted where an address belongs is said to be exposed.
 */
export interface AddressFields {
  reason: 'addresses';
  problems: readonly FieldProblem[];
  /** One of the values looked like a private key. */
  keyExposed: boolean;
}

/** One item of a request refused for what it holds (`transactions[2]`), before anything was sent. */
export interface ItemRefusal {
  reason: 'item';
  field: string;
  problem: string;
}

/** Token accounts that block the whole operation (a frozen account, a paused mint…): all of them, each with its reason. */
export interface BlockedAccounts {
  reason: 'blocked';
  skipped: readonly SkippedAccountMember[];
}

/** Refused by the chain's simulation with this code's own error. */
export interface SimulationRefusal {
  reason: 'simulation';
}

/** A 409 of a lock on a wallet (src/store/operationLocks.ts): another operation of it runs or may still land. */
export interface WalletBusy {
  reason: 'busy';
  /** `this wallet`, or the owner's address where a request names several. */
  wallet: string;
  /** The kind of operation that holds the wallet: `burn or reclaim`, `sponsored transaction`. */
  holder: 'burn or reclaim' | 'sponsored transaction';
}

export interface CinderErrorContexts {
  INVALID_JSON: { reason: 'malformed' | 'empty' };
  VALIDATION_FAILED:
    | SchemaFields
    | AddressFields
    | ItemRefusal
    | { reason: 'contentLength' }
    | { reason: 'tooManyTransactions'; transactions: number; max: number }
    | { reason: 'sponsorForMany'; problem: string }
    | { reason: 'tooManyItems'; field: string; problem: string }
    | { reason: 'bothForms'; single: string; many: string; problem: string }
    | { reason: 'relayCount'; max: number };
  MISSING_FIELD: { fields: readonly string[]; more: number };
  UNKNOWN_FIELD: { fields: readonly string[]; more: number };
  INVALID_MINT: SchemaFields | AddressFields | { reason: 'notAddress'; field: string } | { reason: 'notMint'; mint: string };
  INVALID_PRIORITY_FEE:
    | SchemaFields
    | { reason: 'rule'; problem: string }
    | { reason: 'sponsorMax'; problem: string; maxFeeLamports: bigint };
  INVALID_PRIVATE_KEY:
    | SchemaFields
    | AddressFields
    | { reason: 'unparsable'; problem: string }
    | { reason: 'walletAddress'; owner: string }
    | { reason: 'keys'; fields: readonly string[]; problem: string };
  INVALID_N: SchemaFields;
  INVALID_PARAMETER: SchemaFields;
  INVALID_SIGNATURE: SchemaFields | { reason: 'notSignature' } | { reason: 'listedKey' } | { reason: 'listedNotSignatures'; count: number };
  IDEMPOTENCY_KEY_REUSED: NoContext;
  INVALID_IDEMPOTENCY_KEY: NoContext;
  BAD_REQUEST:
    | StatusRefusal
    | {
        reason:
          | 'targetNotPath'
          | 'targetFragment'
          | 'malformedPercent'
          | 'encodedSeparator'
          | 'noHost'
          | 'invalidUrl'
          | 'framing'
          | 'notHttp'
          | 'pathNotUtf8'
          | 'unroutable';
      };
  PRIVATE_KEY_IN_URL: { reason: 'url' | 'signaturePath' };
  MINT_NOT_FOUND: { mint: string; localChain: boolean };
  NO_TOKEN_ACCOUNT: BlockedAccounts | { reason: 'none'; owner: string; mint: string };
  ACCOUNT_FROZEN: BlockedAccounts | SimulationRefusal;
  CLOSE_AUTHORITY_NOT_OWNER: BlockedAccounts;
  CONFIDENTIAL_BALANCE_NOT_EMPTY: BlockedAccounts;
  INSUFFICIENT_SOL_FOR_FEE:
    | {
        reason: 'balance';
        feePayer: string;
        /** The fee payer is a wallet of its own, not the owner (a reclaim of many owners). */
        separateFeePayer: boolean;
        /** How many transactions the fees are of, when the payer pays for several requests' worth. */
        transactions?: number;
        balance: bigint;
        fees: bigint;
        reserve: bigint;
        missing: bigint;
      }
    /** `field`: the request item whose fee payer it is (a relayed transaction). */
    | { reason: 'simulation'; feePayer: string; field?: string };
  TRANSACTION_REJECTED:
    | ItemRefusal
    | { reason: 'simulation'; error: string }
    | { reason: 'owners'; owners: readonly string[]; error: string }
    | { reason: 'accounts'; skipped: readonly SkippedAccountMember[] };
  INVALID_OWNER: SchemaFields | AddressFields | { reason: 'notAddress'; field: string };
  FEE_EXCEEDS_RECLAIM: { reason: 'net'; fees: bigint; returns: bigint } | { reason: 'sponsorNotRepaid' };
  MINT_PAUSED: BlockedAccounts | SimulationRefusal;
  BURN_NOT_PERMITTED: BlockedAccounts;
  NOTHING_TO_RECLAIM:
    | { reason: 'owner'; owner: string; burnListed: boolean; withdrawExcess: boolean; skipped: readonly SkippedAccountMember[] }
    | { reason: 'owners'; owners: number; skipped: readonly SkippedAccountMember[] };
  INVALID_TRANSACTION: ItemRefusal;
  TRANSACTION_NOT_SIGNED: ItemRefusal;
  PROGRAM_NOT_ALLOWED: ItemRefusal | { reason: 'sponsored'; invoked: string; allowed: readonly string[] };
  RELAY_TOKEN_INVALID: { reason: 'token'; problem: string } | { reason: 'field'; field: string; problem: string };
  INSTRUCTION_NOT_ALLOWED: ItemRefusal;
  TRANSACTIONS_CONFLICT: ItemRefusal;
  SPONSOR_DECLINED: { owner: string; until: Date; why: string };
  SPONSORED_OPERATION_IN_PROGRESS:
    | WalletBusy
    | { reason: 'inFlight'; owner: string; what?: string; signatures: readonly string[]; expiresAt: Date };
  SPONSORED_OPERATION_TOO_LARGE: { max: number; transactions: number; accounts: number; fees: bigint };
  UNAUTHORIZED: StatusRefusal | { reason: 'noApiKey' | 'badApiKey' | 'metricsToken' };
  FORBIDDEN: StatusRefusal | { reason: 'metricsLoopback' };
  NOT_FOUND: StatusRefusal | { reason: 'noRoute'; method: string; path: string };
  METHOD_NOT_ALLOWED: StatusRefusal | { reason: 'connect' } | { reason: 'notAllowed'; method: string; allowed: readonly string[] };
  NOT_ACCEPTABLE: StatusRefusal;
  REQUEST_TIMEOUT: StatusRefusal | { reason: 'slowRequest'; timeoutMs: number };
  TRANSACTION_NOT_FOUND: { signature: string };
  REQUEST_IN_PROGRESS: { reason: 'lost' | 'running' };
  BURN_IN_PROGRESS: WalletBusy;
  RECLAIM_IN_PROGRESS: WalletBusy;
  PAYLOAD_TOO_LARGE: StatusRefusal | { reason: 'body'; limitBytes: number };
  UNSUPPORTED_MEDIA_TYPE: StatusRefusal | { reason: 'notJson' | 'charset' };
  URI_TOO_LONG: StatusRefusal | { reason: 'pathParameter' };
  RANGE_NOT_SATISFIABLE: StatusRefusal;
  EXPECTATION_FAILED: StatusRefusal | { reason: 'expect' };
  HEADERS_TOO_LARGE: StatusRefusal | { reason: 'overflow' };
  VANITY_TIMEOUT: { found: number; n: number; prefix?: string | undefined; suffix?: string | undefined; ignoreCase: boolean; timeoutMs: number; keysTried: number };
  RATE_LIMITED:
    | { reason: 'bucket'; max: number; what: string; resetSeconds: number }
    | { reason: 'overBudget'; what: 'owners' | 'wallets'; n: number; max: number }
    | { reason: 'budget'; what: 'owners' | 'wallets'; n: number; max: number; left: number; resetSeconds: number }
    | { reason: 'previews'; running: number; perClient: number }
    | { reason: 'queuedWallets'; queued: number; share: number }
    | { reason: 'open'; open: number; what: string; perClient: number; setting: string };
  INTERNAL_ERROR: NoContext;
  RPC_UNAVAILABLE: { reason: 'notAnswering' | 'noAnswer' | 'cannotSend' };
  SERVICE_UNAVAILABLE:
    | { reason: 'walletCapacity' | 'shuttingDown' | 'idempotencyRecord' | 'idempotencyBegin' | 'lockStore' }
    | { reason: 'open'; open: number; what: string; setting: string };
  SPONSOR_UNAVAILABLE:
    | { reason: 'cannotPay' | 'notConfigured' }
    | { reason: 'lowBalance'; lamports: bigint }
    | { reason: 'lossBudget'; budget: bigint; lost: bigint; atRisk: bigint; until: Date };
}

export type CinderErrorCode = keyof CinderErrorContexts;

/** The codes whose context may be a set of blocking accounts (the first account's code is the answer's). */
export type BlockedAccountsCode = { [C in CinderErrorCode]: BlockedAccounts extends CinderErrorContexts[C] ? C : never }[CinderErrorCode];

/** The codes whose context may be a request's address fields refused together (the first field's code is the answer's). */
export type AddressFieldsCode = { [C in CinderErrorCode]: AddressFields extends CinderErrorContexts[C] ? C : never }[CinderErrorCode];

/** The context of one code. */
export type CinderErrorContext<C extends CinderErrorCode> = CinderErrorContexts[C];

/** Members of `BlockedAccounts` answers: the blocking accounts' addresses, and each with its reason. */
export interface BlockedAccountsMembers {
  accounts?: string[];
  skippedAccounts?: SkippedAccountMember[];
}

/**
 * The members a code adds to its problem body (beside type, title, status, detail, code and
 * errors). Optional where only some of the code's situations carry them.
 */
export interface CinderProblemMembers {
  NO_TOKEN_ACCOUNT: BlockedAccountsMembers;
  ACCOUNT_FROZEN: BlockedAccountsMembers;
  CLOSE_AUTHORITY_NOT_OWNER: BlockedAccountsMembers;
  CONFIDENTIAL_BALANCE_NOT_EMPTY: BlockedAccountsMembers;
  MINT_PAUSED: BlockedAccountsMembers;
  BURN_NOT_PERMITTED: BlockedAccountsMembers;
  INSUFFICIENT_SOL_FOR_FEE: { balanceLamports?: string; feeLamports?: string; reserveLamports?: string; missingLamports?: string };
  FEE_EXCEEDS_RECLAIM: { reclaimLamports?: string; feeLamports?: string; netLamports?: string };
  NOTHING_TO_RECLAIM: { skippedAccounts: SkippedAccountMember[] };
  TRANSACTION_REJECTED: { skippedAccounts?: SkippedAccountMember[] };
  INVALID_PRIORITY_FEE: { maxFeeLamports?: string };
  SPONSOR_DECLINED: { until: string };
  SPONSORED_OPERATION_IN_PROGRESS: { expiresAt?: string; signatures?: string[] };
  VANITY_TIMEOUT: { keysTried: number };
}

/** The problem body members of one code (none for most). */
export type CinderProblemMembersOf<C extends CinderErrorCode> = C extends keyof CinderProblemMembers ? CinderProblemMembers[C] : NoContext;
