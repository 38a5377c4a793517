/**
 * Decoding of wire transactions and messages received over RPC.
 *
 * LiteSVM's native binding `unwrap()`s bincode deserialisation, so a malformed transaction that
 * reached it would abort the whole Node process. Everything is therefore decoded with @solana/kit
 * first and accepted only in canonical form (the bytes its re-encoding would give), the
 * version is one LiteSVM understands (legacy, 0, or 1), and no bytes are left over.
 *
 * Version 1 (SIMD-0385) is message-first: the 0x81 prefix, the message, then one 64-byte
 * signature per required signer with no count in front. Its compute budget sits in a config
 * field, which `V1Message.config` exposes decoded; `instructions` is the same compiled-instruction
 * view legacy and v0 messages have, so every reader walks one shape.
 */
import {
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getEncodedSize,
  getCompiledTransactionMessageEncoder,
  getShortU16Decoder,
  getShortU16Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Blockhash,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Encoder,
  type LegacyCompiledTransactionMessage,
  type Transaction,
  type V0CompiledTransactionMessage,
  type V1CompiledTransactionMessage,
} from '@solana/kit';

/** Max size of a serialized legacy or v0 transaction (one UDP packet). */
export const PACKET_DATA_SIZE = 1232;
/** Max size of a serialized v1 transaction (SIMD-0296; solana-message `v1::MAX_TRANSACTION_SIZE`). */
export const V1_MAX_TRANSACTION_SIZE = 4096;
/** Longest base58 / base64 text of a V1_MAX_TRANSACTION_SIZE transaction: ceil(4096 × log 256 / log 58), 4 × ceil(4096 / 3). */
const MAX_BASE58_SIZE = 5594;
const MAX_BASE64_SIZE = 5464;
const TX_TYPE = 'solana_transaction::versioned::VersionedTransaction';
const SIGNATURE_SIZE = 64;

/** A v1 message's config (solana-message `v1::TransactionConfig`); an absent field is None. */
export interface V1Config {
  readonly priorityFeeLamports?: bigint;
  readonly computeUnitLimit?: number;
  readonly loadedAccountsDataSizeLimit?: number;
  readonly heapSize?: number;
}

export interface CompiledInstructionView {
  readonly programAddressIndex: number;
  readonly accountIndices?: readonly number[];
  readonly data?: Uint8Array;
}

type LegacyOrV0Message = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) & CompiledTransactionMessageWithLifetime;
export type V1Message = V1CompiledTransactionMessage &
  CompiledTransactionMessageWithLifetime & { readonly instructions: readonly CompiledInstructionView[]; readonly config: V1Config };
export type DecodedMessage = LegacyOrV0Message | V1Message;

export interface WireTransaction {
  /** Canonical wire bytes (signatures + message). */
  readonly bytes: Uint8Array;
  readonly transaction: Transaction;
  readonly message: DecodedMessage;
  /** Base58 of the first signature: the transaction id. */
  readonly signature: string;
  /** Offset of the message inside `bytes`. */
  readonly messageOffset: number;
}

export class WireError extends Error {
  override name = 'WireError';
}

export type BinaryEncoding = 'base58' | 'base64';

function decodeText(encoded: string, encoding: BinaryEncoding, kind: string): Uint8Array {
  const maxEncoded = encoding === 'base58' ? MAX_BASE58_SIZE : MAX_BASE64_SIZE;
  if (encoded.length > maxEncoded) {
    throw new WireError(`${encoding} encoded ${kind} too large: ${encoded.length} bytes (max: encoded/raw ${maxEncoded}/${PACKET_DATA_SIZE})`);
  }
  let bytes: Uint8Array;
  if (encoding === 'base64') {
    if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw new WireError(`invalid base64 encoding: ${kind}`);
    bytes = new Uint8Array(getBase64Encoder().encode(encoded));
  } else {
    try {
      bytes = new Uint8Array(getBase58Encoder().encode(encoded));
    } catch {
      throw new WireError(`invalid base58 encoding: ${kind}`);
    }
  }
  if (bytes.length > V1_MAX_TRANSACTION_SIZE) throw tooLarge(kind, bytes.length, V1_MAX_TRANSACTION_SIZE);
  return bytes;
}

function tooLarge(kind: string, size: number, max: number): WireError {
  return new WireError(`decoded ${kind} too large: ${size} bytes (max: ${max} bytes)`);
}

/** The size cap of a transaction of this version: 4,096 bytes for v1, one packet for the others. */
export function maxTransactionSize(version: DecodedMessage['version']): number {
  return version === 1 ? V1_MAX_TRANSACTION_SIZE : PACKET_DATA_SIZE;
}

/** Config values come in mask-bit order: priority fee (u64), CU limit, loaded-data limit, heap size. */
function v1ConfigOf(message: V1CompiledTransactionMessage): V1Config {
  const values = [...message.configValues];
  const mask = message.configMask;
  const take = () => values.shift()?.value;
  const config: { -readonly [K in keyof V1Config]: V1Config[K] } = {};
  if ((mask & 0b11) === 0b11) config.priorityFeeLamports = BigInt(take()!);
  if (mask & 0b100) config.computeUnitLimit = Number(take());
  if (mask & 0b1000) config.loadedAccountsDataSizeLimit = Number(take());
  if (mask & 0b10000) config.heapSize = Number(take());
  return config;
}

function v1View(message: V1CompiledTransactionMessage & CompiledTransactionMessageWithLifetime): V1Message {
  const instructions = message.instructionHeaders.map((header, i) => ({
    programAddressIndex: header.programAccountIndex,
    accountIndices: message.instructionPayloads[i]!.instructionAccountIndices,
    data: new Uint8Array(message.instructionPayloads[i]!.instructionData),
  }));
  return { ...message, instructions, config: v1ConfigOf(message) };
}

/**
 * Whether `value`, decoded from `size` bytes, is in canonical form: its re-encoding would be the
 * same bytes. Given every field present (decodeMessageExactly sees to the message's), only the
 * lengths (shortvec, at most 65,535) can be written more than one way, and only longer; every other
 * field has one form of its size (addresses and blockhashes are 32 bytes, whose base58
 * round-trips exactly). So the form is canonical exactly when it is as short as the encoder would
 * write it. Measured rather than re-encoded: re-encoding turns every address from base58 back into
 * bytes (BigInt arithmetic), the costliest step of accepting a transaction.
 */
function isCanonicalSize<T>(encoder: Encoder<T>, value: T, size: number): boolean {
  return getEncodedSize(value, encoder) === size;
}

function decodeMessageExactly(messageBytes: Uint8Array, kind: string): DecodedMessage {
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let end: number;
  // kit reads a length prefix missing at the end of the bytes as 0 (a v0 message without its lookup
  // count decodes with no lookups), which the encoder would write and LiteSVM's bincode requires.
  // Decoded with a zero byte after it, such a message reads that byte as the prefix and ends past
  // its bytes; a whole message never reads it.
  const padded = new Uint8Array(messageBytes.length + 1);
  padded.set(messageBytes);
  try {
    [message, end] = getCompiledTransactionMessageDecoder().read(padded, 0);
  } catch (err) {
    throw new WireError(`failed to deserialize ${kind}: ${(err as Error).message}`);
  }
  const version: unknown = message.version;
  if (version !== 'legacy' && version !== 0 && version !== 1) {
    throw new WireError(`failed to deserialize ${kind}: unsupported transaction version ${String(version)}`);
  }
  if (end < messageBytes.length) throw new WireError(`failed to deserialize ${kind}: trailing bytes`);
  if (end > messageBytes.length || !isCanonicalSize(getCompiledTransactionMessageEncoder(), message, messageBytes.length)) throw new WireError(`failed to deserialize ${kind}: non-canonical encoding`);
  return message.version === 1 ? v1View(message) : message;
}

/** solana-message `v1::{MAX_ADDRESSES, MAX_INSTRUCTIONS, MAX_SIGNATURES}`. */
export const V1_MAX_ADDRESSES = 64;
export const V1_MAX_INSTRUCTIONS = 64;
export const V1_MAX_SIGNATURES = 12;
const SANITIZE_FAILURE = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

/** A v1 message over its limits fails sanitization, which the RPC reports as an invalid transaction. */
export class SanitizeError extends WireError {}

function sanitizeV1(message: V1Message): void {
  if (
    message.staticAccounts.length > V1_MAX_ADDRESSES ||
    message.instructions.length > V1_MAX_INSTRUCTIONS ||
    message.header.numSignerAccounts > V1_MAX_SIGNATURES
  ) {
    throw new SanitizeError(SANITIZE_FAILURE);
  }
}

/** The v1 envelope: the message, then numSignerAccounts signatures (SIMD-0385). */
function parseV1WireTransaction(bytes: Uint8Array): WireTransaction {
  let message: DecodedMessage;
  let end: number;
  try {
    let raw: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
    [raw, end] = getCompiledTransactionMessageDecoder().read(bytes, 0);
    if (raw.version !== 1) throw new Error('not a v1 message');
    message = v1View(raw);
  } catch (err) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: ${(err as Error).message}`);
  }
  sanitizeV1(message as V1Message);
  const signatureCount = message.header.numSignerAccounts;
  if (signatureCount === 0) throw new WireError(`failed to deserialize ${TX_TYPE}: transaction has no signatures`);
  if (bytes.length !== end + signatureCount * SIGNATURE_SIZE) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: ${bytes.length < end + signatureCount * SIGNATURE_SIZE ? 'missing signatures' : 'trailing bytes'}`);
  }
  // Canonical form: the message must re-encode to the bytes received (as for legacy and v0).
  decodeMessageExactly(bytes.subarray(0, end), TX_TYPE);
  let transaction: Transaction;
  try {
    transaction = getTransactionDecoder().decode(bytes);
  } catch (err) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: ${(err as Error).message}`);
  }
  const signature = getBase58Decoder().decode(bytes.subarray(end, end + SIGNATURE_SIZE));
  return { bytes, transaction, message, signature, messageOffset: 0 };
}

export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  if (bytes.length === 0) throw new WireError(`failed to deserialize ${TX_TYPE}: empty`);
  // A set high bit starts a message-first envelope; 0x81 is v1, the only one defined.
  if ((bytes[0]! & 0x80) !== 0) {
    if (bytes[0] !== 0x81) throw new WireError(`failed to deserialize ${TX_TYPE}: unsupported transaction format`);
    return parseV1WireTransaction(bytes);
  }
  let transaction: Transaction;
  try {
    transaction = getTransactionDecoder().decode(bytes);
  } catch (err) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: ${(err as Error).message}`);
  }
  if (bytes.length > PACKET_DATA_SIZE) throw tooLarge(TX_TYPE, bytes.length, PACKET_DATA_SIZE);
  const messageOffset = bytes.length - transaction.messageBytes.length;
  const message = decodeMessageExactly(new Uint8Array(transaction.messageBytes), TX_TYPE);
  if (!isCanonicalSize(getTransactionEncoder(), transaction, bytes.length)) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: non-canonical encoding`);
  }
  const [signatureCount, signaturesStart] = getShortU16Decoder().read(bytes, 0);
  if (signatureCount === 0) throw new WireError(`failed to deserialize ${TX_TYPE}: transaction has no signatures`);
  const signature = getBase58Decoder().decode(bytes.subarray(signaturesStart, signaturesStart + 64));
  return { bytes, transaction, message, signature, messageOffset };
}

export function decodeTransactionText(encoded: string, encoding: BinaryEncoding): WireTransaction {
  return parseWireTransaction(decodeText(encoded, encoding, TX_TYPE));
}

/** A bare message (getFeeForMessage). */
export function decodeMessageText(encoded: string): DecodedMessage {
  const kind = 'solana_message::versioned::VersionedMessage';
  return decodeMessageExactly(decodeText(encoded, 'base64', kind), kind);
}

/** Where a message's recent blockhash starts: after the fields before it (version, header, and the addresses of legacy and v0). */
function lifetimeTokenOffset(message: DecodedMessage): number {
  if (message.version === 1) return 1 + 3 + 4; // version, header, config mask
  const accounts = message.staticAccounts.length;
  return (message.version === 0 ? 1 : 0) + 3 + getShortU16Encoder().getSizeFromValue(accounts) + 32 * accounts;
}

/**
 * The same transaction with another recent blockhash (simulateTransaction replaceRecentBlockhash):
 * its 32 bytes written over the old ones, which keeps the bytes canonical and every other field as
 * decoded, so nothing is encoded or decoded again but the blockhash.
 */
export function withBlockhash(wire: WireTransaction, blockhash: Blockhash): WireTransaction {
  const bytes = new Uint8Array(wire.bytes);
  bytes.set(getBase58Encoder().encode(blockhash), wire.messageOffset + lifetimeTokenOffset(wire.message));
  const messageBytes = bytes.subarray(wire.messageOffset, wire.messageOffset + wire.transaction.messageBytes.length);
  return {
    ...wire,
    bytes,
    transaction: { ...wire.transaction, messageBytes: messageBytes as unknown as Transaction['messageBytes'] },
    message: { ...wire.message, lifetimeToken: blockhash },
  };
}

/** All signatures in wire order, base58 (an unsigned slot is 64 zero bytes, "1111…"). */
export function signaturesOf(wire: WireTransaction): string[] {
  const decoder = getBase58Decoder();
  if (wire.message.version === 1) {
    const count = wire.message.header.numSignerAccounts;
    const start = wire.bytes.length - count * SIGNATURE_SIZE;
    return Array.from({ length: count }, (_, i) => decoder.decode(wire.bytes.subarray(start + i * SIGNATURE_SIZE, start + (i + 1) * SIGNATURE_SIZE)));
  }
  const [count, start] = getShortU16Decoder().read(wire.bytes, 0);
  return Array.from({ length: count }, (_, i) => decoder.decode(wire.bytes.subarray(start + i * 64, start + (i + 1) * 64)));
}
