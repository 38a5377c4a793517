/**
 * The `jsonParsed` view of instructions, in the shape of agave's transaction-status parsers
 * (`parse_instruction.rs`, `parse_system.rs`, `parse_token.rs`, `parse_associated_token.rs`):
 * `{ program, programId, parsed: { type, info }, stackHeight }` for the instructions parsed here, and
 * `{ programId, accounts, data, stackHeight }` (partially decoded) for everything else, as the
 * validator does for programs it has no parser for (Compute Budget, any user program).
 *
 * Parsed here: System, SPL Token and Token-2022 (the base instruction set; extension
 * instructions are partially decoded), Associated Token Account and Memo.
 */
import { getBase58Decoder } from '@solana/kit';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM, uiTokenAmount } from './jsonParsed.ts';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAMS: ReadonlySet<string> = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);

const base58 = getBase58Decoder();

export interface CompiledInstructionLike {
  programIdIndex: number;
  accounts: readonly number[];
  data: Uint8Array;
  stackHeight: number | null;
}

export type UiParsedInstruction =
  | { program: string; programId: string; parsed: unknown; stackHeight: number | null }
  | { programId: string; accounts: string[]; data: string; stackHeight: number | null };

class NotParsable extends Error {}

/** Little-endian reader that throws NotParsable past the end (a malformed instruction). */
class Reader {
  private offset = 0;
  private readonly view: DataView;
  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  private need(n: number): number {
    if (this.offset + n > this.data.length) throw new NotParsable();
    const at = this.offset;
    this.offset += n;
    return at;
  }
  u8(): number {
    return this.view.getUint8(this.need(1));
  }
  u32(): number {
    return this.view.getUint32(this.need(4), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.need(8), true);
  }
  pubkey(): string {
    const at = this.need(32);
    return base58.decode(this.data.subarray(at, at + 32));
  }
  /** COption<Pubkey> in the token program's instruction packing: 1 byte tag, then the key. */
  optionPubkey(): string | null {
    return this.u8() === 1 ? this.pubkey() : null;
  }
  /** Rust String / bincode: u64 length then UTF-8. */
  string(): string {
    const length = Number(this.u64());
    const at = this.need(length);
    return new TextDecoder().decode(this.data.subarray(at, at + length));
  }
  get remaining(): number {
    return this.data.length - this.offset;
  }
}

type Info = Record<string, unknown>;
type Parsed = { type: string; info: Info };

function keysOf(ix: CompiledInstructionLike, keys: readonly string[], min: number): (i: number) => string {
  if (ix.accounts.length < min) throw new NotParsable();
  return (i) => {
    const key = keys[ix.accounts[i]!];
    if (key === undefined) throw new NotParsable();
    return key;
  };
}

function parseSystem(ix: CompiledInstructionLike, keys: readonly string[]): Parsed {
  const r = new Reader(ix.data);
  const tag = r.u32();
  switch (tag) {
    case 0: {
      const key = keysOf(ix, keys, 2);
      const lamports = r.u64();
      const space = r.u64();
      return { type: 'createAccount', info: { source: key(0), newAccount: key(1), lamports, space, owner: r.pubkey() } };
    }
    case 1: {
      const key = keysOf(ix, keys, 1);
      return { type: 'assign', info: { account: key(0), owner: r.pubkey() } };
    }
    case 2: {
      const key = keysOf(ix, keys, 2);
      return { type: 'transfer', info: { source: key(0), destination: key(1), lamports: r.u64() } };
    }
    case 3: {
      const key = keysOf(ix, keys, 2);
      const base = r.pubkey();
      const seed = r.string();
      const lamports = r.u64();
      const space = r.u64();
      return { type: 'createAccountWithSeed', info: { source: key(0), newAccount: key(1), base, seed, lamports, space, owner: r.pubkey() } };
    }
    case 4: {
      const key = keysOf(ix, keys, 3);
      return { type: 'advanceNonce', info: { nonceAccount: key(0), recentBlockhashesSysvar: key(1), nonceAuthority: key(2) } };
    }
    case 5: {
      const key = keysOf(ix, keys, 5);
      return {
        type: 'withdrawFromNonce',
        info: { nonceAccount: key(0), destination: key(1), recentBlockhashesSysvar: key(2), rentSysvar: key(3), nonceAuthority: key(4), lamports: r.u64() },
      };
    }
    case 6: {
      const key = keysOf(ix, keys, 3);
      return { type: 'initializeNonce', info: { nonceAccount: key(0), recentBlockhashesSysvar: key(1), rentSysvar: key(2), nonceAuthority: r.pubkey() } };
    }
    case 7: {
      const key = keysOf(ix, keys, 2);
      return { type: 'authorizeNonce', info: { nonceAccount: key(0), nonceAuthority: key(1), newAuthorized: r.pubkey() } };
    }
    case 8: {
      const key = keysOf(ix, keys, 1);
      return { type: 'allocate', info: { account: key(0), space: r.u64() } };
    }
    case 12: {
      const key = keysOf(ix, keys, 1);
      return { type: 'upgradeNonce', info: { nonceAccount: key(0) } };
    }
    default:
      throw new NotParsable();
  }
}

const AUTHORITY_TYPES = [
  'mintTokens', 'freezeAccount', 'accountOwner', 'closeAccount', 'transferFeeConfig', 'withheldWithdraw', 'closeMint',
  'interestRate', 'permanentDelegate', 'confidentialTransferMint', 'transferHookProgramId', 'confidentialTransferFeeConfig',
  'metadataPointer', 'groupPointer', 'groupMemberPointer', 'scaledUiAmount', 'pause',
];

/** spl-token-2022 ExtensionType by number, as agave's UiExtensionType names them. */
const EXTENSION_TYPES = [
  'uninitialized', 'transferFeeConfig', 'transferFeeAmount', 'mintCloseAuthority', 'confidentialTransferMint',
  'confidentialTransferAccount', 'defaultAccountState', 'immutableOwner', 'memoTransfer', 'nonTransferable',
  'interestBearingConfig', 'cpiGuard', 'permanentDelegate', 'nonTransferableAccount', 'transferHook', 'transferHookAccount',
  'confidentialTransferFeeConfig', 'confidentialTransferFeeAmount', 'metadataPointer', 'tokenMetadata', 'groupPointer',
  'tokenGroup', 'groupMemberPointer', 'tokenGroupMember', 'confidentialMintBurn', 'scaledUiAmountConfig', 'pausableConfig',
  'pausableAccount',
];

/** agave `parse_signers`: one authority, or a multisig authority followed by its signers. */
function withSigners(info: Info, ix: CompiledInstructionLike, keys: readonly string[], index: number, single: string, multisig: string): Info {
  const key = keysOf(ix, keys, index + 1);
  if (ix.accounts.length > index + 1) {
    info[multisig] = key(index);
    info.signers = ix.accounts.slice(index + 1).map((_, i) => key(index + 1 + i));
  } else {
    info[single] = key(index);
  }
  return info;
}

function parseToken(ix: CompiledInstructionLike, keys: readonly string[]): Parsed {
  const r = new Reader(ix.data);
  const tag = r.u8();
  const k = (min: number) => keysOf(ix, keys, min);
  switch (tag) {
    case 0:
    case 20: {
      const key = k(tag === 0 ? 2 : 1);
      const decimals = r.u8();
      const mintAuthority = r.pubkey();
      const freezeAuthority = r.remaining > 0 ? r.optionPubkey() : null;
      const info: Info = { mint: key(0), decimals, mintAuthority };
      if (tag === 0) info.rentSysvar = key(1);
      if (freezeAuthority !== null) info.freezeAuthority = freezeAuthority;
      return { type: tag === 0 ? 'initializeMint' : 'initializeMint2', info };
    }
    case 1: {
      const key = k(4);
      return { type: 'initializeAccount', info: { account: key(0), mint: key(1), owner: key(2), rentSysvar: key(3) } };
    }
    case 16: {
      const key = k(3);
      return { type: 'initializeAccount2', info: { account: key(0), mint: key(1), owner: r.pubkey(), rentSysvar: key(2) } };
    }
    case 18: {
      const key = k(2);
      return { type: 'initializeAccount3', info: { account: key(0), mint: key(1), owner: r.pubkey() } };
    }
    case 3: {
      const key = k(3);
      const info = { source: key(0), destination: key(1), amount: r.u64().toString() };
      return { type: 'transfer', info: withSigners(info, ix, keys, 2, 'authority', 'multisigAuthority') };
    }
    case 4: {
      const key = k(3);
      const info = { source: key(0), delegate: key(1), amount: r.u64().toString() };
      return { type: 'approve', info: withSigners(info, ix, keys, 2, 'owner', 'multisigOwner') };
    }
    case 5: {
      const key = k(2);
      return { type: 'revoke', info: withSigners({ source: key(0) }, ix, keys, 1, 'owner', 'multisigOwner') };
    }
    case 6: {
      const key = k(2);
      const authorityType = AUTHORITY_TYPES[r.u8()];
      if (authorityType === undefined) throw new NotParsable();
      const owned = authorityType === 'accountOwner' || authorityType === 'closeAccount' ? 'account' : 'mint';
      const info: Info = { [owned]: key(0), authorityType, newAuthority: r.optionPubkey() };
      return { type: 'setAuthority', info: withSigners(info, ix, keys, 1, 'authority', 'multisigAuthority') };
    }
    case 7: {
      const key = k(3);
      const info = { mint: key(0), account: key(1), amount: r.u64().toString() };
      return { type: 'mintTo', info: withSigners(info, ix, keys, 2, 'mintAuthority', 'multisigMintAuthority') };
    }
    case 8: {
      const key = k(3);
      const info = { account: key(0), mint: key(1), amount: r.u64().toString() };
      return { type: 'burn', info: withSigners(info, ix, keys, 2, 'authority', 'multisigAuthority') };
    }
    case 9: {
      const key = k(3);
      return { type: 'closeAccount', info: withSigners({ account: key(0), destination: key(1) }, ix, keys, 2, 'owner', 'multisigOwner') };
    }
    case 10:
    case 11: {
      const key = k(3);
      const info = withSigners({ account: key(0), mint: key(1) }, ix, keys, 2, 'freezeAuthority', 'multisigFreezeAuthority');
      return { type: tag === 10 ? 'freezeAccount' : 'thawAccount', info };
    }
    case 12: {
      const key = k(4);
      const amount = r.u64();
      const info = { source: key(0), mint: key(1), destination: key(2), tokenAmount: uiTokenAmount(amount, r.u8()) };
      return { type: 'transferChecked', info: withSigners(info, ix, keys, 3, 'authority', 'multisigAuthority') };
    }
    case 13: {
      const key = k(4);
      const amount = r.u64();
      const info = { source: key(0), mint: key(1), delegate: key(2), tokenAmount: uiTokenAmount(amount, r.u8()) };
      return { type: 'approveChecked', info: withSigners(info, ix, keys, 3, 'owner', 'multisigOwner') };
    }
    case 14: {
      const key = k(3);
      const amount = r.u64();
      const info = { mint: key(0), account: key(1), tokenAmount: uiTokenAmount(amount, r.u8()) };
      return { type: 'mintToChecked', info: withSigners(info, ix, keys, 2, 'mintAuthority', 'multisigMintAuthority') };
    }
    case 15: {
      const key = k(3);
      const amount = r.u64();
      const info = { account: key(0), mint: key(1), tokenAmount: uiTokenAmount(amount, r.u8()) };
      return { type: 'burnChecked', info: withSigners(info, ix, keys, 2, 'authority', 'multisigAuthority') };
    }
    case 17:
      return { type: 'syncNative', info: { account: k(1)(0) } };
    case 21: {
      const info: Info = { mint: k(1)(0) };
      const types: string[] = [];
      while (r.remaining >= 2) types.push(EXTENSION_TYPES[r.u8() | (r.u8() << 8)] ?? 'unparseableExtension');
      if (types.length > 0) info.extensionTypes = types;
      return { type: 'getAccountDataSize', info };
    }
    case 22:
      return { type: 'initializeImmutableOwner', info: { account: k(1)(0) } };
    case 23:
      return { type: 'amountToUiAmount', info: { mint: k(1)(0), amount: r.u64().toString() } };
    case 25: {
      const key = k(1);
      return { type: 'initializeMintCloseAuthority', info: { mint: key(0), newAuthority: r.optionPubkey() } };
    }
    case 32:
      return { type: 'initializeNonTransferableMint', info: { mint: k(1)(0) } };
    case 38: {
      const key = k(3);
      return { type: 'withdrawExcessLamports', info: withSigners({ source: key(0), destination: key(1) }, ix, keys, 2, 'authority', 'multisigAuthority') };
    }
    default:
      throw new NotParsable();
  }
}

function parseAssociatedToken(ix: CompiledInstructionLike, keys: readonly string[]): Parsed {
  const tag = ix.data.length === 0 ? 0 : ix.data[0]!;
  if (ix.data.length > 1) throw new NotParsable();
  if (tag === 0 || tag === 1) {
    const key = keysOf(ix, keys, 6);
    return {
      type: tag === 0 ? 'create' : 'createIdempotent',
      info: { source: key(0), account: key(1), wallet: key(2), mint: key(3), systemProgram: key(4), tokenProgram: key(5) },
    };
  }
  if (tag === 2) {
    const key = keysOf(ix, keys, 7);
    return {
      type: 'recoverNested',
      info: { nestedSource: key(0), nestedMint: key(1), destination: key(2), nestedOwner: key(3), ownerMint: key(4), wallet: key(5), tokenProgram: key(6) },
    };
  }
  throw new NotParsable();
}

/** One instruction in the jsonParsed encoding; `keys` are the message's account keys (static, then loaded). */
export function parseInstruction(ix: CompiledInstructionLike, keys: readonly string[]): UiParsedInstruction {
  const programId = keys[ix.programIdIndex] ?? '';
  try {
    if (programId === SYSTEM_PROGRAM) return { program: 'system', programId, parsed: parseSystem(ix, keys), stackHeight: ix.stackHeight };
    if (programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) {
      return { program: 'spl-token', programId, parsed: parseToken(ix, keys), stackHeight: ix.stackHeight };
    }
    if (programId === ASSOCIATED_TOKEN_PROGRAM) {
      return { program: 'spl-associated-token-account', programId, parsed: parseAssociatedToken(ix, keys), stackHeight: ix.stackHeight };
    }
    if (MEMO_PROGRAMS.has(programId)) {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(ix.data);
      return { program: 'spl-memo', programId, parsed: text, stackHeight: ix.stackHeight };
    }
  } catch (err) {
    if (!(err instanceof NotParsable) && !(err instanceof TypeError)) throw err;
  }
  return {
    programId,
    accounts: ix.accounts.map((i) => keys[i] ?? ''),
    data: base58.decode(ix.data),
    stackHeight: ix.stackHeight,
  };
}
