/**
 * The first step of the pipeline: what to do with each token account of a wallet. Pure: the
 * wallet's state in, one action with its reason per account out. Burn (one mint), preview and
 * reclaim (the whole wallet) and prepare all ask this one function, with different options.
 *
 * Facts relied on (each checked on the embedded chain by test/plan/*.test.ts and test/http/*):
 * - CloseAccount needs a zero token balance (wrapped SOL excepted: closing it unwraps), the owner
 *   (or the close authority) as signer, and, on Token-2022, no withheld transfer fees (harvested to
 *   the mint first) and an empty confidential balance. A frozen account cannot be burned; the
 *   programs would close an empty frozen one (packages/localnet/test/tokens.test.ts), but the
 *   contract's money rules skip every frozen account (ACCOUNT_FROZEN), and so does this planner.
 * - Token-2022 Pausable refuses burns while the mint is paused (MintPaused); PermissionedBurn
 *   refuses a plain burn (it needs the burn authority's signature, which Cinder never holds). Neither blocks closing an empty account.
 * - WithdrawExcessLamports (instruction 38) moves an account's lamports above its rent-exempt
 *   minimum to the owner without closing it, in p-token and Token-2022; it refuses wrapped SOL.
 */
import type { Address } from '@solana/kit';
import type { MintState, TokenAccountState } from './tokenState.ts';
import { rentExemptMinimum, type Rent } from './rent.ts';
import { mapInSlices } from './slices.ts';

export type AccountActionKind = 'close' | 'burn_and_close' | 'unwrap' | 'withdraw_excess' | 'keep' | 'skip';

/** Why an account that was asked for cannot be done (the money rules' codes). */
export type SkipCode =
  | 'ACCOUNT_FROZEN'
  | 'MINT_PAUSED'
  | 'CLOSE_AUTHORITY_NOT_OWNER'
  | 'CONFIDENTIAL_BALANCE_NOT_EMPTY'
  | 'BURN_NOT_PERMITTED'
  | 'MINT_NOT_FOUND';

export interface AccountAction {
  account: TokenAccountState;
  /** null when the mint account no longer exists (or is not a mint). */
  mint: MintState | null;
  action: AccountActionKind;
  code: SkipCode | null;
  rentExemptLamports: bigint;
  excessLamports: bigint;
  /** Lamports this action moves to the owner: the whole balance of a closed account, or the excess withdrawn. */
  returnsLamports: bigint;
  /** Tokens burned (raw units). */
  burnAmount: bigint;
  /** Token-2022 withheld transfer fees are harvested to the mint before the close. */
  harvest: boolean;
}

export interface WalletState {
  owner: Address;
  /** The owner's SOL balance; 0 when the wallet account does not exist. */
  ownerLamports: bigint;
  /** The owner's token accounts (of both programs, or of one mint for a burn). */
  accounts: readonly TokenAccountState[];
  /** Decoded mints of those accounts; a missing entry means the mint account does not exist. */
  mints: ReadonlyMap<Address, MintState>;
  rent: Rent;
}

export interface PlanOptions {
  /** Mints whose balances are burned (a burn's one mint; a reclaim's `burn` list). The native mint here means "unwrap". */
  burnMints: ReadonlySet<Address>;
  /** Take the excess lamports of the accounts that are kept. */
  withdrawExcess: boolean;
}

export const ACTIONS_THAT_SEND: ReadonlySet<AccountActionKind> = new Set(['close', 'burn_and_close', 'unwrap', 'withdraw_excess']);

/** Why this account cannot be closed (with its balance burned when `burns`), or null when it can. */
function blockerOf(owner: Address, account: TokenAccountState, mint: MintState | null, burns: boolean): SkipCode | null {
  if (account.frozen) return 'ACCOUNT_FROZEN';
  if (account.closeAuthority !== null && account.closeAuthority !== owner) return 'CLOSE_AUTHORITY_NOT_OWNER';
  if (account.hasConfidentialBalance) return 'CONFIDENTIAL_BALANCE_NOT_EMPTY';
  if (account.withheldAmount > 0n && !mint) return 'MINT_NOT_FOUND'; // the harvest needs the mint
  if (!burns) return null;
  if (!mint) return 'MINT_NOT_FOUND'; // BurnChecked needs the mint and its decimals
  if (mint.paused) return 'MINT_PAUSED';
  if (mint.permissionedBurn) return 'BURN_NOT_PERMITTED';
  return null;
}

export function planAccountAction(state: WalletState, account: TokenAccountState, options: PlanOptions): AccountAction {
  const mint = state.mints.get(account.mint) ?? null;
  const rentExemptLamports = rentExemptMinimum(state.rent, account.space);
  const excessLamports = account.isNative ? 0n : account.lamports > rentExemptLamports ? account.lamports - rentExemptLamports : 0n;
  const base = { account, mint, rentExemptLamports, excessLamports, code: null, returnsLamports: 0n, burnAmount: 0n, harvest: false };
  const listed = options.burnMints.has(account.mint);

  // What the owner asked for: close empty accounts; burn (or unwrap) the listed mints; keep the rest.
  let wanted: 'close' | 'burn_and_close' | 'unwrap' | 'keep';
  if (account.isNative) wanted = account.amount === 0n || listed ? 'unwrap' : 'keep';
  else if (account.amount === 0n) wanted = 'close';
  else wanted = listed ? 'burn_and_close' : 'keep';

  if (wanted === 'keep') {
    const withdraw = options.withdrawExcess && excessLamports > 0n && !account.frozen;
    return withdraw ? { ...base, action: 'withdraw_excess', returnsLamports: excessLamports } : { ...base, action: 'keep' };
  }
  const code = blockerOf(state.owner, account, mint, wanted === 'burn_and_close');
  if (code) return { ...base, action: 'skip', code };
  return {
    ...base,
    action: wanted,
    returnsLamports: account.lamports,
    burnAmount: wanted === 'burn_and_close' ? account.amount : 0n,
    harvest: account.withheldAmount > 0n,
  };
}

/** Code-unit order: addresses are ASCII, and this is many times faster than localeCompare on thousands of them. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One action per account of the owner, in a stable order (program, mint, address). Planned a
 * slice at a time (src/plan/slices.ts): a wallet may hold thousands of accounts.
 */
export async function planAccountActions(state: WalletState, options: PlanOptions): Promise<AccountAction[]> {
  const owned = state.accounts.filter((account) => account.owner === state.owner);
  const actions = await mapInSlices(owned, (account) => planAccountAction(state, account, options));
  return actions.sort(
    (a, b) =>
      byText(a.account.tokenProgram, b.account.tokenProgram) || byText(a.account.mint, b.account.mint) || byText(a.account.address, b.account.address),
  );
}
