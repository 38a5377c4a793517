/**
 * The only place that talks JSON-RPC. A narrow adapter over @solana/kit's RPC client: every call
 * has a timeout, reads are retried with backoff, and a signed transaction is rebroadcast until it
 * is confirmed or its blockhash expires. Everything above this file sees plain data and
 * CinderErrors, never a raw upstream message.
 */
import {
  createSolanaRpc,
  getBase64Encoder,
  isSolanaError,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type Address,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import type { Commitment } from '../config.ts';
import { CinderError } from '../errors.ts';

export interface RawAccount {
  address: Address;
  lamports: bigint;
  owner: Address;
  data: Uint8Array;
}

export interface BlockhashLifetime {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
}

export interface SimulationResult {
  err: unknown;
  unitsConsumed: number | null;
  logs: readonly string[];
}

export interface SignatureStatus {
  slot: bigint;
  err: unknown;
  confirmationStatus: Commitment | null;
}

export type SendOutcome =
  | { kind: 'landed'; slot: bigint; err: unknown }
  | { kind: 'expired' }
  /** The RPC was lost or the deadline passed after sending: the transaction may still land. */
  | { kind: 'unknown' };

export interface SignedTransaction {
  wire: Base64EncodedWireTransaction;
  signature: Signature;
  lastValidBlockHeight: bigint;
}

export interface ChainAdapter {
  readonly commitment: Commitment;
  getAccounts(addresses: readonly Address[], deadline: number): Promise<(RawAccount | null)[]>;
  getTokenAccountsByOwner(owner: Address, mint: Address, deadline: number): Promise<RawAccount[]>;
  getBalance(address: Address, deadline: number): Promise<bigint>;
  getLatestBlockhash(deadline: number): Promise<BlockhashLifetime>;
  simulate(wire: Base64EncodedWireTransaction, deadline: number): Promise<SimulationResult>;
  sendAndConfirm(transaction: SignedTransaction, deadline: number): Promise<SendOutcome>;
  getSignatureStatus(signature: Signature, deadline: number): Promise<SignatureStatus | null>;
  getBlockHeight(deadline: number): Promise<bigint>;
  isHealthy(): Promise<boolean>;
}

export interface ChainAdapterOptions {
  rpcUrl: string;
  commitment: Commitment;
  /** Per RPC call. */
  callTimeoutMs?: number;
  /** Between rebroadcasts of the same signed transaction. */
  rebroadcastIntervalMs?: number;
  /** Between signature status polls. */
  pollIntervalMs?: number;
  maxReadAttempts?: number;
}

const COMMITMENT_RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** Whether a signature's status has reached `commitment` (confirmed is reached by finalized too). */
export function hasReachedCommitment(status: SignatureStatus | null, commitment: Commitment): boolean {
  return !!status?.confirmationStatus && COMMITMENT_RANK[status.confirmationStatus] >= COMMITMENT_RANK[commitment];
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

/** Sends that failed this many times without reaching the node end the attempt: nothing was sent. */
const MAX_UNDELIVERED_SENDS = 3;

/** True only when the transaction surely never reached the node (connection refused, no such host, 429). */
function isUndelivered(error: unknown): boolean {
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
  return new CinderError('RPC_UNAVAILABLE', 'The Solana RPC node did not answer; nothing was sent. Try again shortly.', {
    headers: { 'retry-after': '5' },
    cause,
  });
}

export function createChainAdapter(options: ChainAdapterOptions): ChainAdapter {
  const rpc: Rpc<SolanaRpcApi> = createSolanaRpc(options.rpcUrl);
  const { commitment } = options;
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const rebroadcastIntervalMs = options.rebroadcastIntervalMs ?? 2_000;
  const pollIntervalMs = options.pollIntervalMs ?? 400;
  const maxReadAttempts = options.maxReadAttempts ?? 4;

  function signalFor(deadline: number): AbortSignal {
    return AbortSignal.timeout(Math.max(1, Math.min(callTimeoutMs, deadline - Date.now())));
  }

  /** A read: timed out per call, retried on transient faults with exponential backoff and jitter. */
  async function read<T>(call: (abortSignal: AbortSignal) => Promise<T>, deadline: number): Promise<T> {
    let lastError: unknown;
    for (let attempt = 0; attempt < maxReadAttempts; attempt++) {
      if (Date.now() >= deadline) break;
      try {
        return await call(signalFor(deadline));
      } catch (error) {
        const { transient, retryAfterMs } = isTransient(error);
        if (!transient) throw error;
        lastError = error;
        const backoff = retryAfterMs ?? 200 * 2 ** attempt * (0.5 + Math.random());
        if (Date.now() + backoff >= deadline) break;
        await sleep(backoff);
      }
    }
    throw rpcUnavailable(lastError);
  }

  const base64 = getBase64Encoder();
  const toRawAccount = (
    address: Address,
    account: { lamports: bigint; owner: Address; data: readonly [string, string] } | null,
  ): RawAccount | null =>
    account && { address, lamports: account.lamports, owner: account.owner, data: new Uint8Array(base64.encode(account.data[0])) };

  async function getSignatureStatus(signature: Signature, deadline: number): Promise<SignatureStatus | null> {
    const { value } = await read(
      (abortSignal) => rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send({ abortSignal }),
      deadline,
    );
    const status = value[0];
    return status ? { slot: status.slot, err: status.err, confirmationStatus: status.confirmationStatus } : null;
  }

  return {
    commitment,

    async getAccounts(addresses, deadline) {
      const { value } = await read(
        (abortSignal) => rpc.getMultipleAccounts([...addresses], { encoding: 'base64', commitment }).send({ abortSignal }),
        deadline,
      );
      return value.map((account, i) => toRawAccount(addresses[i]!, account));
    },

    async getTokenAccountsByOwner(owner, mint, deadline) {
      const { value } = await read(
        (abortSignal) => rpc.getTokenAccountsByOwner(owner, { mint }, { encoding: 'base64', commitment }).send({ abortSignal }),
        deadline,
      );
      return value.map(({ pubkey, account }) => toRawAccount(pubkey, account)!);
    },

    async getBalance(address, deadline) {
      const { value } = await read((abortSignal) => rpc.getBalance(address, { commitment }).send({ abortSignal }), deadline);
      return value;
    },

    async getLatestBlockhash(deadline) {
      const { value } = await read((abortSignal) => rpc.getLatestBlockhash({ commitment }).send({ abortSignal }), deadline);
      return value;
    },

    async simulate(wire, deadline) {
      const { value } = await read(
        (abortSignal) =>
          rpc
            .simulateTransaction(wire, { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, commitment })
            .send({ abortSignal }),
        deadline,
      );
      return { err: value.err, unitsConsumed: value.unitsConsumed === undefined ? null : Number(value.unitsConsumed), logs: value.logs ?? [] };
    },

    getSignatureStatus,

    async getBlockHeight(deadline) {
      return read((abortSignal) => rpc.getBlockHeight({ commitment }).send({ abortSignal }), deadline);
    },

    /**
     * Solana's recommended landing loop: send with maxRetries 0 and rebroadcast the same bytes
     * until the signature reaches the commitment or the block height passes the blockhash's
     * lastValidBlockHeight. Rebroadcasting identical bytes can never burn twice.
     */
    async sendAndConfirm({ wire, signature, lastValidBlockHeight }, deadline) {
      let lastBroadcast = 0;
      let possiblyDelivered = false;
      let undeliveredSends = 0;
      let polls = 0;
      while (Date.now() < deadline) {
        if (Date.now() - lastBroadcast >= rebroadcastIntervalMs) {
          lastBroadcast = Date.now();
          try {
            await rpc
              .sendTransaction(wire, { encoding: 'base64', skipPreflight: true, maxRetries: 0n, preflightCommitment: commitment })
              .send({ abortSignal: signalFor(deadline) });
            possiblyDelivered = true;
          } catch (error) {
            if (!isUndelivered(error)) possiblyDelivered = true;
            else if (!possiblyDelivered && ++undeliveredSends >= MAX_UNDELIVERED_SENDS) throw rpcUnavailable(error);
            // Otherwise the next rebroadcast tries again, and a status poll may still find it.
          }
        }
        // Quick first looks (a local or fast cluster confirms in tens of ms), then every pollIntervalMs.
        await sleep(Math.min(pollIntervalMs, 25 * 2 ** polls++, Math.max(0, deadline - Date.now())));
        if (!possiblyDelivered) continue;
        try {
          const status = await getSignatureStatus(signature, Math.min(deadline, Date.now() + callTimeoutMs));
          if (status && (hasReachedCommitment(status, commitment) || status.err)) return { kind: 'landed', slot: status.slot, err: status.err };
          if (!status) {
            const blockHeight = await rpc.getBlockHeight({ commitment }).send({ abortSignal: signalFor(deadline) });
            if (blockHeight > lastValidBlockHeight) {
              // One last look with the whole history before declaring it dead.
              const final = await getSignatureStatus(signature, deadline);
              return final ? { kind: 'landed', slot: final.slot, err: final.err } : { kind: 'expired' };
            }
          }
        } catch {
          // RPC trouble while confirming: keep trying until the deadline.
        }
      }
      if (!possiblyDelivered) throw rpcUnavailable();
      return { kind: 'unknown' };
    },

    async isHealthy() {
      try {
        await rpc.getLatestBlockhash().send({ abortSignal: AbortSignal.timeout(Math.min(callTimeoutMs, 3000)) });
        return true;
      } catch {
        return false;
      }
    },
  };
}
