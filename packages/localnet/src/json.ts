/**
 * JSON text for RPC replies. The validator writes u64 values (lamports, slots, fees) as bare JSON
 * integers and @solana/kit parses every integer back into a bigint, so bigint must be written
 * as digits — never as a string, and never through `Number` (which loses precision above 2^53).
 *
 * Written by JSON.stringify (native: several times faster than a writer in JavaScript for the
 * 3,000-account answers of a large wallet), whose replacer writes a bigint as a number when that
 * is exact, else as a string that carries this process's random marker; one pass then turns those
 * strings into bare digits. No other string can carry the marker: it is never written anywhere else.
 */
import { randomBytes } from 'node:crypto';

const MARKER = `bigint-${randomBytes(12).toString('hex')}:`;
const MARKED = new RegExp(`"${MARKER}(-?\\d+)"`, 'g');
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

const replacer = (_key: string, value: unknown): unknown =>
  typeof value !== 'bigint' ? value : value <= MAX_EXACT && value >= -MAX_EXACT ? Number(value) : `${MARKER}${value}`;

export function stringifyJson(value: unknown): string {
  const json = JSON.stringify(value, replacer) as string | undefined;
  return json === undefined ? 'null' : json.replace(MARKED, '$1');
}
