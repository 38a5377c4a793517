/** Account views of the RPC: encodings, dataSlice and getProgramAccounts filters. */
import { getBase58Decoder, getBase58Encoder, getBase64Decoder, getBase64Encoder, type Address } from '@solana/kit';
import type { Chain } from './chain.ts';
import { mintAmountContext, parseTokenProgramAccount, type MintAmountContext, type ParsedAccountData } from './jsonParsed.ts';
import type { Config } from './params.ts';
import { invalidParams, RpcError, RpcErrorCode } from './rpcErrors.ts';

/** Accounts are rent-exempt forever now; the validator reports rentEpoch as u64::MAX. */
const RENT_EPOCH = 18446744073709551615n;
const MAX_BASE58_BYTES = 128;

export type AccountEncoding = 'binary' | 'base58' | 'base64' | 'base64+zstd' | 'jsonParsed';

export interface RawAccount {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
}

export interface DataSlice {
  offset: number;
  length: number;
}

export interface UiAccount {
  data: string | [string, string] | ParsedAccountData;
  executable: boolean;
  lamports: bigint;
  owner: string;
  rentEpoch: bigint;
  space: number;
}

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();

export function readAccount(chain: Chain, address: Address): RawAccount | null {
  const account = chain.svm.getAccount(address);
  if (!account.exists) return null;
  return { lamports: account.lamports, data: new Uint8Array(account.data), owner: account.programAddress, executable: account.executable };
}

export function encodingOption(config: Config, fallback: AccountEncoding): AccountEncoding {
  const value = config.encoding ?? fallback;
  if (value === 'binary' || value === 'base58' || value === 'base64' || value === 'jsonParsed') return value;
  if (value === 'base64+zstd') {
    // Node 20's zlib has no zstd, and no dependency may be added for it.
    throw invalidParams('Invalid params: base64+zstd encoding is not supported by the local chain; use base64.');
  }
  throw invalidParams(`Invalid params: unknown variant \`${String(value)}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\`.`);
}

export function dataSliceOption(config: Config): DataSlice | null {
  const slice = config.dataSlice;
  if (slice === undefined || slice === null) return null;
  const { offset, length } = slice as { offset?: unknown; length?: unknown };
  if (typeof slice !== 'object' || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || (offset as number) < 0 || (length as number) < 0) {
    throw invalidParams('Invalid params: dataSlice must be { offset, length } with unsigned integers.');
  }
  return { offset: offset as number, length: length as number };
}

/** What a mint's token amounts need (decimals, interest, UI multiplier), at the chain's current time. */
export function mintAmounts(chain: Chain, mint: Address): MintAmountContext | null {
  const account = readAccount(chain, mint);
  return account ? mintAmountContext(account.data, account.owner, BigInt(chain.blockTime)) : null;
}

export function encodeAccount(chain: Chain, account: RawAccount, encoding: AccountEncoding, slice: DataSlice | null): UiAccount {
  return {
    data: encodeData(chain, account, encoding, slice),
    executable: account.executable,
    lamports: account.lamports,
    owner: account.owner,
    rentEpoch: RENT_EPOCH,
    space: account.data.length,
  };
}

function encodeData(chain: Chain, account: RawAccount, encoding: AccountEncoding, slice: DataSlice | null): UiAccount['data'] {
  if (encoding === 'jsonParsed') {
    const parsed = parseTokenProgramAccount(account.data, account.owner, (mint) => mintAmounts(chain, mint));
    // Unparsable accounts fall back to base64, as on the validator.
    return parsed ?? [base64.decode(account.data), 'base64'];
  }
  const data = slice ? account.data.subarray(slice.offset, slice.offset + slice.length) : account.data;
  if (encoding === 'base64') return [base64.decode(data), 'base64'];
  if (data.length > MAX_BASE58_BYTES) {
    // The validator's encode_account answers this one with -32600, not -32602.
    throw new RpcError(RpcErrorCode.INVALID_REQUEST, `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`);
  }
  return encoding === 'base58' ? [base58.decode(data), 'base58'] : base58.decode(data);
}

/** What accountNotification sends for a closed account. */
export const CLOSED_ACCOUNT: RawAccount = { lamports: 0n, data: new Uint8Array(), owner: '11111111111111111111111111111111', executable: false };

export type AccountFilter = { dataSize: number } | { memcmp: { offset: number; bytes: Uint8Array } };

const MAX_FILTERS = 4;

export function parseFilters(value: unknown): AccountFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams('Invalid params: filters must be an array.');
  if (value.length > MAX_FILTERS) throw invalidParams(`Too many filters provided; max ${MAX_FILTERS}`);
  return value.map((filter: unknown): AccountFilter => {
    const f = filter as { dataSize?: unknown; memcmp?: { offset?: unknown; bytes?: unknown; encoding?: unknown } };
    if (f && typeof f === 'object' && Number.isSafeInteger(f.dataSize) && (f.dataSize as number) >= 0) return { dataSize: f.dataSize as number };
    const memcmp = f?.memcmp;
    if (memcmp && Number.isSafeInteger(memcmp.offset) && (memcmp.offset as number) >= 0 && typeof memcmp.bytes === 'string') {
      const encoding = memcmp.encoding ?? 'base58';
      try {
        if (encoding === 'base58' && memcmp.bytes.length <= 175) {
          return { memcmp: { offset: memcmp.offset as number, bytes: new Uint8Array(getBase58Encoder().encode(memcmp.bytes)) } };
        }
        if (encoding === 'base64' && memcmp.bytes.length <= 172) {
          return { memcmp: { offset: memcmp.offset as number, bytes: new Uint8Array(getBase64Encoder().encode(memcmp.bytes)) } };
        }
      } catch {
        // reported below
      }
    }
    throw invalidParams(`Invalid params: unsupported or malformed filter: ${JSON.stringify(filter)}.`);
  });
}

export function matchesFilters(data: Uint8Array, filters: readonly AccountFilter[]): boolean {
  return filters.every((filter) => {
    if ('dataSize' in filter) return data.length === filter.dataSize;
    const { offset, bytes } = filter.memcmp;
    if (offset + bytes.length > data.length) return false;
    for (let i = 0; i < bytes.length; i++) if (data[offset + i] !== bytes[i]) return false;
    return true;
  });
}
