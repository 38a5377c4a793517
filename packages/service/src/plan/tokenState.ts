/**
 * Decodes the mint and token accounts that a burn needs, for both token programs: the Token-2022
 * layout is a superset of the classic one, so one reader reads both. The fixed part of each layout
 * is read in place, with the fast base58 encoder for the addresses; the Token-2022 extensions that
 * follow it with @solana-program/token-2022's own extension decoder. The result is what that
 * package's getTokenDecoder / getMintDecoder give, to the byte (test/plan/tokenState.test.ts
 * checks it on random accounts): they cost about 20 µs an account, mostly kit's BigInt base58 and
 * a copy of the bytes per number read, and a large wallet is thousands of accounts and mints.
 */
import { getArrayDecoder, type Address } from '@solana/kit';
import { AccountState, getExtensionDecoder, TOKEN_2022_PROGRAM_ADDRESS, type Extension } from '@solana-program/token-2022';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { RawAccount } from '../chain/types.ts';
import { base58Of32At } from '../keys/base58.ts';

export { TOKEN_2022_PROGRAM_ADDRESS };
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112' as Address;
export const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP' as Address;

export type TokenProgram = typeof TOKEN_PROGRAM_ADDRESS | typeof TOKEN_2022_PROGRAM_ADDRESS;

const MINT_SIZE = 82;
const ACCOUNT_SIZE = 165;

/**
 * The Token-2022 extensions (type-length-value entries up to the end of the data), after the
 * account-type byte at offset ACCOUNT_SIZE. Made once: building it composes dozens of codecs
 * (every extension's), which costs about 28 times the decoding itself.
 */
const extensionsDecoder = getArrayDecoder(getExtensionDecoder(), { size: 'remainder' });
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

/** A COption's tag (u32): only 1 is Some, as kit's option decoder reads it. */
const isSome = (view: DataView, offset: number) => view.getUint32(offset, true) === 1;

/**
 * The extensions of an account of `accountType`, or null when the data says it is not one (then
 * kit's decoder throws too). Without bytes after the fixed layout: none.
 */
function readExtensions(data: Uint8Array, fixedSize: number, accountType: number): Extension[] | null {
  if (data.length <= fixedSize) return [];
  // A mint's fixed part is padded with zeroes to an account's size, so that the type byte lies at the same offset.
  for (let i = fixedSize; i < ACCOUNT_SIZE; i++) if (data[i] !== 0) return null;
  if (data[ACCOUNT_SIZE] !== accountType) return null;
  try {
    return extensionsDecoder.decode(data, ACCOUNT_SIZE + 1);
  } catch {
    return null; // data no decoder understands
  }
}

const viewOf = (data: Uint8Array) => new DataView(data.buffer, data.byteOffset, data.byteLength);

export interface MintState {
  address: Address;
  tokenProgram: TokenProgram;
  decimals: number;
  supply: bigint;
  isNative: boolean;
  nonTransferable: boolean;
  permanentDelegate: Address | null;
  /** Token-2022 Pausable: while paused, the program refuses burns (and transfers, mints). */
  paused: boolean;
  /** Token-2022 PermissionedBurn: a plain burn is refused; burning needs the burn authority's signature. */
  permissionedBurn: boolean;
}

export interface TokenAccountState {
  address: Address;
  lamports: bigint;
  /** Data length in bytes: the rent-exempt minimum depends on it (Token-2022 extensions make it larger). */
  space: number;
  tokenProgram: TokenProgram;
  mint: Address;
  owner: Address;
  amount: bigint;
  frozen: boolean;
  isNative: boolean;
  closeAuthority: Address | null;
  /** Token-2022 transfer-fee extension: fees held back in this account until harvested. */
  withheldAmount: bigint;
  /** Token-2022 confidential-transfer extension with a non-zero pending or available balance. */
  hasConfidentialBalance: boolean;
}

export function isTokenProgram(owner: Address): owner is TokenProgram {
  return owner === TOKEN_PROGRAM_ADDRESS || owner === TOKEN_2022_PROGRAM_ADDRESS;
}

function find<K extends Extension['__kind']>(extensions: Extension[], kind: K): Extract<Extension, { __kind: K }> | undefined {
  return extensions.find((e): e is Extract<Extension, { __kind: K }> => e.__kind === kind);
}

/** null when the account is not an initialized mint of a token program. */
export function decodeMint(account: RawAccount): MintState | null {
  if (!isTokenProgram(account.owner)) return null;
  const { data } = account;
  // Classic mints are exactly 82 bytes; Token-2022 mints with extensions are longer than an account.
  if (data.length !== MINT_SIZE && (account.owner === TOKEN_PROGRAM_ADDRESS || data.length <= ACCOUNT_SIZE)) return null;
  // Layout: mintAuthority COption<Pubkey> (36), supply u64, decimals u8, isInitialized bool, freezeAuthority COption<Pubkey> (36).
  if (data[45] !== 1) return null;
  const extensions = readExtensions(data, MINT_SIZE, ACCOUNT_TYPE_MINT);
  if (!extensions) return null; // a token account, or data no decoder understands
  const permanentDelegate = find(extensions, 'PermanentDelegate');
  return {
    address: account.address,
    tokenProgram: account.owner,
    decimals: data[44]!,
    supply: viewOf(data).getBigUint64(36, true),
    isNative: account.address === NATIVE_MINT || account.address === NATIVE_MINT_2022,
    nonTransferable: find(extensions, 'NonTransferable') !== undefined,
    permanentDelegate: permanentDelegate ? permanentDelegate.delegate : null,
    paused: find(extensions, 'PausableConfig')?.paused ?? false,
    permissionedBurn: find(extensions, 'PermissionedBurn') !== undefined,
  };
}

/** null when the account is not a token account of a token program. */
export function decodeTokenAccount(account: RawAccount): TokenAccountState | null {
  if (!isTokenProgram(account.owner) || account.data.length < ACCOUNT_SIZE) return null;
  const { data } = account;
  // Layout: mint (32), owner (32), amount u64, delegate COption<Pubkey> (36), state u8,
  // isNative COption<u64> (12), delegatedAmount u64, closeAuthority COption<Pubkey> (36).
  const state = data[108]!;
  if (state === AccountState.Uninitialized || state > AccountState.Frozen) return null;
  const extensions = readExtensions(data, ACCOUNT_SIZE, ACCOUNT_TYPE_ACCOUNT);
  if (!extensions) return null;
  const view = viewOf(data);
  const confidential = find(extensions, 'ConfidentialTransferAccount');
  return {
    address: account.address,
    lamports: account.lamports,
    space: data.length,
    tokenProgram: account.owner,
    mint: base58Of32At(data, 0) as Address,
    owner: base58Of32At(data, 32) as Address,
    amount: view.getBigUint64(64, true),
    frozen: state === AccountState.Frozen,
    isNative: isSome(view, 109),
    closeAuthority: isSome(view, 129) ? (base58Of32At(data, 133) as Address) : null,
    withheldAmount: find(extensions, 'TransferFeeAmount')?.withheldAmount ?? 0n,
    // Token-2022 closes such an account only when all three ElGamal ciphertexts are zeroed.
    hasConfidentialBalance: confidential
      ? [confidential.pendingBalanceLow, confidential.pendingBalanceHigh, confidential.availableBalance].some((c) => c.some((b) => b !== 0))
      : false,
  };
}
