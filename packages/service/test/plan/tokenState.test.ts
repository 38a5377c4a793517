/**
 * The token-account and mint readers of src/plan/tokenState.ts against @solana-program/token-2022's
 * own decoders on random accounts (fast-check): the same state, or null, for every input, the
 * malformed ones included (COption tags other than 0 and 1, out-of-range states, wrong account-type
 * bytes, non-zero mint padding, extensions cut short or unknown).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { getAddressDecoder, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { AccountState, getExtensionDecoder, getMintDecoder, getTokenDecoder, type Extension } from '@solana-program/token-2022';
import type { RawAccount } from '../../src/chain/types.ts';
import {
  decodeMint,
  decodeTokenAccount,
  isTokenProgram,
  NATIVE_MINT,
  NATIVE_MINT_2022,
  TOKEN_2022_PROGRAM_ADDRESS,
  type MintState,
  type TokenAccountState,
} from '../../src/plan/tokenState.ts';

// ---- the reference: the state read with the package's whole-account decoders ----

const mintDecoder = getMintDecoder();
const tokenDecoder = getTokenDecoder();
const extensionsOf = (decoded: { extensions: { __option: 'Some'; value: Extension[] } | { __option: 'None' } }) =>
  decoded.extensions.__option === 'Some' ? decoded.extensions.value : [];
const find = <K extends Extension['__kind']>(extensions: Extension[], kind: K) =>
  extensions.find((e): e is Extract<Extension, { __kind: K }> => e.__kind === kind);

function referenceMint(account: RawAccount): MintState | null {
  if (!isTokenProgram(account.owner)) return null;
  const { data } = account;
  if (data.length !== 82 && (account.owner === TOKEN_PROGRAM_ADDRESS || data.length <= 165)) return null;
  let mint;
  try {
    mint = mintDecoder.decode(data);
  } catch {
    return null;
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

function referenceToken(account: RawAccount): TokenAccountState | null {
  if (!isTokenProgram(account.owner) || account.data.length < 165) return null;
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
    hasConfidentialBalance: confidential
      ? [confidential.pendingBalanceLow, confidential.pendingBalanceHigh, confidential.availableBalance].some((c) => c.some((b) => b !== 0))
      : false,
  };
}

// ---- random accounts ----

const extensionDecoder = getExtensionDecoder();
/** For each extension type, the smallest value length kit's decoder accepts (found once, from zeroed values). */
const valueLengths: number[] = [];
for (let type = 0; type <= 28; type++) {
  for (let length = 0; length <= 400; length++) {
    const entry = new Uint8Array(4 + length);
    new DataView(entry.buffer).setUint16(0, type, true);
    new DataView(entry.buffer).setUint16(2, length, true);
    try {
      extensionDecoder.decode(entry);
      valueLengths[type] = length;
      break;
    } catch {
      // too short for this type: try a longer value
    }
  }
}

/** One type-length-value entry: mostly well-formed (a known type, its length, random value bytes), sometimes not. */
const tlv = fc
  .tuple(
    // The types the readers look at (TransferFeeAmount, ConfidentialTransferAccount, NonTransferable,
    // PermanentDelegate, PausableConfig, PermissionedBurn) more often than the others.
    fc.oneof(fc.constantFrom(2, 5, 9, 12, 26, 28), fc.nat({ max: 31 })),
    fc.oneof({ arbitrary: fc.constant(true), weight: 5 }, { arbitrary: fc.constant(false), weight: 1 }),
    fc.nat({ max: 300 }),
    fc.uint8Array({ minLength: 300, maxLength: 300 }),
    fc.boolean(),
  )
  .map(([type, rightLength, otherLength, random, zeroValue]) => {
    const length = rightLength && valueLengths[type] !== undefined ? valueLengths[type] : otherLength;
    const entry = new Uint8Array(4 + length);
    new DataView(entry.buffer).setUint16(0, type, true);
    new DataView(entry.buffer).setUint16(2, length, true);
    // A quarter of the bytes 1: flags (PausableConfig.paused) are true only for exactly 1.
    if (!zeroValue) entry.set(random.subarray(0, length).map((b) => (b % 4 === 0 ? 1 : b)), 4);
    return entry;
  });

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/** A u32 COption tag: None, Some, or anything else (kit reads only 1 as Some). */
const optionTag = fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 0xffffffff }));

/** After the fixed layout: nothing, or an account-type byte (mostly the right one), entries, and sometimes a stray tail. */
const extensionArea = (accountType: number) =>
  fc.option(
    fc
      .tuple(fc.oneof({ arbitrary: fc.constant(accountType), weight: 4 }, { arbitrary: fc.nat({ max: 255 }), weight: 1 }), fc.array(tlv, { maxLength: 4 }), fc.uint8Array({ maxLength: 3 }), fc.boolean())
      .map(([type, entries, tail, withTail]) => concat([Uint8Array.of(type), ...entries, withTail ? tail : new Uint8Array(0)])),
    { nil: null },
  );

const program = fc.constantFrom(TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS, '11111111111111111111111111111111' as Address);
const addressDecoder = getAddressDecoder();
const address = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => addressDecoder.decode(bytes));

const tokenAccount = fc
  .record({
    address,
    owner: program,
    lamports: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    base: fc.uint8Array({ minLength: 165, maxLength: 165 }),
    // Leading zero bytes in the mint: base58's leading '1's.
    mintZeros: fc.nat({ max: 32 }),
    delegate: optionTag,
    state: fc.oneof(fc.constantFrom(0, 1, 2), fc.nat({ max: 255 })),
    isNative: optionTag,
    closeAuthority: optionTag,
    extensions: extensionArea(2),
  })
  .map(({ address, owner, lamports, base, mintZeros, delegate, state, isNative, closeAuthority, extensions }): RawAccount => {
    const view = new DataView(base.buffer, base.byteOffset);
    base.fill(0, 0, mintZeros);
    view.setUint32(72, delegate, true);
    base[108] = state;
    view.setUint32(109, isNative, true);
    view.setUint32(129, closeAuthority, true);
    return { address, owner, lamports, data: extensions ? concat([base, extensions]) : base };
  });

const mintAccount = fc
  .record({
    address: fc.oneof(address, fc.constantFrom(NATIVE_MINT, NATIVE_MINT_2022)),
    owner: program,
    base: fc.uint8Array({ minLength: 82, maxLength: 82 }),
    mintAuthority: optionTag,
    isInitialized: fc.oneof(fc.constant(1), fc.nat({ max: 255 })),
    freezeAuthority: optionTag,
    // The zero padding up to the account-type byte, sometimes not all zero; sometimes cut short.
    padding: fc.oneof(
      { arbitrary: fc.constant(new Uint8Array(83)), weight: 4 },
      { arbitrary: fc.tuple(fc.nat({ max: 82 }), fc.integer({ min: 1, max: 255 })).map(([at, byte]) => new Uint8Array(83).fill(byte, at, at + 1)), weight: 1 },
      { arbitrary: fc.uint8Array({ minLength: 0, maxLength: 83 }), weight: 1 },
    ),
    extensions: extensionArea(1),
  })
  .map(({ address, owner, base, mintAuthority, isInitialized, freezeAuthority, padding, extensions }): RawAccount => {
    const view = new DataView(base.buffer, base.byteOffset);
    view.setUint32(0, mintAuthority, true);
    base[45] = isInitialized;
    view.setUint32(46, freezeAuthority, true);
    return { address, owner, lamports: 1_461_600n, data: extensions ? concat([base, padding, extensions]) : base };
  });

describe('token state readers (against @solana-program/token-2022)', () => {
  it('read every token account as getTokenDecoder does', () => {
    fc.assert(
      fc.property(tokenAccount, (account) => {
        assert.deepEqual(decodeTokenAccount(account), referenceToken(account));
      }),
      { numRuns: 3000 },
    );
  });

  it('read every mint as getMintDecoder does', () => {
    fc.assert(
      fc.property(mintAccount, (account) => {
        assert.deepEqual(decodeMint(account), referenceMint(account));
      }),
      { numRuns: 3000 },
    );
  });

  it('meet the cases the random inputs must reach: decoded accounts with extensions, and nulls', () => {
    // Guards the generators: the properties above are worth little if every input decodes to null.
    const tokens = fc.sample(tokenAccount, { numRuns: 2000, seed: 1 }).map(decodeTokenAccount);
    const mints = fc.sample(mintAccount, { numRuns: 2000, seed: 1 }).map(decodeMint);
    assert.ok(tokens.some((t) => t === null));
    assert.ok(tokens.some((t) => t !== null && t.space > 165 && t.withheldAmount > 0n), 'a token account with a withheld transfer fee');
    assert.ok(tokens.some((t) => t?.hasConfidentialBalance), 'a token account with a confidential balance');
    assert.ok(tokens.some((t) => t?.closeAuthority !== null && t?.closeAuthority !== undefined));
    assert.ok(mints.some((m) => m === null));
    assert.ok(mints.some((m) => m?.permanentDelegate), 'a mint with a permanent delegate');
    assert.ok(mints.some((m) => m?.paused), 'a paused mint');
    assert.ok(mints.some((m) => m?.nonTransferable), 'a non-transferable mint');
    assert.ok(mints.some((m) => m?.permissionedBurn), 'a mint with a permissioned burn');
  });
});
