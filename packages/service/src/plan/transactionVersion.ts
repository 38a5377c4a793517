/**
 * Which transaction version a job uses, and the v1 limits every v1 message carries. Pure.
 *
 * v1 only where both sides take it: the cluster has the gate `txv1aq4pp…` active and the signer
 * declares version 1 (Cinder itself for keyed doors; a wallet's `supportedTransactionVersions`;
 * a keyless caller's `transactionVersions`). Otherwise the version the door used before v1.
 *
 * A v1 limit left unset is zero (solana-message `v1::TransactionConfig`: "None means use 0"), and
 * such a transaction fails in loading (MaxLoadedAccountsDataSizeExceeded) and is still charged
 * its fee: every v1 message Cinder writes sets all of them.
 */
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import type { BlockhashLifetime } from '../chain/types.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from './pack.ts';

export type TransactionVersion = 'legacy' | 0 | 1;
export const TRANSACTION_VERSIONS: readonly TransactionVersion[] = ['legacy', 0, 1];

/** The loaded-accounts-data limit's ceiling (agave MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, 64 MiB). */
export const MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES = 64 * 1024 * 1024;
/** solana.com's advice: round the loaded data a simulation reports up to the next 32 KiB. */
export const LOADED_ACCOUNTS_DATA_STEP = 32 * 1024;

/**
 * The version a job uses: 1 when the cluster's gate is active and the signer declares 1, else
 * `fallback` (what the door used before v1: legacy for one owner, v0 for many).
 */
export function chooseTransactionVersion(input: {
  v1GateActive: boolean;
  signerVersions: readonly TransactionVersion[];
  fallback: 'legacy' | 0;
}): TransactionVersion {
  return input.v1GateActive && input.signerVersions.includes(1) ? 1 : input.fallback;
}

/** The config a v1 message is simulated with: both limits at their maximum, no priority fee. */
export const V1_SIMULATION_CONFIG = {
  computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT,
  loadedAccountsDataSizeLimit: MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES,
  priorityFeeLamports: 0n,
} as const;

/** The loaded-data limit for a transaction whose simulation loaded `bytes` (program accounts count): the next 32 KiB up, never 0. */
export function loadedAccountsDataLimitFor(bytes: number): number {
  const steps = Math.max(1, Math.ceil(bytes / LOADED_ACCOUNTS_DATA_STEP));
  return Math.min(steps * LOADED_ACCOUNTS_DATA_STEP, MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
}

export interface V1Limits {
  computeUnitLimit: number;
  loadedAccountsDataSizeLimit: number;
  /** The priority fee as the total it is, in lamports. */
  priorityFeeLamports: bigint;
}

/** A v1 message: fee payer, lifetime, instructions, and every limit in its config. */
export function v1TransactionMessage(feePayer: TransactionSigner, lifetime: BlockhashLifetime, instructions: Instruction[], limits: V1Limits) {
  return pipe(
    createTransactionMessage({ version: 1 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageConfig(limits, m),
  );
}
