/**
 * What a person recognises a token by: its name and symbol, read from the mint's Token-2022
 * TokenMetadata extension or from its Metaplex Token Metadata account, and whether it looks like
 * an NFT (decimals 0, supply 1, a Metaplex metadata account). Only account bytes are parsed: no
 * program is called, no URI fetched. Used by the preview when asked (`metadata=true`), for the web
 * app's table.
 *
 * Metaplex account layout (mpl-token-metadata `Metadata`, borsh): key u8 (4 = MetadataV1),
 * update authority [32], mint [32], name (u32 length + bytes, padded with NULs to 32), symbol
 * (u32 + bytes, padded to 10), uri, … The account is the PDA ["metadata", program, mint] of the
 * Token Metadata program.
 */
import { getAddressDecoder, getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/kit';
import { getMintDecoder } from '@solana-program/token-2022';
import type { ChainAdapter, RawAccount } from '../chain/types.ts';
import { isTokenProgram, TOKEN_2022_PROGRAM_ADDRESS } from '../plan/tokenState.ts';

export const TOKEN_METADATA_PROGRAM = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s' as Address;
const METADATA_V1 = 4;
/** A name or symbol longer than this is cut: the page shows a table, not a document. */
const MAX_TEXT = 64;
/** Token-2022 mint layout: the 82-byte base, padding to the account size, the account type byte, then the extensions. */
const TOKEN_2022_MINT_WITH_EXTENSIONS = 166;

export interface MintMetadata {
  name: string | null;
  symbol: string | null;
  /** decimals 0, supply 1 and a Metaplex metadata account: burning it with a plain SPL burn loses that account's rent. */
  looksLikeNft: boolean;
}

/**
 * What is removed from a name before it is shown: controls (Cc: NUL padding, newlines), line and
 * paragraph separators (Zl, Zp), and every invisible formatting character (Cf). Cf is the whole
 * Unicode category rather than a list because its members are the ones that change how text
 * reads without being seen: the bidi embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069) and marks (U+200E, U+200F, U+061C) make a scam token's name render as another's,
 * and zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E) make two names that
 * look the same differ. A joiner inside an emoji sequence goes with them: a name is shown as its
 * separate emoji, never as something it is not.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Text to show: hidden characters removed (HIDDEN), spaces trimmed, at most MAX_TEXT characters; null when empty. */
export function displayText(value: string): string | null {
  const clean = value.replace(HIDDEN, '').trim();
  return clean === '' ? null : [...clean].slice(0, MAX_TEXT).join('');
}

export async function metaplexMetadataAddress(mint: Address): Promise<Address> {
  const encoder = getAddressEncoder();
  const [address] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: ['metadata', encoder.encode(TOKEN_METADATA_PROGRAM), encoder.encode(mint)],
  });
  return address;
}

/** Name and symbol of a Metaplex metadata account for `mint`, or null when the bytes are not one. */
export function parseMetaplexMetadata(account: RawAccount, mint: Address): { name: string | null; symbol: string | null } | null {
  if (account.owner !== TOKEN_METADATA_PROGRAM) return null;
  const data = account.data;
  if (data.length < 65 || data[0] !== METADATA_V1) return null;
  if (getAddressDecoder().decode(data.subarray(33, 65)) !== mint) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let offset = 65;
  const readString = (): string | null => {
    if (offset + 4 > data.length) return null;
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > data.length) return null;
    const text = decoder.decode(data.subarray(offset, offset + length));
    offset += length;
    return text;
  };
  const name = readString();
  const symbol = readString();
  if (name === null || symbol === null) return null;
  return { name: displayText(name), symbol: displayText(symbol) };
}

/** The mint's own Token-2022 TokenMetadata extension, when it has one. */
function token2022Metadata(account: RawAccount): { name: string | null; symbol: string | null } | null {
  if (account.owner !== TOKEN_2022_PROGRAM_ADDRESS || account.data.length < TOKEN_2022_MINT_WITH_EXTENSIONS) return null;
  try {
    const mint = getMintDecoder().decode(account.data);
    if (mint.extensions.__option !== 'Some') return null;
    const metadata = mint.extensions.value.find((e) => e.__kind === 'TokenMetadata');
    return metadata ? { name: displayText(metadata.name), symbol: displayText(metadata.symbol) } : null;
  } catch {
    return null;
  }
}

/** decimals and supply of a mint account of either program (the base layout is the same), or null. */
function decimalsAndSupply(account: RawAccount): { decimals: number; supply: bigint } | null {
  if (!isTokenProgram(account.owner) || account.data.length < 82) return null;
  const view = new DataView(account.data.buffer, account.data.byteOffset, account.data.byteLength);
  // COption<Pubkey> mint authority (4 + 32), supply u64, decimals u8.
  return { supply: view.getBigUint64(36, true), decimals: account.data[44]! };
}

/**
 * Each mint's metadata, from one batch of account reads (the mints and their Metaplex PDAs). A
 * mint without any metadata gets name and symbol null.
 */
export async function readMintMetadata(chain: ChainAdapter, mints: readonly Address[], deadline: number): Promise<Map<Address, MintMetadata>> {
  const unique = [...new Set(mints)];
  const pdas = await Promise.all(unique.map(metaplexMetadataAddress));
  const accounts = await chain.getAccounts([...unique, ...pdas], deadline);
  const result = new Map<Address, MintMetadata>();
  unique.forEach((mint, i) => {
    const mintAccount = accounts[i] ?? null;
    const metadataAccount = accounts[unique.length + i] ?? null;
    const metaplex = metadataAccount ? parseMetaplexMetadata(metadataAccount, mint) : null;
    const own = mintAccount ? token2022Metadata(mintAccount) : null;
    const shape = mintAccount ? decimalsAndSupply(mintAccount) : null;
    result.set(mint, {
      name: own?.name ?? metaplex?.name ?? null,
      symbol: own?.symbol ?? metaplex?.symbol ?? null,
      looksLikeNft: metaplex !== null && shape !== null && shape.decimals === 0 && shape.supply === 1n,
    });
  });
  return result;
}
