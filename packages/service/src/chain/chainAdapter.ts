/**
 * The only place that talks JSON-RPC. A narrow adapter over @solana/kit's RPC client, built on the
 * landing engine of this folder (budgeted transport, merged account reads, cached blockhash, one
 * signature tracker): every call has a timeout, reads are retried with backoff, and a signed
 * transaction is rebroadcast until it is confirmed or its blockhash expires. Everything above this
 * file sees plain data and CinderErrors, never a raw upstream message.
 */
import {
  createSolanaRpcFromTransport,
  createSolanaRpcSubscriptions,
  getBase64Encoder,
  isSolanaError,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type Address,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import type { Commitment } from '../config.ts';
import { CinderError } from '../errors.ts';
import { createAccountReader } from './accountReader.ts';
import { createBlockhashCache } from './blockhashCache.ts';
import { createBudgetedTransport, RpcNotSentError, type RpcRequestOutcome } from './rpcTransport.ts';
import { createSignatureTracker, MAX_SIGNATURES_PER_STATUS_CALL } from './signatureTracker.ts';
import type { ChainAdapter, RawAccount, SignatureStatus } from './types.ts';

export interface ChainAdapterOptions {
  rpcUrl: string;
  commitment: Commitment;
  /** Per RPC request, counted from the moment it leaves (time queued for the budget is not counted). */
  callTimeoutMs?: number;
  /** Between rebroadcasts of the same signed transaction. */
  rebroadcastIntervalMs?: number;
  /** Between the signature tracker's ticks. */
  pollIntervalMs?: number;
  maxReadAttempts?: number;
  /** SOLANA_WS_URL: confirm by WebSocket signature subscriptions (polling stays the fallback). */
  wsUrl?: string | undefined;
  /** SOLANA_RPC_MAX_RPS: requests per second to the RPC at most; undefined: no cap of our own. */
  maxRequestsPerSecond?: number | undefined;
  /** How long an account read waits for other reads to share its getMultipleAccounts call. */
  accountBatchWindowMs?: number;
  /** How long the cached blockhash is handed out before a background refresh, and at most. */
  blockhashRefreshAfterMs?: number;
  blockhashMaxAgeMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isTransient(error: unknown): { transient: boolean; retryAfterMs: number | null } {
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = error.context.statusCode;
    const retryAfter = Number(error.context.headers?.get?.('retry-after'));
    return {
      transient: status === 429 || status >= 500,
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : null,
    };
  }
  if (isSolanaError(error)) return { transient: false, retryAfterMs: null }; // a JSON-RPC error answer
  // fetch's TypeError ("fetch failed"), AbortError/TimeoutError: the node was not reached or was slow.
  return { transient: true, retryAfterMs: null };
}

/** True only when the transaction surely never reached the node (never left, connection refused, no such host, 429). */
function isUndelivered(error: unknown): boolean {
  if (error instanceof RpcNotSentError) return true;
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) return error.context.statusCode === 429;
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

export function rpcUnavailable(cause?: unknown): CinderError {
  return new CinderError('RPC_UNAVAILABLE', { reason: 'noAnswer' }, { headers: { 'retry-after': '5' }, cause });
}

const base64 = getBase64Encoder();
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Account data from the node's base64: Node's own decoder, after one native check of the
 * characters. Kit's encoder does the same with a check in JavaScript, one character at a time, and
 * decodes twice: ten times the cost, for thousands of accounts in a large wallet. Text kit refuses
 * still goes to kit, for its error.
 */
function bytesOfBase64(text: string): Uint8Array {
  if (!BASE64_TEXT.test(text)) return new Uint8Array(base64.encode(text));
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * The landing engine, one per process and shared by every request: a budgeted transport under
 * every call, micro-batched account reads, one cached blockhash, and one signature tracker for all
 * transactions in flight.
 */
export function createChainAdapter(options: ChainAdapterOptions): ChainAdapter {
  const { commitment } = options;
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const maxReadAttempts = options.maxReadAttempts ?? 4;
  const requestListeners: ((method: string, outcome: RpcRequestOutcome) => void)[] = [];
  const transport = createBudgetedTransport({
    url: options.rpcUrl,
    maxRequestsPerSecond: options.maxRequestsPerSecond,
    callTimeoutMs,
    onRequest: (method, outcome) => {
      for (const listener of requestListeners) listener(method, outcome);
    },
  });
  const rpc: Rpc<SolanaRpcApi> = createSolanaRpcFromTransport(transport);
  const subscriptions = options.wsUrl ? createSolanaRpcSubscriptions(options.wsUrl) : undefined;

  /** The caller's deadline only: the transport times each request out once it has left. */
  const signalFor = (deadline: number) => AbortSignal.timeout(Math.max(1, deadline - Date.now()));

  /** A read: retried on transient faults with exponential backoff and jitter, until the deadline. */
  async function read<T>(call: (abortSignal: AbortSignal) => Promise<T>, deadline: number): Promise<T> {
    let lastError: unknown;
    for (let attempt = 0; attempt < maxReadAttempts; attempt++) {
      if (Date.now() >= deadline) break;
      try {
        return await call(signalFor(deadline));
      } catch (error) {
        lastError = error;
        if (error instanceof RpcNotSentError) break; // the deadline passed while it waited its turn
        const { transient, retryAfterMs } = isTransient(error);
        if (!transient) throw error;
        const backoff = retryAfterMs ?? 200 * 2 ** attempt * (0.5 + Math.random());
        if (Date.now() + backoff >= deadline) break;
        await sleep(backoff);
      }
    }
    throw rpcUnavailable(lastError);
  }

  const toRawAccount = (
    address: Address,
    account: { lamports: bigint; owner: Address; data: readonly [string, string] } | null,
  ): RawAccount | null => account && { address, lamports: account.lamports, owner: account.owner, data: bytesOfBase64(account.data[0]) };

  async function getStatuses(signatures: Signature[], searchTransactionHistory: boolean, deadline: number): Promise<(SignatureStatus | null)[]> {
    const { value } = observed(
      await read((abortSignal) => rpc.getSignatureStatuses(signatures, { searchTransactionHistory }).send({ abortSignal }), deadline),
    );
    return value.map((status) => (status ? { slot: status.slot, err: status.err, confirmationStatus: status.confirmationStatus } : null));
  }

  async function getSignatureStatuses(signatures: readonly Signature[], deadline: number): Promise<(SignatureStatus | null)[]> {
    const chunks: Signature[][] = [];
    for (let i = 0; i < signatures.length; i += MAX_SIGNATURES_PER_STATUS_CALL) chunks.push(signatures.slice(i, i + MAX_SIGNATURES_PER_STATUS_CALL));
    return (await Promise.all(chunks.map((chunk) => getStatuses(chunk, true, deadline)))).flat();
  }

  const blockhashes = createBlockhashCache({
    fetch: async (deadline) => {
      const { context, value } = await read((abortSignal) => rpc.getLatestBlockhash({ commitment }).send({ abortSignal }), deadline);
      return { lifetime: value, slot: context.slot };
    },
    refreshAfterMs: options.blockhashRefreshAfterMs,
    maxAgeMs: options.blockhashMaxAgeMs,
  });
  /** Every answer's context.slot tells the blockhash cache how old its hash is, at no cost. */
  const observed = <T extends { context: { slot: bigint } }>(answer: T): T => {
    blockhashes.observeSlot(answer.context.slot);
    return answer;
  };

  async function getBlockHeight(deadline: number): Promise<bigint> {
    const blockHeight = await read((abortSignal) => rpc.getBlockHeight({ commitment }).send({ abortSignal }), deadline);
    blockhashes.observeBlockHeight(blockHeight);
    return blockHeight;
  }

  const accounts = createAccountReader({
    windowMs: options.accountBatchWindowMs,
    fetch: async (addresses, deadline) => {
      const { value } = observed(
        await read((abortSignal) => rpc.getMultipleAccounts(addresses, { encoding: 'base64', commitment }).send({ abortSignal }), deadline),
      );
      return value.map((account, i) => toRawAccount(addresses[i]!, account));
    },
    onDeadline: () => rpcUnavailable(),
  });

  let genesisHash: Promise<string> | undefined;

  const tracker = createSignatureTracker({
    commitment,
    pollIntervalMs: options.pollIntervalMs ?? 400,
    rebroadcastIntervalMs: options.rebroadcastIntervalMs ?? 2_000,
    tickTimeoutMs: callTimeoutMs,
    getRecentStatuses: (signatures, deadline) => getStatuses(signatures, false, deadline),
    getSignatureStatuses,
    getBlockHeight,
    send: async ({ wire }, deadline) => {
      await rpc
        .sendTransaction(wire, { encoding: 'base64', skipPreflight: true, maxRetries: 0n, preflightCommitment: commitment })
        .send({ abortSignal: signalFor(deadline) });
    },
    isUndelivered,
    notSent: (cause) => rpcUnavailable(cause),
    subscribe: subscriptions
      ? async (signature, { onLanded, onLost }, abortSignal) => {
          const notifications = await subscriptions.signatureNotifications(signature, { commitment }).subscribe({ abortSignal });
          void (async () => {
            try {
              for await (const { context, value } of notifications) return onLanded(context.slot, value.err);
            } catch {
              // the connection failed: polling takes over
            }
            if (!abortSignal.aborted) onLost();
          })();
        }
      : undefined,
  });

  return {
    commitment,

    getAccounts: (addresses, deadline) => accounts.read(addresses, deadline),

    async getTokenAccountsByOwner(owner, filter, deadline) {
      const { value } = observed(
        await read((abortSignal) => rpc.getTokenAccountsByOwner(owner, filter, { encoding: 'base64', commitment }).send({ abortSignal }), deadline),
      );
      return value.map(({ pubkey, account }) => toRawAccount(pubkey, account)!);
    },

    /** Read through the shared getMultipleAccounts batches: a missing account holds 0 lamports. */
    async getBalance(address, deadline) {
      const [account] = await accounts.read([address], deadline);
      return account?.lamports ?? 0n;
    },

    getLatestBlockhash: (deadline) => blockhashes.get(deadline),

    async simulate(wire, deadline, options) {
      const signed = options?.signed === true;
      const { value } = observed(
        await read(
          (abortSignal) =>
            rpc
              .simulateTransaction(
                wire,
                signed
                  ? { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: false, innerInstructions: true, commitment }
                  : { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, innerInstructions: true, commitment },
              )
              .send({ abortSignal }),
          deadline,
        ),
      );
      // Nodes answer inner instructions parsed (jsonParsed, with programId), as agave does.
      const innerPrograms = (value.innerInstructions ?? []).flatMap(({ instructions }) =>
        instructions.map((instruction) => ('programId' in instruction ? instruction.programId : null)),
      );
      return {
        err: value.err,
        unitsConsumed: value.unitsConsumed === undefined ? null : Number(value.unitsConsumed),
        logs: value.logs ?? [],
        innerPrograms,
        loadedAccountsDataSize: value.loadedAccountsDataSize ?? null,
      };
    },

    getSignatureStatuses,
    getBlockHeight,

    async getRecentPrioritizationFees(addresses, deadline) {
      const fees = await read((abortSignal) => rpc.getRecentPrioritizationFees([...addresses]).send({ abortSignal }), deadline);
      return fees.map((entry) => BigInt(entry.prioritizationFee));
    },

    getGenesisHash(deadline) {
      // A cluster's genesis hash never changes: one read, shared by every caller; a failed read is tried again.
      genesisHash ??= read((abortSignal) => rpc.getGenesisHash().send({ abortSignal }), deadline).catch((error: unknown) => {
        genesisHash = undefined;
        throw error;
      });
      return genesisHash;
    },

    /**
     * Solana's recommended landing loop, run by the shared tracker: sent with maxRetries 0, the same
     * bytes rebroadcast until the signature reaches the commitment or the block height passes the
     * blockhash's lastValidBlockHeight (then one last look with the whole history).
     */
    sendAndConfirm: (transaction, deadline) => tracker.track(transaction, deadline),

    async isHealthy() {
      try {
        await rpc.getLatestBlockhash().send({ abortSignal: AbortSignal.timeout(Math.min(callTimeoutMs, 3000)) });
        return true;
      } catch {
        return false;
      }
    },

    onRpcRequest(listener) {
      requestListeners.push(listener);
    },
  };
}
