/**
 * Human text for a Solana TransactionError in its JSON-RPC shape, e.g.
 * `{ "InstructionError": [1, { "Custom": 17 }] }` → "instruction 1 failed: AccountFrozen (token error 17)".
 */

// spl-token / spl-token-2022 `TokenError` in declaration order (0x23 = AccountHasWithheldTransferFees).
const TOKEN_ERRORS = [
  'NotRentExempt', 'InsufficientFunds', 'InvalidMint', 'MintMismatch', 'OwnerMismatch', 'FixedSupply', 'AlreadyInUse',
  'InvalidNumberOfProvidedSigners', 'InvalidNumberOfRequiredSigners', 'UninitializedState', 'NativeNotSupported',
  'NonNativeHasBalance', 'InvalidInstruction', 'InvalidState', 'Overflow', 'AuthorityTypeNotSupported', 'MintCannotFreeze',
  'AccountFrozen', 'MintDecimalsMismatch', 'NonNativeNotSupported', 'ExtensionTypeMismatch', 'ExtensionBaseMismatch',
  'ExtensionAlreadyInitialized', 'ConfidentialTransferAccountHasBalance', 'ConfidentialTransferAccountNotApproved',
  'ConfidentialTransferDepositsAndTransfersDisabled', 'ConfidentialTransferElGamalPubkeyMismatch',
  'ConfidentialTransferBalanceMismatch', 'MintHasSupply', 'NoAuthorityExists', 'TransferFeeExceedsMaximum',
  'MintRequiredForTransfer', 'FeeMismatch', 'FeeParametersMismatch', 'ImmutableOwner', 'AccountHasWithheldTransferFees',
  'NoMemo', 'NonTransferable', 'NonTransferableNeedsImmutableOwnership', 'MaximumPendingBalanceCreditCounterExceeded',
  'MaximumDepositAmountExceeded', 'CpiGuardSettingsLocked', 'CpiGuardTransferBlocked', 'CpiGuardBurnBlocked',
  'CpiGuardCloseAccountBlocked', 'CpiGuardApproveBlocked', 'CpiGuardSetAuthorityBlocked', 'CpiGuardOwnerChangeBlocked',
  'ExtensionNotFound', 'NonConfidentialTransfersDisabled', 'ConfidentialTransferFeeAccountHasWithheldFee',
  'InvalidExtensionCombination', 'InvalidLengthForAlloc', 'AccountDecryption', 'ProofGeneration',
  'InvalidProofInstructionOffset', 'HarvestToMintDisabled', 'SplitProofContextStateAccountsNotSupported',
  'NotEnoughProofContextStateAccounts', 'MalformedCiphertext', 'CiphertextArithmeticFailed', 'PedersenCommitmentMismatch',
  'RangeProofLengthMismatch', 'IllegalBitLength', 'FeeCalculation', 'IllegalMintBurnConversion', 'InvalidScale', 'MintPaused',
  'PendingBalanceNonZero',
];

export type TransactionErrorJson = string | Record<string, unknown>;

function describeInstructionError(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object') {
    const [[kind, value] = ['Unknown', undefined]] = Object.entries(detail);
    if (kind === 'Custom' && (typeof value === 'number' || typeof value === 'bigint')) {
      // kit may hand numbers from the RPC over as bigint
      const code = Number(value);
      const name = TOKEN_ERRORS[code];
      return name ? `${name} (token program error ${code}, 0x${code.toString(16)})` : `custom program error 0x${code.toString(16)}`;
    }
    return value === undefined ? kind : `${kind}: ${JSON.stringify(value)}`;
  }
  return String(detail);
}

export function describeTransactionError(err: unknown): string {
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object') {
    const record = err as Record<string, unknown>;
    const instructionError = record.InstructionError;
    if (Array.isArray(instructionError)) {
      return `instruction ${String(instructionError[0])} failed: ${describeInstructionError(instructionError[1])}`;
    }
    const [[kind, value] = ['Unknown', undefined]] = Object.entries(record);
    return value === undefined ? kind : `${kind}: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`;
  }
  return 'unknown error';
}

/** The custom error code of a failed instruction, if that is what the error is. */
export function customErrorCode(err: unknown): number | null {
  if (!err || typeof err !== 'object') return null;
  const instructionError = (err as Record<string, unknown>).InstructionError;
  if (!Array.isArray(instructionError)) return null;
  const detail = instructionError[1] as Record<string, unknown> | undefined;
  const custom = detail?.Custom;
  return typeof custom === 'number' || typeof custom === 'bigint' ? Number(custom) : null;
}

export function tokenErrorCode(name: string): number {
  return TOKEN_ERRORS.indexOf(name);
}
