/**
 * What the chain adapter hands up: plain data, in a module of its own so that the adapter's parts
 * (account reader, blockhash cache, signature tracker) and everything above name these types
 * without importing chainAdapter.ts, which imports those parts (imports point one way).
 */
import type { Address, Base64EncodedWireTransaction, Blockhash, Signature } from '@solana/kit';
import type { Commitment } from '../config.ts';
import type { RpcRequestOutcome } from './rpcTransport.ts';

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
  /**
   * The programs the transaction invoked below the top level (its inner instructions, at any
   * depth), as the node reports them; an entry is null when the node names a program by an index
   * this adapter cannot resolve.
   */
  innerPrograms: readonly (Address | null)[];
  /** The account data the transaction loaded, as the node reports it (agave's `loadedAccountsDataSize`); null when it does not. */
  loadedAccountsDataSize?: number | null;
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
  getTokenAccountsByOwner(owner: Address, filter: { mint: Address } | { programId: Address }, deadline: number): Promise<RawAccount[]>;
  getBalance(address: Address, deadline: number): Promise<bigint>;
  getLatestBlockhash(deadline: number): Promise<BlockhashLifetime>;
  /**
   * Default: signatures not checked, blockhash replaced by the latest (to size and price a message
   * before it is signed). `{ signed: true }`: the transaction as it is, signatures and blockhash
   * checked (the relay of transactions signed elsewhere).
   */
  simulate(wire: Base64EncodedWireTransaction, deadline: number, options?: { signed?: boolean }): Promise<SimulationResult>;
  sendAndConfirm(transaction: SignedTransaction, deadline: number): Promise<SendOutcome>;
  /** Each signature's status (null: unknown to the node), searching the whole history; one call per 256 signatures. */
  getSignatureStatuses(signatures: readonly Signature[], deadline: number): Promise<(SignatureStatus | null)[]>;
  getBlockHeight(deadline: number): Promise<bigint>;
  /** The cluster's genesis hash (which cluster this is): read from the RPC once, then remembered. */
  getGenesisHash(deadline: number): Promise<string>;
  isHealthy(): Promise<boolean>;
  /**
   * getRecentPrioritizationFees for these accounts: the lowest compute-unit price (micro-lamports)
   * that landed in each of the recent slots while writing any of them. One RPC call; the read
   * belongs to src/chain/recentFees.ts, which bounds what is asked.
   */
  getRecentPrioritizationFees?(addresses: readonly Address[], deadline: number): Promise<bigint[]>;
  /** Subscribes to every JSON-RPC request that left for the RPC (for metrics); not an RPC operation. */
  onRpcRequest?(listener: (method: string, outcome: RpcRequestOutcome) => void): void;
}
