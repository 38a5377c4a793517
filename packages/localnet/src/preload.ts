/**
 * Accounts and programs loaded at start, as solana-test-validator loads them with `--account`,
 * `--account-dir`, `--bpf-program` and `--upgradeable-program`. Everything is checked before the
 * chain serves anything: a bad file, address or program stops the start with an error naming it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { address, getAddressDecoder, getAddressEncoder, getBase58Encoder, getBase64Encoder, isAddress, type Address } from '@solana/kit';
import type { Chain } from './chain.ts';

const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111' as Address;
/** UpgradeableLoaderState::ProgramData: tag u32, slot u64, Option<Pubkey> (tag + 32 bytes). */
const PROGRAM_DATA_HEADER = 45;
const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];

/** An account as `solana account --output json` writes it (`account` of that JSON). */
export interface AccountJson {
  lamports: number | string | bigint;
  /** [content, encoding]: base64 (what the CLI writes) or base58. */
  data: [string, string] | string;
  owner: string;
  executable?: boolean;
  rentEpoch?: number | string | bigint;
  space?: number;
}

export interface PreloadedAccount {
  /** The account's address; '-' or absent: the `pubkey` of the file. */
  address?: string;
  /** A JSON file as `solana account --output json` writes it. */
  file?: string;
  /** The account itself, instead of a file. */
  account?: AccountJson;
}

export interface PreloadedProgram {
  /** The program id: an address, or a keypair file (a JSON array of 64 bytes) whose public key it is. */
  address: string;
  /** The program's .so file… */
  file?: string;
  /** …or its ELF bytes. */
  bytes?: Uint8Array;
}

export interface PreloadedUpgradeableProgram extends PreloadedProgram {
  /** The upgrade authority (an address or keypair file), or null / 'none' for none. */
  authority: string | null;
}

export interface PreloadOptions {
  /** `--account <ADDRESS> <FILE.json>` */
  accounts?: readonly PreloadedAccount[];
  /** `--account-dir <DIR>`: every *.json in it, each at the `pubkey` it names. */
  accountDirs?: readonly string[];
  /** `--bpf-program <ADDRESS> <FILE.so>`: deployed with the upgradeable loader, upgrades disabled. */
  bpfPrograms?: readonly PreloadedProgram[];
  /** `--upgradeable-program <ADDRESS> <FILE.so> <AUTHORITY|none>` */
  upgradeablePrograms?: readonly PreloadedUpgradeableProgram[];
}

export class PreloadError extends Error {
  override name = 'PreloadError';
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new PreloadError(`${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** An address, or the public key of a keypair file (as solana-test-validator's ADDRESS_OR_KEYPAIR). */
export function resolveAddress(value: string, what: string): Address {
  if (isAddress(value)) return address(value);
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(value, 'utf8'));
  } catch {
    throw new PreloadError(`${what} "${value}" is neither an address nor a readable keypair file`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new PreloadError(`${what} "${value}": a keypair file holds a JSON array of 64 bytes`);
  }
  return getAddressDecoder().decode(Uint8Array.from(bytes.slice(32) as number[]));
}

function lamportsOf(value: unknown, where: string): bigint {
  if ((typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) || (typeof value === 'string' && /^[0-9]+$/.test(value)) || typeof value === 'bigint') {
    const lamports = BigInt(value);
    if (lamports <= 0xffff_ffff_ffff_ffffn) return lamports;
  }
  throw new PreloadError(`${where}: "lamports" must be an unsigned 64-bit integer`);
}

function dataOf(value: unknown, where: string): Uint8Array {
  const [content, encoding] = Array.isArray(value) ? value : [value, 'base58'];
  if (typeof content !== 'string') throw new PreloadError(`${where}: "data" must be [content, encoding]`);
  try {
    if (encoding === 'base64') {
      if (content.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(content)) throw new Error('not base64');
      return new Uint8Array(getBase64Encoder().encode(content));
    }
    if (encoding === 'base58') return new Uint8Array(getBase58Encoder().encode(content));
  } catch {
    throw new PreloadError(`${where}: "data" is not valid ${String(encoding)}`);
  }
  throw new PreloadError(`${where}: unsupported data encoding ${JSON.stringify(encoding)} (base64 or base58)`);
}

function accountFrom(json: unknown, where: string): { lamports: bigint; data: Uint8Array; owner: Address; executable: boolean } {
  if (typeof json !== 'object' || json === null) throw new PreloadError(`${where}: "account" must be an object`);
  const account = json as Record<string, unknown>;
  if (typeof account.owner !== 'string' || !isAddress(account.owner)) throw new PreloadError(`${where}: "owner" is not an address`);
  if (account.executable !== undefined && typeof account.executable !== 'boolean') throw new PreloadError(`${where}: "executable" must be a boolean`);
  const data = dataOf(account.data, where);
  if (typeof account.space === 'number' && account.space !== data.length) {
    throw new PreloadError(`${where}: "space" is ${account.space} but the data has ${data.length} bytes`);
  }
  return { lamports: lamportsOf(account.lamports, where), data, owner: address(account.owner), executable: account.executable === true };
}

function loadAccountFile(chain: Chain, file: string, given: string | undefined): Address {
  let json: unknown;
  try {
    json = JSON.parse(readText(file, 'account file'));
  } catch (err) {
    if (err instanceof PreloadError) throw err;
    throw new PreloadError(`account file ${file}: not JSON (${(err as Error).message})`);
  }
  const top = (json ?? {}) as { pubkey?: unknown; account?: unknown };
  const where = `account file ${file}`;
  let at: Address;
  if (given !== undefined && given !== '-') {
    if (!isAddress(given)) throw new PreloadError(`--account address "${given}" (for ${file}) is not an address`);
    at = address(given);
  } else if (typeof top.pubkey === 'string' && isAddress(top.pubkey)) {
    at = address(top.pubkey);
  } else {
    throw new PreloadError(`${where}: "pubkey" is missing or not an address`);
  }
  chain.setAccount({ address: at, ...accountFrom(top.account, where) });
  return at;
}

function programBytes(program: PreloadedProgram, flag: string): { bytes: Uint8Array; name: string } {
  const name = program.file ?? `the bytes given for ${program.address}`;
  let bytes = program.bytes;
  if (!bytes) {
    if (!program.file) throw new PreloadError(`${flag} ${program.address}: give a .so file or the program's bytes`);
    try {
      bytes = new Uint8Array(readFileSync(program.file));
    } catch (err) {
      throw new PreloadError(`${flag} ${program.address}: cannot read ${program.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (bytes.length < 4 || ELF_MAGIC.some((b, i) => bytes[i] !== b)) throw new PreloadError(`${flag} ${program.address}: ${name} is not an ELF file (an sBPF program)`);
  return { bytes, name };
}

function deploy(chain: Chain, program: PreloadedProgram, authority: Address | null, flag: string): Address {
  const id = resolveAddress(program.address, `${flag} address`);
  const { bytes, name } = programBytes(program, flag);
  try {
    chain.svm.addProgram(id, bytes);
  } catch (err) {
    throw new PreloadError(`${flag} ${id}: ${name} is not a program the chain can load (${(err as Error).message})`);
  }
  // LiteSVM deploys at its own clock's slot with no authority; the validator's genesis at slot 0.
  const programAccount = chain.svm.getAccount(id);
  if (!programAccount.exists) throw new PreloadError(`${flag} ${id}: the chain did not keep the program`);
  const programData = getAddressDecoder().decode(programAccount.data.subarray(4, 36));
  const stored = chain.svm.getAccount(programData);
  if (!stored.exists || stored.programAddress !== UPGRADEABLE_LOADER || stored.data.length < PROGRAM_DATA_HEADER) throw new PreloadError(`${flag} ${id}: unexpected program layout`);
  const data = new Uint8Array(stored.data);
  new DataView(data.buffer).setBigUint64(4, 0n, true);
  data[12] = authority ? 1 : 0;
  data.set(authority ? getAddressEncoder().encode(authority) : new Uint8Array(32), 13);
  chain.svm.setAccount({ ...stored, data });
  chain.registerCreated(id, programAccount.lamports);
  chain.registerCreated(programData, stored.lamports);
  return id;
}

/** Loads everything `options` names into the chain; throws PreloadError naming the first bad item. */
export function preload(chain: Chain, options: PreloadOptions): void {
  for (const entry of options.accounts ?? []) {
    if (entry.account) {
      const where = `account ${entry.address ?? '(no address)'}`;
      if (!entry.address || !isAddress(entry.address)) throw new PreloadError(`${where}: an account given directly needs its address`);
      chain.setAccount({ address: address(entry.address), ...accountFrom(entry.account, where) });
    } else if (entry.file) {
      loadAccountFile(chain, entry.file, entry.address);
    } else {
      throw new PreloadError(`account ${entry.address ?? ''}: give a file or the account`);
    }
  }
  for (const dir of options.accountDirs ?? []) {
    let names: string[];
    try {
      if (!statSync(dir).isDirectory()) throw new PreloadError(`--account-dir ${dir} is not a directory`);
      names = readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
    } catch (err) {
      if (err instanceof PreloadError) throw err;
      throw new PreloadError(`--account-dir ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    for (const name of names) loadAccountFile(chain, join(dir, name), undefined);
  }
  for (const program of options.bpfPrograms ?? []) deploy(chain, program, null, '--bpf-program');
  for (const program of options.upgradeablePrograms ?? []) {
    const authority = program.authority === null || program.authority === 'none' ? null : resolveAddress(program.authority, '--upgradeable-program authority');
    deploy(chain, program, authority, '--upgradeable-program');
  }
}
