/**
 * The SDK's own types: its options, the request types that take a key in more forms than the
 * routes do, and the one shape it gives the answers of a burn, a reclaim and a relay whichever
 * form (the specification's A or B) a server answers in. Every other request and answer type is
 * the service's route schema (its src/api.ts, TypeBox `Static`), imported as types only, so that a
 * schema change the SDK does not follow fails to compile (test/sdk/apiTypes.ts).
 */
import type * as Api from '@cinder/service';
import type { CinderApiError } from './errors.ts';

/** A `fetch` compatible function (the global one by default). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** What `onRetry` is told before each wait. */
export interface RetryNotice {
  /** The answer being waited out (429, 503, or 409 REQUEST_IN_PROGRESS). */
  error: CinderApiError;
  /** 1 for the first retry. */
  attempt: number;
  /** Of `retries`. */
  retries: number;
  delayMs: number;
}

/**
 * The client's one retry policy: a 429, a 503 or a 409 REQUEST_IN_PROGRESS (the same Idempotency-Key
 * still running) is waited out for as long as the server asks (Retry-After, else `baseDelayMs`
 * doubling), at most `retries` times, and never longer than `maxDelayMs` at a time. Nothing else is
 * retried: a network error may have happened after the server acted. A burn or a reclaim is retried
 * only with an Idempotency-Key, which makes the server answer a repeat with the first result.
 */
export interface RetryOptions {
  /** How many times an answer is waited out (default 3; 0 turns retries off). */
  retries?: number | undefined;
  /** The longest wait the client accepts; a longer Retry-After is not waited for (default 30,000 ms). */
  maxDelayMs?: number | undefined;
  /** Wait used when the answer has no Retry-After, doubled on each retry (default 1,000 ms). */
  baseDelayMs?: number | undefined;
  /** Called before each wait (the CLI says on standard error that it waits, why and how long). */
  onRetry?: ((notice: RetryNotice) => void | Promise<void>) | undefined;
}

export interface CinderClientOptions {
  /** Where Cinder runs, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string | URL;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string | undefined;
  /** A fetch implementation (default: the global fetch). */
  fetch?: FetchLike | undefined;
  /** Each attempt's limit (default 120,000 ms); the waits between retries are bounded by `retry`. */
  timeoutMs?: number | undefined;
  retry?: RetryOptions | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

/**
 * A private key as the SDK takes it: what the routes take (base58 of the 64-byte secret key or of
 * the 32-byte seed, or the 64 numbers of a solana-keygen file), or those 64 bytes as a Uint8Array.
 */
export type PrivateKeyInput = Api.BurnRequest['userPrivateKey'] | readonly number[] | Uint8Array;

/** Makes the key field take a Uint8Array too. */
type WithKeyInput<T extends { userPrivateKey: unknown }> = Omit<T, 'userPrivateKey'> & { userPrivateKey: PrivateKeyInput };

export interface IdempotencyOption {
  /**
   * Sent as `Idempotency-Key`; default: a new random UUID per call. Pass your own to retry safely
   * across processes. Retried (429, 503) only with a key: `''` sends none and turns retries off.
   */
  idempotencyKey?: string | undefined;
}

export type BurnTokensRequest = WithKeyInput<Api.BurnRequest>;
export interface BurnOptions extends RequestOptions, IdempotencyOption {}
export type ReclaimRentRequest = WithKeyInput<Api.ReclaimRequest> & IdempotencyOption;
/** Many owners' keys and the fee payer's, each in any form PrivateKeyInput takes. */
export type ReclaimRentManyRequest = Omit<Api.ReclaimManyRequest, 'userPrivateKeys' | 'feePayerPrivateKey'> & {
  userPrivateKeys: readonly PrivateKeyInput[];
  feePayerPrivateKey: PrivateKeyInput;
} & IdempotencyOption;

/** A query parameter's wire form ('12', 'true') as the value a caller passes (12, true). */
type QueryValue<T> = T extends `${infer N extends number}` ? N : T extends 'true' | 'false' ? boolean : T;
type QueryOptions<Q> = { [K in keyof Q]?: QueryValue<NonNullable<Q[K]>> | undefined };

/** GET /api/generate_wallets's parameters but n, as values (`mnemonic: 12`, `ignoreCase: true`). */
export type GenerateWalletsOptions = QueryOptions<Omit<Api.GenerateWalletsQuery, 'n'>> & RequestOptions;
export type GeneratedWallets = Api.GenerateWalletsResponse;
export type Keypair = Api.GenerateWalletsResponse['keypairs'][number];
/**
 * One line of a streamed answer, as streamWallets yields it: `{ mnemonic }` first with hd, a
 * keypair per wallet, and a vanity search's `{ keysTried }`. The server's closing `{ error }` line
 * is thrown as a CinderApiError, never yielded.
 */
export type WalletStreamLine = Exclude<Api.GenerateWalletsStreamLine, { error: unknown }>;

/**
 * GET /api/reclaim_rent's parameters as values: the mints to burn and the transaction versions as lists, the fee as a number of
 * SOL (as in a reclaim), the flags as booleans.
 */
export type PreviewReclaimRequest = Pick<Api.ReclaimPreviewQuery, 'owner'> &
  Partial<Pick<Api.ReclaimRequest, 'burn' | 'priorityFee' | 'withdrawExcess'>> &
  Partial<Pick<Api.PrepareReclaimRequest, 'transactionVersions'>> &
  QueryOptions<Pick<Api.ReclaimPreviewQuery, 'metadata'>> &
  Pick<Api.ReclaimPreviewQuery, 'signer'>;

export type ReclaimAction = Api.ReclaimPreviewAccount['action'];
export type FeePayer = NonNullable<Api.PrepareReclaimRequest['feePayer']>;

/** `unknown`: the server did not say (the specification's Form B). */
export type ResultStatus = Api.TransactionStatus | 'unknown';

/**
 * The one shape of an answer that sent transactions (a burn, a reclaim, a relay), whichever form the
 * server answered in. A `failed` or `pending` one is a result, not an exception.
 */
export interface OperationResult<Details> {
  /** The (first) transaction signature: Form A's `transactionId`, or Form B's `tx_hash`. */
  transactionId: string;
  status: ResultStatus;
  /** The server's description of the result; null when it sent none (Form B). */
  message: string | null;
  /** Every transaction signature (several when the work did not fit one transaction). */
  signatures: string[];
  /** Cinder's details; null from a server that does not send them. */
  details: Details | null;
}

export type BurnDetails = Api.BurnResponse['details'];
export type BurnTransactionReport = BurnDetails['transactions'][number];
export interface BurnResult extends OperationResult<BurnDetails> {
  /** Which form the server answered in: `A`, `B`, or `A+B` (Cinder). */
  form: 'A' | 'B' | 'A+B';
}
export type ReclaimDetails = Api.ReclaimResponse['details'];
export type ReclaimResult = OperationResult<ReclaimDetails>;
export type ReclaimManyDetails = Api.ReclaimManyResponse['details'];
export type ReclaimManyResult = OperationResult<ReclaimManyDetails>;
export type RelayDetails = Api.RelayResponse['details'];
export type RelayResult = OperationResult<RelayDetails>;

type StatusAnswer = Api.TransactionStatusResponse;
/** GET /api/transactions/{signature}, tolerant of a server that leaves fields out. */
export interface TransactionStatusResult {
  transactionId: StatusAnswer['transactionId'];
  status: StatusAnswer['status'] | 'unknown';
  message: StatusAnswer['message'] | null;
  slot: NonNullable<StatusAnswer['slot']> | null;
}

/** One transaction of POST /api/transactions/statuses; `unknown` also for a status this client does not know. */
export interface TransactionStatusesEntry {
  signature: string;
  status: Api.TransactionStatusesResponse['transactions'][number]['status'];
  slot: number | null;
  error: string | null;
}

export interface GetTransactionsOptions extends RequestOptions {
  /** Hold the request open until one of them is no longer pending, at most this long (0 … 10,000 ms; default 0: answer at once). */
  waitMs?: number;
}

/**
 * The client of one Cinder server: one method per route, each answer in one shape, every failure a
 * CinderApiError. Made by createCinderClient; frozen, so that it can be shared.
 */
export interface CinderClient {
  /** The server's address as given, without a trailing slash. */
  readonly baseUrl: string;
  /**
   * POST /api/burn_tokens, with an Idempotency-Key; the answer in one shape whatever its form.
   *
   * @example
   * ```ts
   * const burn = await cinder.burnTokens(
   *   { mint, priorityFee: 0.000005, userPrivateKey: process.env.SOLANA_KEY! },
   *   { idempotencyKey: jobId }, // the same key on a retry: the server answers with the first result
   * );
   * if (burn.status === 'pending') console.log(`check again: ${burn.transactionId}`);
   * console.log(burn.details?.netLamports);
   * ```
   */
  burnTokens(request: BurnTokensRequest, options?: BurnOptions): Promise<BurnResult>;
  /**
   * GET /api/generate_wallets?n=N (one request: n is limited by the server).
   *
   * @example
   * ```ts
   * const { wallets, keypairs } = await cinder.generateWallets(10);
   * const { mnemonic } = await cinder.generateWallets(3, { hd: 12 }); // three wallets of one phrase
   * const vanity = await cinder.generateWallets(1, { prefix: 'ab', ignoreCase: true });
   * ```
   */
  generateWallets(n: number, options?: GenerateWalletsOptions): Promise<GeneratedWallets>;
  /**
   * GET /api/generate_wallets?n=N with `Accept: application/x-ndjson`: each line as it arrives (the
   * body is read part by part, never whole), for n up to the server's MAX_WALLETS_STREAMED (vanity
   * and mnemonic: its per-request limits). 429/503 are waited out as by the other methods, but only
   * before the first byte: a stream that breaks, ends early or ends with the server's `{ error }`
   * line throws (NETWORK_ERROR, or the server's problem), never starts over. `timeoutMs` bounds the
   * wait for the answer and then each wait for more of it (a stream paused by the server's wallet
   * budget sends nothing until its window resets, up to a minute).
   *
   * @example
   * ```ts
   * for await (const line of cinder.streamWallets(100_000)) {
   *   if ('address' in line) await save(line.address, line.privateKey);
   * }
   * ```
   */
  streamWallets(n: number, options?: GenerateWalletsOptions): AsyncGenerator<WalletStreamLine, void, undefined>;
  /**
   * GET /api/transactions/{signature}.
   *
   * @example
   * ```ts
   * const { status, slot } = await cinder.getTransaction(burn.transactionId); // 'success' | 'failed' | 'pending' | 'unknown'
   * ```
   */
  getTransaction(signature: string, options?: RequestOptions): Promise<TransactionStatusResult>;
  /**
   * POST /api/transactions/statuses: up to 128 transactions in one request, in order. With `waitMs`
   * the server answers as soon as one of them settles: to follow a job, ask again with those still pending.
   *
   * @example
   * ```ts
   * let pending = signatures;
   * while (pending.length > 0) {
   *   const statuses = await cinder.getTransactions(pending, { waitMs: 5_000 });
   *   pending = statuses.filter((s) => s.status === 'pending').map((s) => s.signature);
   * }
   * ```
   */
  getTransactions(signatures: readonly string[], options?: GetTransactionsOptions): Promise<TransactionStatusesEntry[]>;
  /**
   * GET /api/reclaim_rent: every token account of `owner`, what a reclaim would do with it, and the sums. No key.
   *
   * @example
   * ```ts
   * const preview = await cinder.previewReclaim({ owner: address, burn: [mint], priorityFee: 0.000005 });
   * console.log(preview.summary.netLamports, preview.accounts.map((a) => a.action));
   * ```
   */
  previewReclaim(request: PreviewReclaimRequest, options?: RequestOptions): Promise<Api.ReclaimPreviewResponse>;
  /**
   * POST /api/reclaim_rent, with an Idempotency-Key: does what previewReclaim showed, in as few transactions as fit.
   *
   * @example
   * ```ts
   * const reclaim = await cinder.reclaimRent({ userPrivateKey: process.env.SOLANA_KEY!, priorityFee: 0 });
   * console.log(reclaim.status, reclaim.signatures, reclaim.details?.reclaimedLamports);
   * ```
   */
  reclaimRent(request: ReclaimRentRequest, options?: RequestOptions): Promise<ReclaimResult>;
  /**
   * POST /api/burn_tokens/prepare: the burn's unsigned transactions, for a wallet to sign.
   *
   * @example
   * ```ts
   * const prepared = await cinder.prepareBurn({ owner: address, mint, priorityFee: 0, feePayer: 'sponsor' });
   * // signWithWallet is yours: the owner's wallet signs each base64 transaction and gives it back signed.
   * const signed = await signWithWallet(prepared.transactions);
   * await cinder.relay({ transactions: signed, relayToken: prepared.relayToken });
   * ```
   */
  prepareBurn(request: Api.PrepareBurnRequest, options?: RequestOptions): Promise<Api.PrepareResponse>;
  /**
   * POST /api/reclaim_rent/prepare: the reclaim's unsigned transactions, for a wallet to sign.
   *
   * @example
   * ```ts
   * const prepared = await cinder.prepareReclaim({ owner: address, priorityFee: 0 });
   * const signed = await signWithWallet(prepared.transactions); // as in prepareBurn's example
   * await cinder.relay({ transactions: signed, relayToken: prepared.relayToken });
   * ```
   */
  prepareReclaim(request: Api.PrepareReclaimRequest, options?: RequestOptions): Promise<Api.PrepareResponse>;
  /**
   * POST /api/reclaim_rent/preview: what a reclaim of many owners would close and return, in one plan. No key.
   *
   * @example
   * ```ts
   * const preview = await cinder.previewReclaimMany({ owners: [first, second], priorityFee: 0 });
   * console.log(preview.totalReclaimableLamports, preview.transactions, preview.feeLamports);
   * ```
   */
  previewReclaimMany(request: Api.ReclaimManyPreviewRequest, options?: RequestOptions): Promise<Api.ReclaimManyPreviewResponse>;
  /**
   * POST /api/reclaim_rent with many owners' keys: one fee payer pays, every rent goes to `destination`.
   * The keys go to the server; to keep them on this machine, use prepareReclaimMany and relay.
   *
   * @example
   * ```ts
   * const job = await cinder.reclaimRentMany({
   *   userPrivateKeys: [firstKey, secondKey],
   *   feePayerPrivateKey: payerKey,
   *   destination: treasury,
   *   priorityFee: 0,
   * });
   * console.log(job.status, job.signatures.length);
   * ```
   */
  reclaimRentMany(request: ReclaimRentManyRequest, options?: RequestOptions): Promise<ReclaimManyResult>;
  /**
   * POST /api/reclaim_rent/prepare with `owners`: the unsigned transactions of that reclaim, each with who must sign it and its relayToken.
   *
   * @example
   * ```ts
   * const prepared = await cinder.prepareReclaimMany({ owners: [first, second], feePayer: payer, destination: treasury });
   * for (const t of prepared.transactions) {
   *   // signWith is yours: the keys of t.signers (owners and fee payer) sign here, and never leave this machine.
   *   const signed = await signWith(t.signers, t.transaction);
   *   await cinder.relay({ transactions: [signed], relayToken: t.relayToken });
   * }
   * ```
   */
  prepareReclaimMany(request: Api.PrepareReclaimManyRequest, options?: RequestOptions): Promise<Api.PrepareReclaimManyResponse>;
  /**
   * POST /api/transactions: lands signed transactions (retried on 429/503: the answer is idempotent by signature).
   *
   * @example
   * ```ts
   * const relayed = await cinder.relay({ transactions: signedBase64, relayToken: prepared.relayToken });
   * console.log(relayed.status, relayed.details?.transactions.map((t) => t.signature));
   * ```
   */
  relay(request: Api.RelayRequest, options?: RequestOptions): Promise<RelayResult>;
}
