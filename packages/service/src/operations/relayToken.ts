/**
 * Relay tokens: the proof that a transaction message was prepared by this service. The relay adds
 * the fee sponsor's signature only to messages a valid token covers, so the sponsor signs nothing
 * but what Cinder compiled itself (its own fee payment, repaid in the same transaction).
 *
 * A token is `v1.<expiresAt ms>.<SHA-256 of each message, base64url>.<HMAC-SHA256, base64url>`:
 * the HMAC (key SERVER_SECRET) covers the expiry and the list of message hashes, and each hash
 * covers one exact compiled message (every byte the signers sign). Carrying the hashes lets the
 * transactions of one prepare answer be relayed in several requests with the same token; each
 * relayed message must be one of them, byte for byte. Node's crypto does the HMAC and the
 * constant-time comparison; only the framing is ours.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ReadonlyUint8Array } from '@solana/kit';

const VERSION = 'v1';
const HASH_BYTES = 32;
/** More messages than any prepare answer holds; bounds the work a forged token can cause. */
export const MAX_RELAY_TOKEN_MESSAGES = 256;
const TOKEN = /^v1\.([1-9][0-9]{0,15})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

const sha256 = (bytes: ReadonlyUint8Array) => createHash('sha256').update(bytes as Uint8Array).digest();

function mac(secret: string, expiresAt: number, hashes: string): Buffer {
  return createHmac('sha256', secret).update(`cinder-relay-token:${VERSION}:${expiresAt}:${hashes}`, 'utf8').digest();
}

/** A token for these compiled messages (kit's `transaction.messageBytes`), valid until `expiresAt` (ms since the epoch). */
export function issueRelayToken(secret: string, messageBytes: readonly ReadonlyUint8Array[], expiresAt: number): string {
  if (messageBytes.length === 0 || messageBytes.length > MAX_RELAY_TOKEN_MESSAGES) {
    throw new RangeError(`a relay token covers 1 to ${MAX_RELAY_TOKEN_MESSAGES} messages`);
  }
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= 0) throw new RangeError('expiresAt must be a positive integer of milliseconds');
  const hashes = Buffer.concat(messageBytes.map(sha256)).toString('base64url');
  return `${VERSION}.${expiresAt}.${hashes}.${mac(secret, expiresAt, hashes).toString('base64url')}`;
}

export type RelayTokenCheck =
  /** Issued by this service (or one sharing its SERVER_SECRET), unexpired, and covering every message. */
  | 'valid'
  /** Issued by this service and covering every message, but past its expiry. */
  | 'expired'
  /** Malformed, forged, or not covering every message. */
  | 'invalid';

/** What a token proves about these messages: see RelayTokenCheck. `now` is for tests. */
export function checkRelayToken(secret: string, token: string, messageBytes: readonly ReadonlyUint8Array[], now = Date.now()): RelayTokenCheck {
  const match = TOKEN.exec(token);
  if (!match || messageBytes.length === 0) return 'invalid';
  const [, expiry, hashes, signature] = match as unknown as [string, string, string, string];
  const expiresAt = Number(expiry);
  const covered = Buffer.from(hashes, 'base64url');
  if (!Number.isSafeInteger(expiresAt) || covered.length === 0 || covered.length % HASH_BYTES !== 0) return 'invalid';
  if (covered.length / HASH_BYTES > MAX_RELAY_TOKEN_MESSAGES || covered.toString('base64url') !== hashes) return 'invalid';
  const expected = mac(secret, expiresAt, hashes);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const coveredHashes = new Set<string>();
  for (let i = 0; i < covered.length; i += HASH_BYTES) coveredHashes.add(covered.subarray(i, i + HASH_BYTES).toString('hex'));
  for (const message of messageBytes) {
    if (!coveredHashes.has(sha256(message).toString('hex'))) return 'invalid';
  }
  return expiresAt > now ? 'valid' : 'expired';
}

/** True only when the token is authentic, unexpired and covers every one of these exact messages. */
export function verifyRelayToken(secret: string, token: string, messageBytes: readonly ReadonlyUint8Array[]): boolean {
  return checkRelayToken(secret, token, messageBytes) === 'valid';
}
