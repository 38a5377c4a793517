/**
 * The shape of a catalogue entry, and the wordings several codes share (field lists, refused
 * items, blocked accounts, a busy wallet). Pure: contexts in, sentences out.
 */
import type {
  AddressFields,
  BlockedAccounts,
  CinderErrorCode,
  CinderErrorContext,
  CinderProblemMembers,
  FieldProblem,
  ItemRefusal,
  SchemaFields,
  SkippedAccountMember,
  WalletBusy,
} from './contexts.ts';

/** What a client may send as a key, as said in messages and in the API description. */
export const PRIVATE_KEY_FORMATS =
  'base58 of the 64-byte secret key (Phantom/Solflare export), base58 of the 32-byte seed, ' +
  'or the solana-keygen JSON array of 64 numbers';

/** One code's entry: status, title, its one message, and the problem members it adds (required where the code declares some). */
export type Entry<C extends CinderErrorCode> = {
  status: number;
  title: string;
  message: (context: CinderErrorContext<C>) => string;
} & (C extends keyof CinderProblemMembers
  ? { members: (context: CinderErrorContext<C>) => CinderProblemMembers[C] }
  : { members?: never });

export const fieldList = (problems: readonly FieldProblem[]) => problems.map((p) => `${p.field} ${p.message}`).join('; ');

export function schemaFields({ problems, more }: SchemaFields): string {
  return fieldList(problems) + (more ? `; and ${more} more` : '');
}

export function addressFields({ problems, keyExposed }: AddressFields): string {
  const count = problems.length === 1 ? '' : `${problems.length} fields are wrong: `;
  const exposed = keyExposed ? ' A private key sent where an address belongs has left your machine: move what its wallet holds to a new wallet.' : '';
  return `${count}${fieldList(problems)}.${exposed} Nothing was sent.`;
}

export const itemRefusal = ({ field, problem }: ItemRefusal) => `${field} ${problem}. Nothing was sent.`;

export const reasons = (skipped: readonly SkippedAccountMember[]) => skipped.map((s) => s.reason).join('; ');

export const blocked = ({ skipped }: BlockedAccounts) => `${reasons(skipped)}. Nothing was sent.`;

export function blockedMembers(context: BlockedAccounts | { reason: string }): CinderProblemMembers['ACCOUNT_FROZEN'] {
  if (!('skipped' in context)) return {};
  return { accounts: context.skipped.map((s) => s.address), skippedAccounts: [...context.skipped] };
}

export function walletBusy({ wallet, holder }: WalletBusy): string {
  return holder === 'sponsored transaction'
    ? `Another sponsored transaction of ${wallet} is landing, or was sent and may still land (for up to about a minute). Nothing was sent by this request; retry shortly.`
    : `Another burn or reclaim of ${wallet} is running, or sent transactions that may still land (for up to about a minute). Nothing was sent by this request; retry shortly.`;
}

/** A 4xx raised by a plugin with its own status: the status in words, never the plugin's message (it may quote the path). */
export const refused = (what: string) => `The request was refused: ${what}.`;

/** A path is echoed only when short and free of anything that could be a key (32 bytes or more of base58). */
export const shownPath = (path: string) => (path.length <= 100 && !/[1-9A-HJ-NP-Za-km-z]{32,}/.test(path) ? path : '(path not shown)');

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function fieldNames({ fields, more }: { fields: readonly string[]; more: number }): string {
  return fields.join(', ') + (more > 0 ? ` and ${more} more` : '');
}
