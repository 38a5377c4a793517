/**
 * What a failed simulation means, read in one place for every path that simulates before sending:
 * the one-owner compile (compile.ts), the many-owner job (reclaimMany.ts) and the relay (relay.ts).
 * Each path words its answer for its own caller, but they all read the node's error the same way,
 * so that one error never means "the fee payer is short" on one door and "the transaction would
 * fail" on another.
 */
import type { Address } from '@solana/kit';
import { customErrorCode, describeTransactionError, tokenErrorCode } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';

/**
 * - `fee-payer`: the fee payer cannot pay, or would be left between 0 and the rent-exempt minimum
 *   (the runtime refuses such a balance: `InsufficientFundsForRent`), or does not exist;
 * - `frozen` / `paused`: a token account is frozen, the mint is paused;
 * - `blockhash-expired`, `bad-signature`: only a signed transaction (the relay) meets these;
 * - `rejected`: anything else the program or the runtime refused.
 */
export type SimulationFailureKind = 'fee-payer' | 'frozen' | 'paused' | 'blockhash-expired' | 'bad-signature' | 'rejected';

export function classifySimulationError(err: unknown): SimulationFailureKind {
  if (err === 'InsufficientFundsForFee' || err === 'AccountNotFound' || (typeof err === 'object' && err !== null && 'InsufficientFundsForRent' in err)) {
    return 'fee-payer';
  }
  if (err === 'BlockhashNotFound') return 'blockhash-expired';
  if (err === 'SignatureFailure') return 'bad-signature';
  const custom = customErrorCode(err);
  if (custom === tokenErrorCode('AccountFrozen')) return 'frozen';
  if (custom === tokenErrorCode('MintPaused')) return 'paused';
  return 'rejected';
}

/** The fee payer's failure, worded once: 400 INSUFFICIENT_SOL_FOR_FEE naming the payer (and the request's field, when there is one). */
export function feePayerCannotPay(payer: Address, field?: string): CinderError {
  const context = { reason: 'simulation', feePayer: payer, ...(field ? { field } : {}) } as const;
  const problem = `${payer} does not hold enough SOL to pay the transaction fee`;
  return new CinderError('INSUFFICIENT_SOL_FOR_FEE', context, field ? { errors: [{ field, message: problem }] } : {});
}

/** The answer of a plan's simulation (compile.ts): what stands in the way, as a CinderError. */
export function simulationFailure(err: unknown, payer: Address): CinderError {
  switch (classifySimulationError(err)) {
    case 'fee-payer':
      return feePayerCannotPay(payer);
    case 'frozen':
      return new CinderError('ACCOUNT_FROZEN', { reason: 'simulation' });
    case 'paused':
      return new CinderError('MINT_PAUSED', { reason: 'simulation' });
    default:
      return new CinderError('TRANSACTION_REJECTED', { reason: 'simulation', error: describeTransactionError(err) });
  }
}
