/**
 * Decoding of wire transactions and messages received over RPC.
 *
 * LiteSVM's native binding `unwrap()`s bincode deserialisation, so a malformed transaction that
 * reached it would abort the whole Node process. Everything is therefore decoded with @solana/kit
 * first and accepted only if re-encoding reproduces the exact input bytes (canonical form), the
 * version is one LiteSVM understands (legacy or 0), and no bytes are left over.
 */
import {
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getShortU16Decoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Blockhash,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Transaction,
} from '@solana/kit';

/** Max size of a serialized transaction (one UDP packet), and of its base58/base64 text. */
export const PACKET_DATA_SIZE = 1232;
const MAX_BASE58_SIZE = 1683;
const MAX_BASE64_SIZE = 1644;
const TX_TYPE = 'solana_transaction::versioned::VersionedTransaction';

export type DecodedMessage = CompiledTransactionMessage & CompiledTransactionMessageWithLifetime & { version: 'legacy' | 0 };

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
  if (bytes.length > PACKET_DATA_SIZE) {
    throw new WireError(`decoded ${kind} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
  }
  return bytes;
}

function decodeMessageExactly(messageBytes: Uint8Array, kind: string): DecodedMessage {
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let end: number;
  try {
    [message, end] = getCompiledTransactionMessageDecoder().read(messageBytes, 0);
  } catch (err) {
    throw new WireError(`failed to deserialize ${kind}: ${(err as Error).message}`);
  }
  if (message.version !== 'legacy' && message.version !== 0) {
    throw new WireError(`failed to deserialize ${kind}: unsupported transaction version ${String(message.version)}`);
  }
  if (end !== messageBytes.length) throw new WireError(`failed to deserialize ${kind}: trailing bytes`);
  const reencoded = getCompiledTransactionMessageEncoder().encode(message);
  if (!sameBytes(reencoded, messageBytes)) throw new WireError(`failed to deserialize ${kind}: non-canonical encoding`);
  return message as DecodedMessage;
}

export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  if (bytes.length === 0 || (bytes[0]! & 0x80) !== 0) {
    // A set high bit means a message-first (v1) envelope, which LiteSVM cannot deserialize.
    throw new WireError(`failed to deserialize ${TX_TYPE}: unsupported transaction format`);
  }
  let transaction: Transaction;
  try {
    transaction = getTransactionDecoder().decode(bytes);
  } catch (err) {
    throw new WireError(`failed to deserialize ${TX_TYPE}: ${(err as Error).message}`);
  }
  const messageOffset = bytes.length - transaction.messageBytes.length;
  const message = decodeMessageExactly(new Uint8Array(transaction.messageBytes), TX_TYPE);
  if (!sameBytes(getTransactionEncoder().encode(transaction), bytes)) {
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

/** The same transaction with another recent blockhash (simulateTransaction replaceRecentBlockhash). */
export function withBlockhash(wire: WireTransaction, blockhash: Blockhash): WireTransaction {
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...wire.message, lifetimeToken: blockhash });
  const bytes = new Uint8Array(wire.messageOffset + messageBytes.length);
  bytes.set(wire.bytes.subarray(0, wire.messageOffset));
  bytes.set(messageBytes, wire.messageOffset);
  return parseWireTransaction(bytes);
}

function sameBytes(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** All signatures in wire order, base58 (an unsigned slot is 64 zero bytes, "1111…"). */
export function signaturesOf(wire: WireTransaction): string[] {
  const [count, start] = getShortU16Decoder().read(wire.bytes, 0);
  const decoder = getBase58Decoder();
  return Array.from({ length: count }, (_, i) => decoder.decode(wire.bytes.subarray(start + i * 64, start + (i + 1) * 64)));
}
