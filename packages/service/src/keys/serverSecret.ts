/**
 * SERVER_SECRET is the HMAC key of relay tokens (the fee sponsor signs what a valid token covers)
 * and of idempotency records: whoever guesses it mints tokens. A secret that anyone who reads the
 * repository knows, or that a person typed rather than generated, stops the start.
 *
 * Refused: a value printed in the docs or the example files; one character repeated, or a short
 * pattern repeated; fewer than 10 distinct characters (a short alphabet: `openssl rand -hex 16`
 * has 16 and shows at least 10 with a chance of failure of about 1 in 10,000); a run of
 * consecutive characters ("abcdef…", "0123…") making up most of it. These are cheap signs of a
 * hand-made value, not a proof of randomness: the message says how to make a good one.
 */

/** Values that appear in Cinder's docs and example files: public, so never a secret. */
const PUBLISHED_SECRETS: ReadonlySet<string> = new Set(['change-me-to-at-least-32-random-characters']);

export const MAKE_SECRET_COMMAND = 'openssl rand -base64 32';

/** Why this secret is guessable, or null when it passes. */
export function guessableSecretReason(secret: string): string | null {
  if (PUBLISHED_SECRETS.has(secret)) return 'is the value printed in the docs / example file';
  const characters = [...secret];
  const distinct = new Set(characters).size;
  if (distinct === 1) return 'is one character repeated';
  for (let period = 1; period <= characters.length / 2; period++) {
    if (characters.every((c, i) => i < period || c === characters[i - period])) return 'is a short pattern repeated';
  }
  if (distinct < 10) return `uses only ${distinct} distinct characters (a short alphabet)`;
  let steps = 0;
  for (let i = 1; i < characters.length; i++) {
    const delta = characters[i]!.codePointAt(0)! - characters[i - 1]!.codePointAt(0)!;
    if (delta === 1 || delta === -1) steps++;
  }
  if (steps * 2 >= characters.length) return 'is mostly a run of consecutive characters';
  return null;
}
