/**
 * What a keyed burn or reclaim answers: the operation asked for (its door), each transaction's
 * report, what landed, the money, and the accounts skipped and why. Plain data, in a module of its
 * own so that the pipeline that builds it and the sentence that describes it (describe.ts) both
 * read it without importing each other.
 */
import type { Address, Signature } from '@solana/kit';
import type { OperationStatus } from '../chain/verdicts.ts';
import type { CinderErrorCode } from '../errors.ts';
import type { AccountAction } from '../plan/actions.ts';

/** What the owner asked for: one mint burned (a burn), or the whole wallet cleaned (a reclaim). */
export type OperationKind = { kind: 'burn'; mint: Address } | { kind: 'reclaim'; burn: readonly Address[]; withdrawExcess: boolean };

export interface SkippedAccount {
  address: Address;
  code: CinderErrorCode;
  /** Why, in a sentence. */
  reason: string;
}

export interface TransactionReport {
  signature: Signature;
  status: OperationStatus;
  slot: bigint | null;
  closedAccounts: Address[];
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
  error: string | null;
}

/** An account a many-owner job skipped, with its owner. */
export type ManySkippedAccount = SkippedAccount & { owner: Address };

/** A transaction's report with the owners whose accounts it closes; its fee is what the fee payer paid (0 when it did not land). */
export type ManyTransactionReport = TransactionReport & { owners: Address[] };

/** What a keyed reclaim of many wallets answers: the same reports, the fee payer and the destination. */
export interface ManyResult {
  status: OperationStatus;
  message: string;
  signatures: Signature[];
  feePayer: Address;
  destination: Address;
  transactions: ManyTransactionReport[];
  /** Rent of the closes that landed: what the destination received. */
  reclaimedLamports: bigint;
  /** Fees the fee payer paid. */
  feeLamports: bigint;
  netLamports: bigint;
  skippedAccounts: ManySkippedAccount[];
}

export interface OperationResult {
  status: OperationStatus;
  message: string;
  owner: Address;
  signatures: Signature[];
  slot: bigint | null;
  sponsored: boolean;
  transactions: TransactionReport[];
  /** What landed without error: */
  closedAccounts: Address[];
  burned: { mint: Address; amount: bigint; decimals: number }[];
  reclaimedLamports: bigint;
  excessWithdrawnLamports: bigint;
  /** Fees the owner bore (sponsored: repaid to the sponsor) for the transactions that landed. */
  feeLamports: bigint;
  netLamports: bigint;
  skippedAccounts: SkippedAccount[];
}

/** Why an account is skipped, in a sentence a person can act on. */
function skipReason(action: AccountAction): string {
  const { account } = action;
  switch (action.code) {
    case 'ACCOUNT_FROZEN':
      return `Token account ${account.address} is frozen by the mint's freeze authority: it can be neither burned nor closed until thawed`;
    case 'CLOSE_AUTHORITY_NOT_OWNER':
      return `Token account ${account.address} has close authority ${account.closeAuthority}, not the owner: only that authority can close it`;
    case 'CONFIDENTIAL_BALANCE_NOT_EMPTY':
      return `Token account ${account.address} holds a confidential-transfer balance; Token-2022 only closes it once that balance is withdrawn (this needs the owner's ElGamal key)`;
    case 'MINT_PAUSED':
      return `Token account ${account.address} holds a balance of a paused mint (Token-2022 Pausable): the program refuses to burn it until the mint's pause authority resumes the mint`;
    case 'BURN_NOT_PERMITTED':
      return `Token account ${account.address} holds a balance of a mint with Token-2022 PermissionedBurn: a burn needs the mint's burn authority to sign as well, and Cinder never holds that key`;
    case 'MINT_NOT_FOUND':
      return `Token account ${account.address} belongs to mint ${account.mint}, which no longer exists, and it still holds tokens or withheld fees`;
    default:
      return `Token account ${account.address} cannot be closed (${action.code})`;
  }
}

export const skippedOf = (actions: readonly AccountAction[]): SkippedAccount[] =>
  actions.filter((a) => a.action === 'skip').map((a) => ({ address: a.account.address, code: a.code!, reason: skipReason(a) }));

export const reasonText = (skipped: readonly SkippedAccount[]): string => skipped.map((s) => s.reason).join('; ');
