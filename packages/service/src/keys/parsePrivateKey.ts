import {
  createKeyPairFromBytes,
  createKeyPairFromPrivateKeyBytes,
  createSignerFromKeyPair,
  getBase58Encoder,
  type KeyPairSigner,
} from '@solana/kit';
import { CinderError } from '../errors.ts';

/** What a client may send as `userPrivateKey`: a string in one of the formats below, or a keygen array. */
export type PrivateKeyInput = string | readonly number[];

// The accepted formats are named in the error catalogue, which words this code's message.
export { PRIVATE_KEY_FORMATS } from '../errors.ts';

function invalid(reason: string): CinderError {
  // The reason names the format problem only; never any byte or character of the key.
  return new CinderError('INVALID_PRIVATE_KEY', { reason: 'unparsable', problem: reason }, { errors: [{ field: 'userPrivateKey', message: reason }] });
}

function bytesFromArray(values: readonly unknown[]): Uint8Array {
  if (values.length !== 64) throw invalid(`a key array must have 64 numbers, got ${values.length}`);
  const bytes = new Uint8Array(64);
  for (let i = 0; i < 64; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) {
      bytes.fill(0);
      throw invalid('a key array may only hold integers from 0 to 255');
    }
    bytes[i] = v;
  }
  return bytes;
}

function bytesFromString(text: string): Uint8Array {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw invalid('it starts with "[" but is not a JSON array');
    }
    if (!Array.isArray(parsed)) throw invalid('it starts with "[" but is not a JSON array');
    return bytesFromArray(parsed);
  }
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(trimmed)) throw invalid('it is not base58 (or a JSON array of 64 numbers)');
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(trimmed));
  } catch {
    // kit's codec error carries the input string in its context: drop it.
    throw invalid('it is not base58');
  }
  if (bytes.length !== 64 && bytes.length !== 32) {
    const length = bytes.length;
    bytes.fill(0);
    throw invalid(`base58 must decode to 64 bytes (secret key) or 32 bytes (seed), got ${length} bytes`);
  }
  return bytes;
}

/**
 * Decodes every accepted key format into a signer whose private key is a non-extractable
 * WebCrypto key. The decoded bytes are wiped before this returns, so the only copy of the secret
 * left is inside the CryptoKey.
 */
export async function parsePrivateKey(input: PrivateKeyInput): Promise<KeyPairSigner> {
  return (await parsePrivateKeyWithForm(input)).signer;
}

/**
 * The same, saying whether the key came as a 32-byte seed: a wallet address pasted by mistake is
 * 32 bytes of base58 too, and the burn pipeline tells the user so (see `keyIsSeed`).
 */
export async function parsePrivateKeyWithForm(input: PrivateKeyInput): Promise<{ signer: KeyPairSigner; isSeed: boolean }> {
  const bytes = typeof input === 'string' ? bytesFromString(input) : bytesFromArray(input);
  try {
    const keyPair =
      bytes.length === 64 ? await createKeyPairFromBytes(bytes, false) : await createKeyPairFromPrivateKeyBytes(bytes, false);
    return { signer: await createSignerFromKeyPair(keyPair), isSeed: bytes.length === 32 };
  } catch {
    throw bytes.length === 64
      ? invalid('the public half of the 64-byte key does not match its private half')
      : invalid('the 32-byte seed is not a valid ed25519 key');
  } finally {
    bytes.fill(0);
  }
}
