/**
 * The CLI's one key parser: a key read from a file, a variable or a line of a keys file, in the
 * forms the service accepts (base58 of the 64-byte secret key or of the 32-byte seed, or the 64
 * numbers of a solana-keygen file), and the signer it makes here (kit), for the owner's address
 * before a key is sent anywhere and for signing on this machine. A key is never printed or put in
 * an error: a failure names the file or the variable, never the text.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createKeyPairSignerFromBytes, createKeyPairSignerFromPrivateKeyBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
import type { CinderClient } from '../index.ts';
import { quotedUnlessKey, stringOption, write, type CommandContext } from './context.ts';

/** A key as the SDK takes it. */
export type KeyText = string | number[];

/** A key's text as the SDK sends it: a JSON array of numbers as numbers, anything else as the trimmed text; null for an array that is not one of numbers. */
export function parseKeyText(text: string): KeyText | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) return trimmed;
  try {
    const bytes = JSON.parse(trimmed) as unknown;
    return Array.isArray(bytes) && bytes.every((b) => typeof b === 'number') ? (bytes as number[]) : null;
  } catch {
    return null;
  }
}

/**
 * The signer of a key, made here; null when the text is not such a key (a 64-byte key whose halves
 * do not match included): the caller says so without the key.
 */
export async function signerOfKey(key: KeyText): Promise<KeyPairSigner | null> {
  let bytes: Uint8Array;
  try {
    if (typeof key !== 'string' && !key.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return null;
    bytes = typeof key === 'string' ? Uint8Array.from(getBase58Encoder().encode(key.trim())) : Uint8Array.from(key);
  } catch {
    return null;
  }
  try {
    // kit checks that the public half of a 64-byte key belongs to its seed.
    if (bytes.length === 64) return await createKeyPairSignerFromBytes(bytes);
    if (bytes.length === 32) return await createKeyPairSignerFromPrivateKeyBytes(bytes);
    return null;
  } catch {
    return null;
  } finally {
    bytes.fill(0);
  }
}

/** The wallet address of a key, or null (see signerOfKey). */
export async function addressOfKey(key: KeyText): Promise<string | null> {
  return (await signerOfKey(key))?.address ?? null;
}

/**
 * The key of `--<file> PATH` or `--<env> VAR` (exactly one of them), parsed. Warns when the file
 * can be read by other users.
 */
export async function readKey(ctx: CommandContext, fileOption = 'key-file', envOption: string | null = 'key-env'): Promise<KeyText> {
  const file = stringOption(ctx.values, fileOption);
  const envName = envOption === null ? undefined : stringOption(ctx.values, envOption);
  if (envOption === null && file === undefined) throw ctx.usage(`--${fileOption} PATH is required`);
  if ((file === undefined) === (envName === undefined)) throw ctx.usage(`give the key with exactly one of --${fileOption} PATH or --${envOption} VAR`);
  let text: string;
  if (file !== undefined) {
    const path = resolve(ctx.io.cwd, file);
    try {
      text = await readFile(path, 'utf8');
      if (((await stat(path)).mode & 0o077) !== 0) {
        await write(ctx.io.stderr, `warning: ${quotedUnlessKey(file)} can be read by other users; chmod 600 it\n`);
      }
    } catch (error) {
      throw ctx.fail(`cannot read the key file ${quotedUnlessKey(file)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  } else {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envName!)) throw ctx.usage(`--${envOption} takes the name of an environment variable, e.g. --${envOption} SOLANA_KEY`);
    const value = ctx.io.env[envName!];
    if (value === undefined || value.trim() === '') throw ctx.usage(`the environment variable ${quotedUnlessKey(envName!)} is not set`);
    text = value;
  }
  const key = parseKeyText(text);
  if (key === null) {
    throw ctx.fail(`the key ${file !== undefined ? `file ${quotedUnlessKey(file)}` : `in ${envName}`} looks like a JSON array but is not an array of numbers`);
  }
  return key;
}

// ---------------------------------------------------------------------------------------------
// Keys files: one key per line

/** A line of a keys file: its number, its key (null when it holds none) and, then, why (never its text). */
export interface KeyFileEntry {
  line: number;
  key: KeyText | null;
  why: string;
}

/**
 * The keys of a keys file, in order: each line a base58 key, a JSON array of 64 numbers, or the path
 * of a solana-keygen file (relative to the keys file). Blank lines and lines starting with # are
 * skipped. A line that is none of these, or that holds a wallet address (addressLines), has no key
 * and says why; it is reported by its number, never by its text.
 */
export async function readKeysFile(ctx: CommandContext, file: string): Promise<KeyFileEntry[]> {
  const path = resolve(ctx.io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw ctx.fail(`cannot read the keys file ${quotedUnlessKey(file)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const entries: KeyFileEntry[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    entries.push({ line: index + 1, ...(await keyOfLine(line, dirname(path))) });
  }
  const addresses = await addressLines(ctx.client(), entries);
  return entries.map((entry) => (addresses.has(entry) ? { line: entry.line, key: null, why: ADDRESS_LINE } : entry));
}

async function keyOfLine(line: string, base: string): Promise<{ key: KeyText | null; why: string }> {
  let size = 0;
  try {
    size = getBase58Encoder().encode(line).length;
  } catch {
    // not base58: a path, or nothing usable
  }
  if (line.startsWith('[') || size === 32 || size === 64) return { key: parseKeyText(line), why: 'not a key' };
  try {
    return { key: parseKeyText(await readFile(resolve(base, line), 'utf8')), why: 'its key file does not hold a key' };
  } catch (error) {
    return { key: null, why: `not a key, nor a key file that can be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}

const ADDRESS_LINE =
  'holds a wallet address, not a private key (read as a 32-byte seed it opens an empty wallet, while the address holds accounts or SOL): put the 64-byte secret key there';

/** Owners per preview request of the check: well under any server's MAX_OWNERS_PER_REQUEST. */
const OWNERS_PER_CHECK = 100;

/**
 * The entries whose key is really a wallet address. A 32-byte base58 text is both an address and a
 * seed, and nothing in its bytes tells which; the service tells them apart by the chain (a seed that
 * opens a wallet with nothing in it is, in practice, an address pasted by mistake), and so does
 * this: such a line is an address when the wallet its seed opens holds no SOL and no account while
 * the address itself holds accounts or SOL. One preview of many owners per OWNERS_PER_CHECK
 * addresses, no key sent: only lines of 32 bytes are checked (a 64-byte secret key is never an
 * address), so a file of exported secret keys costs no request.
 */
export async function addressLines(client: CinderClient, entries: readonly KeyFileEntry[]): Promise<Set<KeyFileEntry>> {
  const candidates: { entry: KeyFileEntry; seedWallet: string; address: string }[] = [];
  for (const entry of entries) {
    if (typeof entry.key !== 'string') continue;
    let size: number;
    try {
      size = getBase58Encoder().encode(entry.key).length;
    } catch {
      continue;
    }
    if (size !== 32) continue;
    const seedWallet = await addressOfKey(entry.key);
    if (seedWallet !== null) candidates.push({ entry, seedWallet, address: entry.key });
  }
  const found = new Set<KeyFileEntry>();
  if (candidates.length === 0) return found;
  const owners = [...new Set(candidates.flatMap((c) => [c.seedWallet, c.address]))];
  const holds = new Map<string, boolean>();
  for (let i = 0; i < owners.length; i += OWNERS_PER_CHECK) {
    const preview = await client.previewReclaimMany({ owners: owners.slice(i, i + OWNERS_PER_CHECK) });
    for (const o of preview.owners) holds.set(o.owner, BigInt(o.ownerLamports) > 0n || o.accounts.length > 0);
  }
  for (const c of candidates) if (holds.get(c.seedWallet) === false && holds.get(c.address) === true) found.add(c.entry);
  return found;
}
