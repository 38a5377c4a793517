/**
 * Relay tokens: the proof that a transaction message was prepared by this service. The relay adds
 * the fee sponsor's signature only to messages a valid token covers, so the sponsor signs nothing
 * but what Cinder compiled itself (its own fee payment, repaid in the same transaction).
 *
 * A token is `v2.<expiresAt ms>.<identity of each message, 32 bytes each, base64url>.<HMAC-SHA256, base64url>`:
 * the HMAC (key SERVER_SECRET) covers the expiry and the list of identities. An identity is
 * src/plan/messageIdentity.ts's `preparedMessageIdentity`: what Cinder prepared (fee payer,
 * blockhash, its own instructions in order), so a message a wallet signed after adding Lighthouse
 * assertions, a Memo or its own compute budget is still covered; whether such additions are
 * acceptable is the relay's rules' and the sponsor policy's concern, which read the message as
 * signed. Carrying the identities lets the transactions of one prepare answer be relayed in several
 * requests with the same token. The token's lifetime is its own (RELAY_TOKEN_LIFETIME_MS): it
 * reserves nothing and blocks nobody. Node's crypto does the HMAC and the constant-time
 * comparison; only the framing is ours.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReadonlyUint8Array } from '@solana/kit';
import { preparedIdentityOfBytes } from '../plan/messageIdentity.ts';

const VERSION = 'v2';
const IDENTITY_BYTES = 32;
/** More messages than any prepare answer holds; bounds the work a forged token can cause. */
export const MAX_RELAY_TOKEN_MESSAGES = 256;
/**
 * How long a relay token is accepted: a prepared message can land while its blockhash lives
 * (150 blocks, about 60–90 s); the token outlasts that a little. It starts no turn and holds nothing.
 */
export const RELAY_TOKEN_LIFETIME_MS = 2 * 60 * 1000;
const TOKEN = /^v2\.([1-9][0-9]{0,15})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

function mac(secret: string, expiresAt: number, identities: string): Buffer {
  return createHmac('sha256', secret).update(`cinder-relay-token:${VERSION}:${expiresAt}:${identities}`, 'utf8').digest();
}

function identityOf(messageBytes: ReadonlyUint8Array): string {
  const identity = preparedIdentityOfBytes(messageBytes);
  if (identity === null) throw new RangeError('a relay token covers compiled legacy or version 0 messages only');
  return identity;
}

/** A token for these compiled messages (kit's `transaction.messageBytes`), valid until `expiresAt` (ms since the epoch). */
export function issueRelayToken(secret: string, messageBytes: readonly ReadonlyUint8Array[], expiresAt: number): string {
  if (messageBytes.length === 0 || messageBytes.length > MAX_RELAY_TOKEN_MESSAGES) {
    throw new RangeError(`a relay token covers 1 to ${MAX_RELAY_TOKEN_MESSAGES} messages`);
  }
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= 0) throw new RangeError('expiresAt must be a positive integer of milliseconds');
  const identities = Buffer.concat(messageBytes.map((bytes) => Buffer.from(identityOf(bytes), 'base64url'))).toString('base64url');
  return `${VERSION}.${expiresAt}.${identities}.${mac(secret, expiresAt, identities).toString('base64url')}`;
}

/**
 * The relay tokens of one prepare answer, issued the same way for every door: its messages in
 * groups of `perToken`, one token each, all expiring RELAY_TOKEN_LIFETIME_MS from `now`. A
 * sponsored plan's messages take one token (its id names the operation whose turn the relay
 * starts); a many-owner prepare takes one per relay request's worth, as its caller relays them.
 */
export function issuePreparedRelayTokens(
  secret: string,
  messageBytes: readonly ReadonlyUint8Array[],
  perToken = MAX_RELAY_TOKEN_MESSAGES,
  now = Date.now(),
): string[] {
  const expiresAt = now + RELAY_TOKEN_LIFETIME_MS;
  const tokens: string[] = [];
  for (let i = 0; i < messageBytes.length; i += perToken) tokens.push(issueRelayToken(secret, messageBytes.slice(i, i + perToken), expiresAt));
  return tokens;
}

/** What an authentic token says: its expiry, the identities it covers, and its own id (the MAC: one per prepare answer). */
export interface RelayTokenContent {
  expiresAt: number;
  identities: ReadonlySet<string>;
  id: string;
}

/** The content of an authentic token (issued with this secret), expired or not; null for a malformed or forged one. */
export function readRelayToken(secret: string, token: string): RelayTokenContent | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, expiry, identities, signature] = match as unknown as [string, string, string, string];
  const expiresAt = Number(expiry);
  const covered = Buffer.from(identities, 'base64url');
  if (!Number.isSafeInteger(expiresAt) || covered.length === 0 || covered.length % IDENTITY_BYTES !== 0) return null;
  if (covered.length / IDENTITY_BYTES > MAX_RELAY_TOKEN_MESSAGES || covered.toString('base64url') !== identities) return null;
  const expected = mac(secret, expiresAt, identities);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const set = new Set<string>();
  for (let i = 0; i < covered.length; i += IDENTITY_BYTES) set.add(covered.subarray(i, i + IDENTITY_BYTES).toString('base64url'));
  return { expiresAt, identities: set, id: signature };
}

export type RelayTokenCheck =
  /** Issued by this service (or one sharing its SERVER_SECRET), unexpired, and covering every message. */
  | 'valid'
  /** Issued by this service and covering every message, but past its expiry. */
  | 'expired'
  /** Malformed, forged, or not covering every message. */
  | 'invalid';

/** What a token proves about messages of these identities (preparedMessageIdentity): see RelayTokenCheck. */
export function checkRelayTokenIdentities(secret: string, token: string, identities: readonly string[], now = Date.now()): RelayTokenCheck {
  const content = readRelayToken(secret, token);
  if (!content || identities.length === 0) return 'invalid';
  if (!identities.every((identity) => content.identities.has(identity))) return 'invalid';
  return content.expiresAt > now ? 'valid' : 'expired';
}

/** What a token proves about these compiled messages: see RelayTokenCheck. `now` is for tests. */
export function checkRelayToken(secret: string, token: string, messageBytes: readonly ReadonlyUint8Array[], now = Date.now()): RelayTokenCheck {
  const identities = messageBytes.map(preparedIdentityOfBytes);
  if (identities.some((identity) => identity === null)) return 'invalid';
  return checkRelayTokenIdentities(secret, token, identities as string[], now);
}

/** True only when the token is authentic, unexpired and covers every one of these messages. */
export function verifyRelayToken(secret: string, token: string, messageBytes: readonly ReadonlyUint8Array[]): boolean {
  return checkRelayToken(secret, token, messageBytes) === 'valid';
}
