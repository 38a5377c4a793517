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
  uiAmount: number | null;
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

/** Token-2022's InterestBearingConfig (extension 10). */
export interface InterestBearingConfig {
  rateAuthority: Address | null;
  initializationTimestamp: bigint;
  preUpdateAverageRate: number;
  lastUpdateTimestamp: bigint;
  currentRate: number;
}

/** Token-2022's ScaledUiAmountConfig (extension 25). */
export interface ScaledUiAmountConfig {
  authority: Address | null;
  multiplier: number;
  newMultiplierEffectiveTimestamp: bigint;
  newMultiplier: number;
}

/** What turning a raw amount of a mint into its UI amount takes (agave `SplTokenAdditionalDataV2`). */
export interface MintAmountContext {
  decimals: number;
  interestBearing: InterestBearingConfig | null;
  scaledUiAmount: ScaledUiAmountConfig | null;
  /** The Clock sysvar's unix timestamp, which interest and multiplier changes are measured against. */
  unixTimestamp: bigint;
}

export const plainAmounts = (decimals: number): MintAmountContext => ({ decimals, interestBearing: null, scaledUiAmount: null, unixTimestamp: 0n });

const SECONDS_PER_YEAR = 60 * 60 * 24 * 365.24;
const ONE_IN_BASIS_POINTS = 10_000;

/** spl-token-2022 `trim_ui_amount_string`. */
function trimUiAmount(text: string, decimals: number): string {
  if (decimals === 0 || !text.includes('.')) return text;
  return text.replace(/0+$/, '').replace(/\.$/, '');
}

/** Rust `format!("{:.N}", value)` then `trim_ui_amount_string`; JS `toFixed` only differs from 1e21 up, where the value is a whole number. */
function formatUiAmount(value: number, decimals: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Math.abs(value) >= 1e21) return BigInt(value).toString();
  return trimUiAmount(value.toFixed(decimals), decimals);
}

function interestScale(config: InterestBearingConfig, decimals: number, unixTimestamp: bigint): number {
  const preTimespan = Number(config.lastUpdateTimestamp - config.initializationTimestamp);
  const postTimespan = Number(unixTimestamp - config.lastUpdateTimestamp);
  const preExp = Math.exp((config.preUpdateAverageRate * preTimespan) / SECONDS_PER_YEAR / ONE_IN_BASIS_POINTS);
  const postExp = Math.exp((config.currentRate * postTimespan) / SECONDS_PER_YEAR / ONE_IN_BASIS_POINTS);
  return (preExp * postExp) / 10 ** decimals;
}

/** agave `token_amount_to_ui_amount_v3`. */
export function uiTokenAmount(amount: bigint, context: number | MintAmountContext): UiTokenAmount {
  const ctx = typeof context === 'number' ? plainAmounts(context) : context;
  const { decimals } = ctx;
  let text: string;
  let uiAmount: number | null;
  if (ctx.interestBearing) {
    // spl-token-2022 InterestBearingConfig::amount_to_ui_amount: amount × scale, rounded to `decimals`.
    text = formatUiAmount(Number(amount) * interestScale(ctx.interestBearing, decimals, ctx.unixTimestamp), decimals);
    uiAmount = Number(text);
  } else if (ctx.scaledUiAmount) {
    const config = ctx.scaledUiAmount;
    const multiplier = ctx.unixTimestamp >= config.newMultiplierEffectiveTimestamp ? config.newMultiplier : config.multiplier;
    // spl-token-2022 ScaledUiAmountConfig::amount_to_ui_amount: amount × multiplier truncated to a
    // whole base unit first, then shifted by `decimals`.
    text = formatUiAmount(Math.trunc(Number(amount) * multiplier) / 10 ** decimals, decimals);
    uiAmount = Number(text);
  } else {
    text = uiAmountString(amount, decimals);
    // `amount as f64 / 10^decimals as f64`, exactly as agave computes it.
    uiAmount = Number(amount) / 10 ** decimals;
  }
  return { amount: amount.toString(), decimals, uiAmount: Number.isFinite(uiAmount) ? uiAmount : null, uiAmountString: text };
}

const ACCOUNT_STATES = ['uninitialized', 'initialized', 'frozen'] as const;

export const EXTENSION_INTEREST_BEARING = 10;
export const EXTENSION_SCALED_UI_AMOUNT = 25;

/** The TLV entries after the base state: [type, value]. */
function extensionEntries(data: Uint8Array): [number, Uint8Array][] {
  const entries: [number, Uint8Array][] = [];
  let offset = ACCOUNT_LEN + 1;
  while (offset + 4 <= data.length) {
    const type = data[offset]! | (data[offset + 1]! << 8);
    const length = data[offset + 2]! | (data[offset + 3]! << 8);
    const value = data.subarray(offset + 4, offset + 4 + length);
    if (type === 0 || value.length !== length) break;
    entries.push([type, value]);
    offset += 4 + length;
  }
  return entries;
}

const readI64 = (data: Uint8Array, offset: number): bigint => new DataView(data.buffer, data.byteOffset, data.byteLength).getBigInt64(offset, true);
const readI16 = (data: Uint8Array, offset: number): number => new DataView(data.buffer, data.byteOffset, data.byteLength).getInt16(offset, true);
const readF64 = (data: Uint8Array, offset: number): number => new DataView(data.buffer, data.byteOffset, data.byteLength).getFloat64(offset, true);
const optionalNonZeroAddress = (value: Uint8Array, at: number): Address | null =>
  value.subarray(at, at + 32).every((b) => b === 0) ? null : readAddress(value, at);

function interestBearingOf(value: Uint8Array): InterestBearingConfig | null {
  if (value.length !== 52) return null;
  return {
    rateAuthority: optionalNonZeroAddress(value, 0),
    initializationTimestamp: readI64(value, 32),
    preUpdateAverageRate: readI16(value, 40),
    lastUpdateTimestamp: readI64(value, 42),
    currentRate: readI16(value, 50),
  };
}

function scaledUiAmountOf(value: Uint8Array): ScaledUiAmountConfig | null {
  if (value.length !== 56) return null;
  return {
    authority: optionalNonZeroAddress(value, 0),
    multiplier: readF64(value, 32),
    newMultiplierEffectiveTimestamp: readI64(value, 40),
    newMultiplier: readF64(value, 48),
  };
}

/** The mint's decimals and UI-amount extensions, or null when `data` is not a mint. */
export function mintAmountContext(data: Uint8Array, program: string, unixTimestamp: bigint): MintAmountContext | null {
  const mint = decodeMint(data, program);
  if (!mint) return null;
  const context: MintAmountContext = { decimals: mint.decimals, interestBearing: null, scaledUiAmount: null, unixTimestamp };
  if (program === TOKEN_2022_PROGRAM && data.length > ACCOUNT_LEN) {
    for (const [type, value] of extensionEntries(data)) {
      if (type === EXTENSION_INTEREST_BEARING) context.interestBearing = interestBearingOf(value);
      if (type === EXTENSION_SCALED_UI_AMOUNT) context.scaledUiAmount = scaledUiAmountOf(value);
    }
  }
  return context;
}

// Token-2022 extensions rendered like agave's `UiExtension` (tag "extension", content "state");
// the confidential-transfer ones and any unknown type are "unparseableExtension".
function parseExtensions(data: Uint8Array): object[] {
  return extensionEntries(data).map(([type, value]) => {
    try {
      return parseExtension(type, value) ?? { extension: 'unparseableExtension' };
    } catch {
      return { extension: 'unparseableExtension' };
    }
  });
}

/** Rust's f64 Display: integers without ".0", otherwise the shortest round-trip form. */
function rustF64(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return BigInt(value).toString();
  const text = String(value);
  if (!/e/.test(text)) return text;
  // JS writes very small and very large values with an exponent; Rust writes the same shortest
  // digits in plain decimal.
  const [mantissa = '', exp = '0'] = text.split('e');
  const negative = mantissa.startsWith('-');
  const unsigned = negative ? mantissa.slice(1) : mantissa;
  const dot = unsigned.indexOf('.');
  const digits = unsigned.replace('.', '');
  const pointAt = (dot === -1 ? unsigned.length : dot) + Number(exp);
  const plain =
    pointAt <= 0
      ? `0.${'0'.repeat(-pointAt)}${digits}`
      : pointAt >= digits.length
        ? digits + '0'.repeat(pointAt - digits.length)
        : `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return (negative ? '-' : '') + plain;
}

/** Borsh string: u32 length, UTF-8 bytes. */
function borshString(value: Uint8Array, at: { offset: number }): string {
  const length = readU32(value, at.offset);
  const start = at.offset + 4;
  if (start + length > value.length) throw new RangeError('string past the end');
  at.offset = start + length;
  return new TextDecoder('utf-8', { fatal: true }).decode(value.subarray(start, start + length));
}

function transferFee(value: Uint8Array, at: number) {
  return { epoch: readU64(value, at), maximumFee: readU64(value, at + 8), transferFeeBasisPoints: value[at + 16]! | (value[at + 17]! << 8) };
}

function parseExtension(type: number, value: Uint8Array): object | null {
  const pointer = (authorityKey: string, addressKey: string) =>
    value.length === 64 ? { [authorityKey]: optionalNonZeroAddress(value, 0), [addressKey]: optionalNonZeroAddress(value, 32) } : null;
  switch (type) {
    case 1:
      if (value.length !== 108) return null;
      return {
        extension: 'transferFeeConfig',
        state: {
          transferFeeConfigAuthority: optionalNonZeroAddress(value, 0),
          withdrawWithheldAuthority: optionalNonZeroAddress(value, 32),
          withheldAmount: readU64(value, 64),
          olderTransferFee: transferFee(value, 72),
          newerTransferFee: transferFee(value, 90),
        },
      };
    case 2: return { extension: 'transferFeeAmount', state: { withheldAmount: readU64(value, 0) } };
    case 3: return { extension: 'mintCloseAuthority', state: { closeAuthority: optionalNonZeroAddress(value, 0) } };
    case 6: return { extension: 'defaultAccountState', state: { accountState: ACCOUNT_STATES[value[0]!] ?? 'uninitialized' } };
    case 7: return { extension: 'immutableOwner' };
    case 8: return { extension: 'memoTransfer', state: { requireIncomingTransferMemos: value[0] === 1 } };
    case 9: return { extension: 'nonTransferable' };
    case EXTENSION_INTEREST_BEARING: {
      const config = interestBearingOf(value);
      return config ? { extension: 'interestBearingConfig', state: config } : null;
    }
    case 11: return { extension: 'cpiGuard', state: { lockCpi: value[0] === 1 } };
    case 12: return { extension: 'permanentDelegate', state: { delegate: optionalNonZeroAddress(value, 0) } };
    case 13: return { extension: 'nonTransferableAccount' };
    case 14: {
      const state = pointer('authority', 'programId');
      return state ? { extension: 'transferHook', state } : null;
    }
    case 15: return { extension: 'transferHookAccount', state: { transferring: value[0] === 1 } };
    case 18: {
      const state = pointer('authority', 'metadataAddress');
      return state ? { extension: 'metadataPointer', state } : null;
    }
    case 19: {
      const at = { offset: 64 };
      const name = borshString(value, at);
      const symbol = borshString(value, at);
      const uri = borshString(value, at);
      const count = readU32(value, at.offset);
      at.offset += 4;
      const additionalMetadata: [string, string][] = [];
      for (let i = 0; i < count; i++) additionalMetadata.push([borshString(value, at), borshString(value, at)]);
      return {
        extension: 'tokenMetadata',
        state: { updateAuthority: optionalNonZeroAddress(value, 0), mint: readAddress(value, 32), name, symbol, uri, additionalMetadata },
      };
    }
    case 20: {
      const state = pointer('authority', 'groupAddress');
      return state ? { extension: 'groupPointer', state } : null;
    }
    case 21:
      if (value.length !== 80) return null;
      return { extension: 'tokenGroup', state: { updateAuthority: optionalNonZeroAddress(value, 0), mint: readAddress(value, 32), size: readU64(value, 64), maxSize: readU64(value, 72) } };
    case 22: {
      const state = pointer('authority', 'memberAddress');
      return state ? { extension: 'groupMemberPointer', state } : null;
    }
    case 23:
      if (value.length !== 72) return null;
      return { extension: 'tokenGroupMember', state: { mint: readAddress(value, 0), group: readAddress(value, 32), memberNumber: readU64(value, 64) } };
    case EXTENSION_SCALED_UI_AMOUNT: {
      const config = scaledUiAmountOf(value);
      if (!config) return null;
      return {
        extension: 'scaledUiAmountConfig',
        state: {
          authority: config.authority,
          multiplier: rustF64(config.multiplier),
          newMultiplierEffectiveTimestamp: config.newMultiplierEffectiveTimestamp,
          newMultiplier: rustF64(config.newMultiplier),
        },
      };
    }
    case 26:
      if (value.length !== 33) return null;
      return { extension: 'pausableConfig', state: { authority: optionalNonZeroAddress(value, 0), paused: value[32] === 1 } };
    case 27: return { extension: 'pausableAccount' };
    default: return null;
  }
}

export interface ParsedAccountData {
  program: 'spl-token' | 'spl-token-2022';
  parsed: { type: 'account' | 'mint'; info: Record<string, unknown> };
  space: number;
}

/**
 * `lookupMint` returns what the mint's amounts need (decimals, interest, multiplier), or null when
 * the mint is missing, which makes the account unparsable.
 */
export function parseTokenProgramAccount(
  data: Uint8Array,
  program: string,
  lookupMint: (mint: Address) => MintAmountContext | null,
): ParsedAccountData | null {
  if (!isTokenProgram(program)) return null;
  const programName = program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  const hasExtensions = program === TOKEN_2022_PROGRAM && data.length > ACCOUNT_LEN;
  const account = decodeTokenAccount(data, program);
  if (account) {
    const decimals = lookupMint(account.mint);
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
