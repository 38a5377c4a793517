/**
 * The CLI's one key parser: a key read from a file, a variable or a line of a keys file, in the
 * forms the service accepts (base58 of the 64-byte secret key or of the 32-byte seed, or the 64
 * numbers of a solana-keygen file), and the signer it makes here (kit), for the owner's address
 * before a key is sent anywhere and for signing on this machine. A key is never printed or put in
 * an error: a failure names the file or the variable, never the text.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createKeyPairSignerFromBytes, createKeyPairSignerFromPrivateKeyBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
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
