/**
 * The service's fee sponsor (SPONSOR_KEYPAIR): it pays the fees of wallets that hold no SOL and
 * is repaid in the same transaction. Its key lives only inside a non-extractable CryptoKey.
 */
import { readFile } from 'node:fs/promises';
import type { KeyPairSigner } from '@solana/kit';
import { CinderError } from '../errors.ts';
import { parsePrivateKey } from './parsePrivateKey.ts';

export interface Sponsor {
  signer: KeyPairSigner;
}

/** A sponsor key file that cannot be used; the message names the path and the problem, never the content. */
export class SponsorKeyError extends Error {
  override name = 'SponsorKeyError';
}

const SOLANA_KEYGEN_FORMAT = 'a solana-keygen keypair file (a JSON array of 64 numbers, e.g. from `solana-keygen new -o sponsor.json`)';

/**
 * The 64 numbers of a solana-keygen file, read straight from its bytes. Written by hand, not with
 * JSON.parse, because JSON.parse needs the file as a JavaScript string, which can never be wiped;
 * every byte buffer here is zeroed. Returns null unless the file is a flat JSON array of 64
 * integers from 0 to 255 (with any whitespace, and a UTF-8 byte order mark, as editors write).
 */
function keygenNumbers(file: Uint8Array): Uint8Array | null {
  const values = new Uint8Array(64);
  let i = file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf ? 3 : 0;
  const skipSpace = () => {
    while (i < file.length && (file[i] === 0x20 || file[i] === 0x0a || file[i] === 0x0d || file[i] === 0x09)) i++;
  };
  try {
    skipSpace();
    if (file[i++] !== 0x5b /* [ */) return null;
    for (let count = 0; count < 64; count++) {
      skipSpace();
      let value = 0;
      let digits = 0;
      while (i < file.length && file[i]! >= 0x30 && file[i]! <= 0x39 && digits < 4) {
        value = value * 10 + (file[i++]! - 0x30);
        digits++;
      }
      if (digits === 0 || value > 255) return null;
      values[count] = value;
      skipSpace();
      if (file[i++] !== (count === 63 ? 0x5d /* ] */ : 0x2c) /* , */) return null;
    }
    skipSpace();
    return i === file.length ? values.slice() : null;
  } finally {
    values.fill(0);
  }
}

/**
 * Reads the sponsor's solana-keygen file and turns it into a signer whose private key is a
 * non-extractable WebCrypto key (the same conversion as a user's key, parsePrivateKey). Every
 * buffer that held the key is zeroed before this returns. A missing, unreadable or malformed file
 * throws SponsorKeyError naming the path and the problem; its content is never printed.
 */
export async function loadSponsor(path: string): Promise<Sponsor> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : `cannot be read (${code ?? 'error'})`;
    throw new SponsorKeyError(`SPONSOR_KEYPAIR ${path}: ${reason}. It must be ${SOLANA_KEYGEN_FORMAT}.`);
  }
  let bytes: Uint8Array | null = null;
  let numbers: number[] = [];
  try {
    bytes = keygenNumbers(file);
    if (!bytes) throw new SponsorKeyError(`SPONSOR_KEYPAIR ${path}: not ${SOLANA_KEYGEN_FORMAT}.`);
    // parsePrivateKey copies the numbers into its own buffer, wipes it, and checks that the
    // public half matches the seed.
    numbers = Array.from(bytes);
    const signer = await parsePrivateKey(numbers).catch((error: unknown) => {
      const reason = error instanceof CinderError ? (error.errors?.[0]?.message ?? 'not a valid ed25519 keypair') : 'not a valid ed25519 keypair';
      throw new SponsorKeyError(`SPONSOR_KEYPAIR ${path}: ${reason}. It must be ${SOLANA_KEYGEN_FORMAT}.`);
    });
    return { signer };
  } finally {
    file.fill(0);
    bytes?.fill(0);
    numbers.fill(0);
  }
}
