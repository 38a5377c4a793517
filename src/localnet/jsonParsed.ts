/**
 * The `jsonParsed` view of SPL Token / Token-2022 accounts and mints, in the shape of agave's
 * account-decoder (`parse_token.rs`), plus the token balances of getTransaction's meta.
 * Anything that is not an initialized token account or mint is "not parsable": callers fall back
 * to base64, as the validator does.
 */
import { getAddressDecoder, type Address } from '@solana/kit';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

const ACCOUNT_LEN = 165;
const MINT_LEN = 82;
const MULTISIG_LEN = 355;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

/** Token-2022 appends an account-type byte and TLV extensions after the 165-byte base layout. */
export function isTokenAccountData(data: Uint8Array, program: string): boolean {
  if (data.length === ACCOUNT_LEN) return true;
  return program === TOKEN_2022_PROGRAM && data.length > ACCOUNT_LEN && data.length !== MULTISIG_LEN && data[ACCOUNT_LEN] === ACCOUNT_TYPE_ACCOUNT;
}

function isMintData(data: Uint8Array, program: string): boolean {
  if (data.length === MINT_LEN) return true;
  return program === TOKEN_2022_PROGRAM && data.length > ACCOUNT_LEN && data.length !== MULTISIG_LEN && data[ACCOUNT_LEN] === ACCOUNT_TYPE_MINT;
}

const addressDecoder = getAddressDecoder();
const readAddress = (data: Uint8Array, offset: number): Address => addressDecoder.decode(data.subarray(offset, offset + 32));
const readU64 = (data: Uint8Array, offset: number): bigint =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
const readU32 = (data: Uint8Array, offset: number): number =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true);
const readOptionAddress = (data: Uint8Array, offset: number): Address | null =>
  readU32(data, offset) === 1 ? readAddress(data, offset + 4) : null;

export interface TokenAccountState {
  mint: Address;
  owner: Address;
  amount: bigint;
  delegate: Address | null;
  /** 0 uninitialized, 1 initialized, 2 frozen */
  state: number;
  /** Rent-exempt reserve when this is a wrapped-SOL account. */
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Address | null;
}

export function decodeTokenAccount(data: Uint8Array, program: string): TokenAccountState | null {
  if (!isTokenProgram(program) || !isTokenAccountData(data, program)) return null;
  const state = data[108]!;
  if (state === 0 || state > 2) return null;
  return {
    mint: readAddress(data, 0),
    owner: readAddress(data, 32),
    amount: readU64(data, 64),
    delegate: readOptionAddress(data, 72),
    state,
    isNative: readU32(data, 109) === 1 ? readU64(data, 113) : null,
    delegatedAmount: readU64(data, 121),
    closeAuthority: readOptionAddress(data, 129),
  };
}

export interface MintState {
  mintAuthority: Address | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: Address | null;
}

export function decodeMint(data: Uint8Array, program: string): MintState | null {
  if (!isTokenProgram(program) || !isMintData(data, program) || data[45] !== 1) return null;
  return {
    mintAuthority: readOptionAddress(data, 0),
    supply: readU64(data, 36),
    decimals: data[44]!,
    freezeAuthority: readOptionAddress(data, 46),
  };
}

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number;
  uiAmountString: string;
}

/** agave `real_number_string_trimmed`: 1500000 with 6 decimals → "1.5". */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
}

const ACCOUNT_STATES = ['uninitialized', 'initialized', 'frozen'] as const;

// Token-2022 extensions rendered like agave's `UiExtension` (tag "extension", content "state");
// the rest are reported as "unparseableExtension", which is also what agave does for unknown ones.
function parseExtensions(data: Uint8Array): object[] {
  const extensions: object[] = [];
  let offset = ACCOUNT_LEN + 1;
  while (offset + 4 <= data.length) {
    const type = data[offset]! | (data[offset + 1]! << 8);
    const length = data[offset + 2]! | (data[offset + 3]! << 8);
    const value = data.subarray(offset + 4, offset + 4 + length);
    if (type === 0 || value.length !== length) break;
    extensions.push(parseExtension(type, value));
    offset += 4 + length;
  }
  return extensions;
}

function parseExtension(type: number, value: Uint8Array): object {
  const optionalNonZeroAddress = (at: number): Address | null =>
    value.subarray(at, at + 32).every((b) => b === 0) ? null : readAddress(value, at);
  switch (type) {
    case 2: return { extension: 'transferFeeAmount', state: { withheldAmount: readU64(value, 0) } };
    case 3: return { extension: 'mintCloseAuthority', state: { closeAuthority: optionalNonZeroAddress(0) } };
    case 6: return { extension: 'defaultAccountState', state: { accountState: ACCOUNT_STATES[value[0]!] ?? 'uninitialized' } };
    case 7: return { extension: 'immutableOwner' };
    case 8: return { extension: 'memoTransfer', state: { requireIncomingTransferMemos: value[0] === 1 } };
    case 9: return { extension: 'nonTransferable' };
    case 11: return { extension: 'cpiGuard', state: { lockCpi: value[0] === 1 } };
    case 12: return { extension: 'permanentDelegate', state: { delegate: optionalNonZeroAddress(0) } };
    case 13: return { extension: 'nonTransferableAccount' };
    case 15: return { extension: 'transferHookAccount', state: { transferring: value[0] === 1 } };
    case 27: return { extension: 'pausableAccount' };
    default: return { extension: 'unparseableExtension' };
  }
}

export interface ParsedAccountData {
  program: 'spl-token' | 'spl-token-2022';
  parsed: { type: 'account' | 'mint'; info: Record<string, unknown> };
  space: number;
}

/**
 * `lookupMint` returns the mint's decimals (token accounts show amounts with them) or null when
 * the mint is missing, which makes the account unparsable.
 */
export function parseTokenProgramAccount(
  data: Uint8Array,
  program: string,
  lookupDecimals: (mint: Address) => number | null,
): ParsedAccountData | null {
  if (!isTokenProgram(program)) return null;
  const programName = program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  const hasExtensions = program === TOKEN_2022_PROGRAM && data.length > ACCOUNT_LEN;
  const account = decodeTokenAccount(data, program);
  if (account) {
    const decimals = lookupDecimals(account.mint);
    if (decimals === null) return null;
    const info: Record<string, unknown> = {
      isNative: account.isNative !== null,
      mint: account.mint,
      owner: account.owner,
      state: ACCOUNT_STATES[account.state],
      tokenAmount: uiTokenAmount(account.amount, decimals),
    };
    if (account.delegate !== null) {
      info.delegate = account.delegate;
      info.delegatedAmount = uiTokenAmount(account.delegatedAmount, decimals);
    }
    if (account.closeAuthority !== null) info.closeAuthority = account.closeAuthority;
    if (account.isNative !== null) info.rentExemptReserve = uiTokenAmount(account.isNative, decimals);
    if (hasExtensions) {
      const extensions = parseExtensions(data);
      if (extensions.length > 0) info.extensions = extensions;
    }
    return { program: programName, parsed: { type: 'account', info }, space: data.length };
  }
  const mint = decodeMint(data, program);
  if (mint) {
    const info: Record<string, unknown> = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority,
      isInitialized: true,
      mintAuthority: mint.mintAuthority,
      supply: mint.supply.toString(),
    };
    if (hasExtensions) {
      const extensions = parseExtensions(data);
      if (extensions.length > 0) info.extensions = extensions;
    }
    return { program: programName, parsed: { type: 'mint', info }, space: data.length };
  }
  return null;
}
