/** A wallet's token accounts as the page groups and names them (pure: no I/O, no rendering). */
import type { AccountPreview } from './api.ts';
import { formatUnits, short } from './format.ts';

export const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** Why an account cannot be closed, for each code of the money rules. */
export const SKIP_REASONS: Record<string, string> = {
  ACCOUNT_FROZEN: 'Frozen by the token’s issuer: it cannot be burned or closed until thawed.',
  CLOSE_AUTHORITY_NOT_OWNER: 'Another address holds the right to close this account.',
  CONFIDENTIAL_BALANCE_NOT_EMPTY: 'Holds a confidential balance, which must be withdrawn first.',
  MINT_PAUSED: 'The token is paused by its issuer: it cannot be burned now.',
  BURN_NOT_PERMITTED: 'This token can only be burned with its issuer’s signature.',
  MINT_NOT_FOUND: 'Its token no longer exists, and the account still holds tokens or withheld fees.',
};

export function tokenLabel(account: AccountPreview): string {
  if (account.isNative) return 'Wrapped SOL';
  if (account.name && account.symbol) return `${account.name} (${account.symbol})`;
  return account.name ?? account.symbol ?? short(account.mint);
}

export const balanceOf = (account: AccountPreview) => (account.decimals === null ? account.amount : formatUnits(account.amount, account.decimals));
export const amountWithSymbol = (account: AccountPreview) => `${balanceOf(account)} ${account.symbol ?? tokenLabel(account)}`;

/**
 * Why an account cannot be closed: the preview's code, or for an account kept because it holds
 * tokens, its frozen state (the preview names a blocker only of what it was asked to close).
 */
export const blockerOf = (account: AccountPreview): string | null => account.code ?? (account.state === 'frozen' ? 'ACCOUNT_FROZEN' : null);

/** May this account's balance be burned from here: it holds tokens, nothing blocks it, and it is not an NFT. */
export const burnable = (account: AccountPreview) =>
  account.amount !== '0' &&
  !account.isNative &&
  !account.looksLikeNft &&
  blockerOf(account) === null &&
  (account.action === 'keep' || account.action === 'burn_and_close');

export type GroupName = 'close' | 'burn' | 'nft' | 'skip' | 'kept';
export interface Group {
  name: GroupName;
  accounts: AccountPreview[];
  /** The rent the group's accounts hold, in lamports. */
  lamports: bigint;
}

/** The group an account is shown in: closes now; holds tokens (a burn choice); an NFT (kept); cannot be closed (a reason); anything else kept. */
export function groupOf(account: AccountPreview): GroupName {
  if (account.action === 'skip' || blockerOf(account) !== null) return 'skip';
  if (burnable(account)) return 'burn';
  if (account.looksLikeNft) return 'nft';
  if (account.action === 'close' || account.action === 'unwrap' || account.action === 'withdraw_excess') return 'close';
  return 'kept';
}

const ORDER: GroupName[] = ['close', 'burn', 'nft', 'skip', 'kept'];

/** The non-empty groups, in the order the page shows them; within each, named tokens first, then by name, then by mint. */
export function groupAccounts(accounts: readonly AccountPreview[]): Group[] {
  const byName = new Map<GroupName, AccountPreview[]>();
  for (const account of accounts) byName.set(groupOf(account), [...(byName.get(groupOf(account)) ?? []), account]);
  return ORDER.flatMap((name) => {
    const members = byName.get(name);
    if (!members) return [];
    const sorted = [...members].sort(
      (a, b) => Number(!a.name && !a.symbol) - Number(!b.name && !b.symbol) || tokenLabel(a).localeCompare(tokenLabel(b)) || a.mint.localeCompare(b.mint),
    );
    return [{ name, accounts: sorted, lamports: sorted.reduce((sum, a) => sum + BigInt(a.lamports), 0n) }];
  });
}

/**
 * SOL a wallet needs to pay its own fees, rounded up to a figure a person can send ("about
 * 0.0009 SOL"): what the service said is missing, else a 0-byte account's rent-exempt minimum
 * (890,880 lamports, the least a fee payer may keep) plus the fees.
 */
export function solToSend(detail: string, feeLamports: bigint): string {
  const said = /([0-9]+(?:\.[0-9]+)?) SOL more is needed/.exec(detail)?.[1];
  const lamports = said ? parseLamports(said) : 890_880n + feeLamports;
  // Up to the next 0.0001 SOL (100,000 lamports).
  const rounded = ((lamports + 99_999n) / 100_000n) * 100_000n;
  return formatUnits(rounded, 9);
}

function parseLamports(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}
