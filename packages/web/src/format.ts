/** Numbers as a person reads them: exact decimal strings from integer units (no floating point). */

/** `units` (a u64 or i64 decimal string, or a bigint) with `decimals`, grouped by thousands, trailing zeros dropped. */
export function formatUnits(units: string | bigint, decimals: number): string {
  const value = BigInt(units);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(decimals);
  const whole = (abs / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export const sol = (lamports: string | bigint) => `${formatUnits(lamports, 9)} SOL`;

/** The first and last 4 characters of an address. */
export const short = (address: string) => `${address.slice(0, 4)}…${address.slice(-4)}`;

export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * A token's name or symbol as the page shows it: without controls, line separators and invisible
 * formatting characters (Unicode Cf: the bidi overrides and isolates that make a scam token's name
 * read as another's, zero-width characters). The service cleans them too; the page does not rely
 * on it, since what it shows is its own responsibility. Null when nothing visible is left.
 */
export function cleanName(text: string | null | undefined): string | null {
  const clean = (text ?? '').replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '').trim();
  return clean === '' ? null : clean;
}
