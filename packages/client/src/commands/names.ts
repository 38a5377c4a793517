/**
 * Token names as the CLI prints them. A name comes from the token's issuer (its metadata), so it is
 * cleaned of what changes how text reads without being seen: controls, line separators and every
 * invisible formatting character (Unicode's Cf category: the bidi embeddings, overrides and isolates
 * that let a scam token's name read as another's in a terminal, and zero-width characters). The
 * service cleans them too; the CLI does not rely on a server for what it prints. A name is always
 * printed beside its mint (formatPreview), which is what identifies the token.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** The text without hidden characters, trimmed; null when nothing visible is left. */
export function cleanName(text: string | null | undefined): string | null {
  const clean = (text ?? '').replace(HIDDEN, '').trim();
  return clean === '' ? null : clean;
}

/** "Name (SYMBOL)", the one that exists, or '' when the token has neither. */
export function tokenName(account: { name?: string | null; symbol?: string | null }): string {
  const name = cleanName(account.name);
  const symbol = cleanName(account.symbol);
  if (name && symbol) return `${name} (${symbol})`;
  return name ?? symbol ?? '';
}
