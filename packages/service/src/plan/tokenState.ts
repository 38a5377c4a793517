/**
 * Decodes the mint and token accounts that a burn needs, for both token programs, with
 * @solana-program/token-2022's decoders: the Token-2022 layout is a superset of the classic one,
 * so one decoder reads both, extensions included.
 */
import type { Address } from '@solana/kit';
import {
  AccountState,
  getMintDecoder,
  getTokenDecoder,
  TOKEN_2022_PROGRAM_ADDRESS,
  type Extension,
} from '@solana-program/token-2022';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { RawAccount } from '../chain/types.ts';

export { TOKEN_2022_PROGRAM_ADDRESS };
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112' as Address;
export const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP' as Address;

export type TokenProgram = typeof TOKEN_PROGRAM_ADDRESS | typeof TOKEN_2022_PROGRAM_ADDRESS;

const MINT_SIZE = 82;
const ACCOUNT_SIZE = 165;

/**
 * Made once: building a decoder composes dozens of codecs (every extension's), which costs about
 * 28 times the decoding itself, and a large wallet decodes thousands of accounts and mints.
 */
const mintDecoder = getMintDecoder();
const tokenDecoder = getTokenDecoder();

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

function extensionsOf(decoded: { extensions: { __option: 'Some'; value: Extension[] } | { __option: 'None' } }): Extension[] {
  return decoded.extensions.__option === 'Some' ? decoded.extensions.value : [];
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
  let mint;
  try {
    mint = mintDecoder.decode(data);
  } catch {
    return null; // a token account, or data no decoder understands
  }
  if (!mint.isInitialized) return null;
  const extensions = extensionsOf(mint);
  const permanentDelegate = find(extensions, 'PermanentDelegate');
  return {
    address: account.address,
    tokenProgram: account.owner,
    decimals: mint.decimals,
    supply: mint.supply,
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
  let token;
  try {
    token = tokenDecoder.decode(account.data);
  } catch {
    return null;
  }
  if (token.state === AccountState.Uninitialized) return null;
  const extensions = extensionsOf(token);
  const confidential = find(extensions, 'ConfidentialTransferAccount');
  return {
    address: account.address,
    lamports: account.lamports,
    space: account.data.length,
    tokenProgram: account.owner,
    mint: token.mint,
    owner: token.owner,
    amount: token.amount,
    frozen: token.state === AccountState.Frozen,
    isNative: token.isNative.__option === 'Some',
    closeAuthority: token.closeAuthority.__option === 'Some' ? token.closeAuthority.value : null,
    withheldAmount: find(extensions, 'TransferFeeAmount')?.withheldAmount ?? 0n,
    // Token-2022 closes such an account only when all three ElGamal ciphertexts are zeroed.
    hasConfidentialBalance: confidential
      ? [confidential.pendingBalanceLow, confidential.pendingBalanceHigh, confidential.availableBalance].some((c) => c.some((b) => b !== 0))
      : false,
  };
}
