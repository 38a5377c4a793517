/**
 * A refusal in the words of the form the person filled in: each field the server names is called
 * by its label, and the server's setting names (an operator's business) are left out.
 */
import { ApiError } from './api.ts';

/** "must be at most 10000 (MAX_WALLETS_PER_REQUEST)" → "must be at most 10,000". */
function plainRule(message: string): string {
  return message
    .replace(/\s*\([A-Z][A-Z0-9_]+\)/g, '')
    .replace(/\b\d{4,}\b/g, (n) => Number(n).toLocaleString('en-US'))
    .trim();
}

/** The message to show for `error`: per field, "<label>: <rule>", when the server listed fields this form has. */
export function inFormWords(error: unknown, labels: Readonly<Record<string, string>>): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof ApiError) {
    const known = error.fields.filter((f) => Object.hasOwn(labels, f.field));
    if (known.length > 0) return known.map((f) => `${labels[f.field]}: ${plainRule(f.message)}.`).join(' ');
  }
  return error.message;
}
