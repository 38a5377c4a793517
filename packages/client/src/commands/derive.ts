/**
 * Wallets from one seed phrase, made on this machine: the phrase is never sent anywhere.
 *   cinder wallets --hd 12|24 -n N          a new phrase and N wallets at m/44'/501'/i'/0'
 *   cinder derive --mnemonic-file F --count N [--from I] [--scheme phantom|ledger-live|keygen]
 * BIP39 is @scure/bip39 and SLIP-0010 is micro-key-producer's (the client loads no server code);
 * the ed25519 public key comes from node:crypto (OpenSSL), base58 from kit. test/cli/derive.test.ts
 * checks the addresses against a reference SLIP-0010 written from the specification and the
 * published vectors. The phrase is never printed by `derive`, nor echoed in an error.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import { generateMnemonic, mnemonicToSeed, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { HDKey } from 'micro-key-producer/slip10.js';
import { EXIT_CODES, quotedUnlessKey, stringOption, write, type CommandContext } from './context.ts';

export const DERIVE_HELP = `  derive --mnemonic-file FILE --count N
                             Derive N wallets of a BIP39 phrase (FILE holds the words) on this machine; the phrase
                             is never sent anywhere nor printed. Output as cinder wallets: {"wallets":[...],"keypairs":[...]}
      [--from I]               the first account index (default 0)
      [--scheme phantom|ledger-live|keygen]
                               phantom (default): m/44'/501'/i'/0' (Phantom, Solflare, Backpack); ledger-live:
                               m/44'/501'/i'; keygen: the seed's first 32 bytes, one wallet (solana-keygen recover)
      [--format json|csv] [--out FILE]
                               csv: address,privateKey,path lines; --out: a new file of mode 0600
`;

/**
 * How a wallet app turns one phrase into many wallets:
 * - phantom: m/44'/501'/i'/0' (Phantom, Solflare, Backpack; the API's `hd=`);
 * - ledger-live: m/44'/501'/i' (Ledger Live);
 * - keygen: no path: the BIP39 seed's first 32 bytes are the ed25519 seed, one wallet (`solana-keygen recover`).
 */
type DerivationScheme = 'phantom' | 'ledger-live' | 'keygen';
const SCHEMES: readonly DerivationScheme[] = ['phantom', 'ledger-live', 'keygen'];
const HARDENED = 0x80000000;
/** Account indexes are hardened 31-bit numbers: i < 2^31. */
const MAX_ACCOUNT_INDEX = HARDENED - 1;
const base58 = getBase58Decoder();

function accountPath(scheme: Exclude<DerivationScheme, 'keygen'>, i: number): string {
  return scheme === 'phantom' ? `m/44'/501'/${i}'/0'` : `m/44'/501'/${i}'`;
}
/** PKCS#8 DER of an ed25519 private key, up to the 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** Wallets between two updates of the progress bar. */
const PROGRESS_EVERY = 1000;

interface DerivedKeypair {
  address: string;
  privateKey: string;
  path?: string;
}

/** The keypair whose ed25519 seed is `seed32` (wiped here), its public key computed by OpenSSL. */
function keypairOfSeed(seed32: Uint8Array, path: string | undefined): DerivedKeypair {
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, seed32]);
  const publicKey = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }))
    .export({ format: 'der', type: 'spki' })
    .subarray(-32);
  const secret = new Uint8Array(64);
  secret.set(seed32);
  secret.set(publicKey, 32);
  const keypair = { address: base58.decode(publicKey), privateKey: base58.decode(secret), ...(path === undefined ? {} : { path }) };
  der.fill(0);
  secret.fill(0);
  seed32.fill(0);
  return keypair;
}

/** Accounts from … from + count − 1 of `scheme` for a phrase, reporting progress every PROGRESS_EVERY. */
async function deriveKeypairs(
  mnemonic: string,
  scheme: DerivationScheme,
  from: number,
  count: number,
  onProgress: (done: number) => void,
): Promise<DerivedKeypair[]> {
  const seed = await mnemonicToSeed(mnemonic);
  const keypairs: DerivedKeypair[] = [];
  try {
    if (scheme === 'keygen') return [keypairOfSeed(seed.subarray(0, 32), undefined)];
    // m/44'/501' once; each account is one or two hardened steps below it.
    const parent = HDKey.fromMasterSeed(seed).derive("m/44'/501'");
    try {
      for (let i = from; i < from + count; i++) {
        const account = parent.deriveChild(i + HARDENED);
        const node = scheme === 'phantom' ? account.deriveChild(HARDENED) : account;
        keypairs.push(keypairOfSeed(node.privateKey, accountPath(scheme, i)));
        account.privateKey.fill(0);
        account.chainCode.fill(0);
        node.chainCode.fill(0);
        if (keypairs.length % PROGRESS_EVERY === 0) {
          onProgress(keypairs.length);
          // Let the terminal's progress bar draw.
          await new Promise((done) => setImmediate(done));
        }
      }
    } finally {
      parent.privateKey.fill(0);
      parent.chainCode.fill(0);
    }
    return keypairs;
  } finally {
    seed.fill(0);
  }
}

function countOption(ctx: CommandContext, name: string, fallback?: string, min = 1): number {
  const text = stringOption(ctx.values, name.replace(/^-+/, '')) ?? fallback;
  if (text === undefined) throw ctx.usage(`${name} is required`);
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) < min || Number(text) > MAX_ACCOUNT_INDEX + 1) {
    throw ctx.usage(`${name} must be a whole number from ${min} to ${MAX_ACCOUNT_INDEX + 1}`);
  }
  return Number(text);
}

async function emit(ctx: CommandContext, keypairs: DerivedKeypair[], options: { mnemonic?: string; format: 'json' | 'csv'; out?: string }): Promise<void> {
  const text =
    options.format === 'csv'
      ? `address,privateKey,path\n${keypairs.map((k) => `${k.address},${k.privateKey},${k.path ?? ''}\n`).join('')}`
      : `${JSON.stringify({ ...(options.mnemonic === undefined ? {} : { mnemonic: options.mnemonic }), wallets: keypairs.map((k) => k.address), keypairs }, null, 2)}\n`;
  if (options.out === undefined) return write(ctx.io.stdout, text);
  const path = resolve(ctx.io.cwd, options.out);
  try {
    await writeFile(path, text, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw ctx.fail(`${path} already exists; cinder never overwrites a key file`);
    throw ctx.fail(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  await write(ctx.io.stderr, `Wrote ${keypairs.length} wallet${keypairs.length === 1 ? '' : 's'} to ${path}\n`);
}

function formatOption(ctx: CommandContext): 'json' | 'csv' {
  const format = stringOption(ctx.values, 'format') ?? 'json';
  if (format !== 'json' && format !== 'csv') throw ctx.usage('--format must be json or csv here');
  return format;
}

/** `cinder derive`: the wallets of a phrase read from a file. */
export async function deriveCommand(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) throw ctx.usage('derive takes no positional arguments (the phrase is read with --mnemonic-file)');
  const file = stringOption(ctx.values, 'mnemonic-file');
  if (file === undefined) throw ctx.usage('--mnemonic-file FILE is required (a file holding the words of the phrase; never an argument)');
  const schemeText = stringOption(ctx.values, 'scheme') ?? 'phantom';
  if (!SCHEMES.includes(schemeText as DerivationScheme)) throw ctx.usage(`--scheme must be one of ${SCHEMES.join(', ')}`);
  const scheme = schemeText as DerivationScheme;
  const format = formatOption(ctx);
  let count: number;
  let from: number;
  if (scheme === 'keygen') {
    if (ctx.values.from !== undefined) throw ctx.usage('--scheme keygen has no path, hence no --from: the phrase gives one wallet');
    count = countOption(ctx, '--count', '1');
    if (count !== 1) throw ctx.usage('--scheme keygen gives one wallet (no path): --count 1');
    from = 0;
  } else {
    count = countOption(ctx, '--count');
    from = countOption(ctx, '--from', '0', 0);
    if (from + count - 1 > MAX_ACCOUNT_INDEX) throw ctx.usage(`--from + --count goes past the last account index, ${MAX_ACCOUNT_INDEX}`);
  }

  const path = resolve(ctx.io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
    if (((await stat(path)).mode & 0o077) !== 0) await write(ctx.io.stderr, `warning: ${quotedUnlessKey(file)} can be read by other users; chmod 600 it\n`);
  } catch (error) {
    throw ctx.fail(`cannot read the phrase file ${quotedUnlessKey(file)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  // Words separated by any white space; BIP39 phrases are lowercase (NFKD is applied by the seed).
  const words = text.trim().toLowerCase().split(/\s+/u).filter((w) => w !== '');
  const mnemonic = words.join(' ');
  if (!validateMnemonic(mnemonic, wordlist)) {
    // The words themselves are never repeated: the file is a secret.
    throw ctx.fail(
      `the phrase file ${quotedUnlessKey(file)} does not hold a valid English BIP39 phrase (${words.length} words found; ` +
        'a phrase has 12, 15, 18, 21 or 24 words of the English list and a checksum that matches)',
    );
  }
  const progress = await ctx.progress(count, 'wallets');
  try {
    const keypairs = await deriveKeypairs(mnemonic, scheme, from, count, (done) => progress.update(done));
    progress.update(keypairs.length);
    progress.stop();
    await emit(ctx, keypairs, { format, ...optionalOut(ctx) });
  } finally {
    progress.stop();
  }
  return EXIT_CODES.OK;
}

function optionalOut(ctx: CommandContext): { out?: string } {
  const out = stringOption(ctx.values, 'out');
  return out === undefined ? {} : { out };
}

/** `cinder wallets --hd 12|24 -n N`: a new phrase, made here, and its first N wallets (phantom scheme). */
export async function hdWalletsCommand(ctx: CommandContext, n: number): Promise<number> {
  const wordsText = stringOption(ctx.values, 'hd');
  if (wordsText !== '12' && wordsText !== '24') throw ctx.usage('--hd must be 12 or 24 (words)');
  for (const option of ['mnemonic', 'prefix', 'suffix', 'ignore-case', 'batch-size'] as const) {
    if (ctx.values[option] !== undefined) throw ctx.usage(`--hd derives every wallet from one new phrase on this machine: it does not go with --${option}`);
  }
  // The phrase must stay with the wallets it restores: JSON only.
  if ((stringOption(ctx.values, 'format') ?? 'json') !== 'json') throw ctx.usage('--hd writes JSON ({"mnemonic":…,"wallets":[…],"keypairs":[…]}), so that the phrase stays with its wallets');
  if (n - 1 > MAX_ACCOUNT_INDEX) throw ctx.usage(`-n must be at most ${MAX_ACCOUNT_INDEX + 1} with --hd`);
  const mnemonic = generateMnemonic(wordlist, wordsText === '12' ? 128 : 256);
  const progress = await ctx.progress(n, 'wallets');
  try {
    const keypairs = await deriveKeypairs(mnemonic, 'phantom', 0, n, (done) => progress.update(done));
    progress.update(keypairs.length);
    progress.stop();
    await emit(ctx, keypairs, { mnemonic, format: 'json', ...optionalOut(ctx) });
  } finally {
    progress.stop();
  }
  return EXIT_CODES.OK;
}
