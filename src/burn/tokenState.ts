/**
 * Decodes the mint and token accounts that a burn needs, for both token programs. The base
 * layouts come from @solana-program/token (identical in Token-2022); the few Token-2022
 * extensions that decide whether an account can be closed are read from the TLV area by hand,
 * because the Token-2022 client package does not yet support the @solana/kit major used here.
 */
import { address, getAddressDecoder, type Address } from '@solana/kit';
import { AccountState, getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { RawAccount } from '../chain/chainAdapter.ts';

export const TOKEN_2022_PROGRAM_ADDRESS = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const NATIVE_MINT = address('So11111111111111111111111111111111111111112');
export const NATIVE_MINT_2022 = address('9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP');

export type TokenProgram = typeof TOKEN_PROGRAM_ADDRESS | typeof TOKEN_2022_PROGRAM_ADDRESS;

const MINT_SIZE = 82;
const ACCOUNT_SIZE = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

// Token-2022 ExtensionType values (spl-token-2022 `extension/mod.rs`).
const EXT_TRANSFER_FEE_AMOUNT = 2;
const EXT_CONFIDENTIAL_TRANSFER_ACCOUNT = 5;
const EXT_NON_TRANSFERABLE = 9;
const EXT_PERMANENT_DELEGATE = 12;

export interface MintState {
  address: Address;
  tokenProgram: TokenProgram;
  decimals: number;
  supply: bigint;
  isNative: boolean;
  nonTransferable: boolean;
  permanentDelegate: Address | null;
}

export interface TokenAccountState {
  address: Address;
  lamports: bigint;
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

interface Extension {
  type: number;
  data: Uint8Array;
}

/** Token-2022 TLV entries after the 165-byte base + account-type byte; empty for classic accounts. */
function readExtensions(data: Uint8Array, expectedAccountType: number): Extension[] | null {
  if (data.length <= ACCOUNT_SIZE) return [];
  if (data[ACCOUNT_SIZE] !== expectedAccountType) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const extensions: Extension[] = [];
  let offset = ACCOUNT_SIZE + 1;
  while (offset + 4 <= data.length) {
    const type = view.getUint16(offset, true);
    const length = view.getUint16(offset + 2, true);
    if (type === 0) break; // Uninitialized: the rest is padding
    if (offset + 4 + length > data.length) return null;
    extensions.push({ type, data: data.subarray(offset + 4, offset + 4 + length) });
    offset += 4 + length;
  }
  return extensions;
}

/** null when the account is not an initialized mint of a token program. */
export function decodeMint(account: RawAccount): MintState | null {
  if (!isTokenProgram(account.owner)) return null;
  const { data } = account;
  if (data.length < MINT_SIZE) return null;
  if (account.owner === TOKEN_PROGRAM_ADDRESS && data.length !== MINT_SIZE) return null;
  // A Token-2022 mint with extensions is padded to the account size before its type byte.
  if (data.length !== MINT_SIZE && data.length <= ACCOUNT_SIZE) return null;
  const extensions = readExtensions(data, ACCOUNT_TYPE_MINT);
  if (extensions === null) return null;
  const mint = getMintDecoder().decode(data.subarray(0, MINT_SIZE));
  if (!mint.isInitialized) return null;
  const permanentDelegate = extensions.find((e) => e.type === EXT_PERMANENT_DELEGATE);
  const delegateAddress = permanentDelegate ? getAddressDecoder().decode(permanentDelegate.data) : null;
  return {
    address: account.address,
    tokenProgram: account.owner,
    decimals: mint.decimals,
    supply: mint.supply,
    isNative: account.address === NATIVE_MINT || account.address === NATIVE_MINT_2022,
    nonTransferable: extensions.some((e) => e.type === EXT_NON_TRANSFERABLE),
    // An all-zero delegate means "none" in Token-2022's OptionalNonZeroPubkey.
    permanentDelegate: delegateAddress && delegateAddress !== address('11111111111111111111111111111111') ? delegateAddress : null,
  };
}

/** null when the account is not a token account of a token program. */
export function decodeTokenAccount(account: RawAccount): TokenAccountState | null {
  if (!isTokenProgram(account.owner) || account.data.length < ACCOUNT_SIZE) return null;
  const extensions = readExtensions(account.data, ACCOUNT_TYPE_ACCOUNT);
  if (extensions === null) return null;
  const token = getTokenDecoder().decode(account.data.subarray(0, ACCOUNT_SIZE));
  if (token.state === AccountState.Uninitialized) return null;
  const feeAmount = extensions.find((e) => e.type === EXT_TRANSFER_FEE_AMOUNT);
  const confidential = extensions.find((e) => e.type === EXT_CONFIDENTIAL_TRANSFER_ACCOUNT);
  return {
    address: account.address,
    lamports: account.lamports,
    mint: token.mint,
    owner: token.owner,
    amount: token.amount,
    frozen: token.state === AccountState.Frozen,
    isNative: token.isNative.__option === 'Some',
    closeAuthority: token.closeAuthority.__option === 'Some' ? token.closeAuthority.value : null,
    withheldAmount: feeAmount && feeAmount.data.length >= 8 ? new DataView(feeAmount.data.buffer, feeAmount.data.byteOffset).getBigUint64(0, true) : 0n,
    hasConfidentialBalance: confidential ? hasNonZeroConfidentialBalance(confidential.data) : false,
  };
}

/**
 * ConfidentialTransferAccount: approved (1) + ElGamal pubkey (32), then pending_balance_lo (64),
 * pending_balance_hi (64) and available_balance (64). Token-2022 only closes the account when all
 * three ciphertexts are zeroed.
 */
function hasNonZeroConfidentialBalance(data: Uint8Array): boolean {
  return data.subarray(33, 33 + 64 * 3).some((byte) => byte !== 0);
}
