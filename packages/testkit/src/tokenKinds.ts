/**
 * Fixtures for the token account kinds real wallets hold: Token-2022 mints with extensions,
 * withheld transfer fees, wrapped SOL. All built with real instructions over the JSON-RPC, except
 * a confidential balance, which needs zero-knowledge proofs and is written with the local chain's
 * test-only `localnet_setAccount`.
 */
import { generateKeyPairSigner, getAddressEncoder, getBase64Decoder, getProgramDerivedAddress, type Address, type KeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  AccountState,
  extension,
  getInitializeMint2Instruction,
  getMintSize,
  getPostInitializeInstructionsForMintExtensions,
  getPreInitializeInstructionsForMintExtensions,
  getTokenDecoder,
  getTokenEncoder,
  getTransferCheckedWithFeeInstruction,
  TOKEN_2022_PROGRAM_ADDRESS,
  type ExtensionArgs,
} from '@solana-program/token-2022';
import { getApproveInstruction, getSyncNativeInstruction } from '@solana-program/token';
import { rpcResult } from './rawRpc.ts';
import { createAta, sendInstructions, type TestChain } from './localChain.ts';

export { TOKEN_2022_PROGRAM_ADDRESS };
/** Wrapped SOL's mint (the SPL Token program's native mint). */
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112' as Address;

/** A Token-2022 mint with the given extensions; `payer` is mint authority and extension authority. */
export async function createMint2022(
  chain: TestChain,
  payer: KeyPairSigner,
  options: { decimals?: number; extensions?: ExtensionArgs[]; freezeAuthority?: Address } = {},
): Promise<Address> {
  const mint = await generateKeyPairSigner();
  const extensions = options.extensions ?? [];
  // getMintSize([]) answers 166 (base + account type); a mint without extensions must be exactly 82 bytes.
  const space = BigInt(extensions.length > 0 ? getMintSize(extensions) : 82);
  const rent = await chain.rpc.getMinimumBalanceForRentExemption(space).send();
  await sendInstructions(chain, payer, [
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_2022_PROGRAM_ADDRESS }),
    ...getPreInitializeInstructionsForMintExtensions(mint.address, extensions),
    getInitializeMint2Instruction(
      { mint: mint.address, decimals: options.decimals ?? 6, mintAuthority: payer.address, freezeAuthority: options.freezeAuthority ?? null },
      { programAddress: TOKEN_2022_PROGRAM_ADDRESS },
    ),
    ...getPostInitializeInstructionsForMintExtensions(mint.address, payer, extensions),
  ]);
  return mint.address;
}

/** A transfer-fee extension of `basisPoints` with no cap, for `authority`. */
export function transferFeeExtension(authority: Address, basisPoints: number): ExtensionArgs {
  const fee = { epoch: 0n, maximumFee: 1_000_000_000_000n, transferFeeBasisPoints: basisPoints };
  return extension('TransferFeeConfig', {
    transferFeeConfigAuthority: authority,
    withdrawWithheldAuthority: authority,
    withheldAmount: 0n,
    olderTransferFee: fee,
    newerTransferFee: fee,
  });
}

export function defaultFrozenExtension(): ExtensionArgs {
  return extension('DefaultAccountState', { state: AccountState.Frozen });
}

export function nonTransferableExtension(): ExtensionArgs {
  return extension('NonTransferable', {});
}

export function permanentDelegateExtension(delegate: Address): ExtensionArgs {
  return extension('PermanentDelegate', { delegate });
}

/** TransferCheckedWithFee: leaves `fee` withheld in the destination account. */
export async function transferWithFee(
  chain: TestChain,
  owner: KeyPairSigner,
  mint: Address,
  source: Address,
  destination: Address,
  amount: bigint,
  fee: bigint,
  decimals = 6,
): Promise<void> {
  await sendInstructions(chain, owner, [
    getTransferCheckedWithFeeInstruction({ source, mint, destination, authority: owner, amount, decimals, fee }),
  ]);
}

/** Wraps `lamports` of the owner's SOL into its associated wrapped-SOL account. */
export async function wrapSol(chain: TestChain, owner: KeyPairSigner, lamports: bigint): Promise<Address> {
  const ata = await createAta(chain, owner, owner.address, NATIVE_MINT);
  await sendInstructions(chain, owner, [
    getTransferSolInstruction({ source: owner, destination: ata, amount: lamports }),
    getSyncNativeInstruction({ account: ata }),
  ]);
  return ata;
}

export async function approveDelegate(chain: TestChain, owner: KeyPairSigner, account: Address, delegate: Address, amount: bigint, tokenProgram?: Address) {
  await sendInstructions(chain, owner, [
    getApproveInstruction({ source: account, delegate, owner, amount }, tokenProgram ? { programAddress: tokenProgram } : {}),
  ]);
}

/**
 * Rewrites a Token-2022 account so it carries a ConfidentialTransferAccount extension, with a
 * non-zero available balance or with all balances zeroed. Creating one with instructions needs
 * zero-knowledge proofs (ConfigureAccount), which LiteSVM tests cannot produce; the program's
 * CloseAccount only reads the three ciphertexts, which is what this sets.
 */
export async function giveConfidentialExtension(chain: TestChain, account: Address, withBalance: boolean): Promise<void> {
  const info = await chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send();
  if (!info.value) throw new Error('account missing');
  const current = getTokenDecoder().decode(new Uint8Array(Buffer.from(info.value.data[0], 'base64')));
  const zero64 = new Uint8Array(64);
  const balance = withBalance ? new Uint8Array(64).fill(7) : zero64;
  const confidential = extension('ConfidentialTransferAccount', {
    approved: true,
    elgamalPubkey: account,
    pendingBalanceLow: zero64,
    pendingBalanceHigh: zero64,
    availableBalance: balance,
    decryptableAvailableBalance: new Uint8Array(36),
    allowConfidentialCredits: true,
    allowNonConfidentialCredits: true,
    pendingBalanceCreditCounter: 0n,
    maximumPendingBalanceCreditCounter: 65536n,
    expectedPendingBalanceCreditCounter: 0n,
    actualPendingBalanceCreditCounter: 0n,
  });
  const existing = current.extensions.__option === 'Some' ? current.extensions.value : [];
  const data = getTokenEncoder().encode({ ...current, extensions: [...existing, confidential] } as Parameters<ReturnType<typeof getTokenEncoder>['encode']>[0]);
  const lamports = await chain.rpc.getMinimumBalanceForRentExemption(BigInt(data.length)).send();
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [
    account,
    { lamports: Number(lamports), data: getBase64Decoder().decode(data), owner: TOKEN_2022_PROGRAM_ADDRESS, executable: false },
  ]);
}

/** The Metaplex Token Metadata program (not on the embedded chain: tests write its accounts directly). */
export const TOKEN_METADATA_PROGRAM = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s' as Address;

/** The Metaplex metadata account of `mint`: the PDA of ["metadata", program, mint] under the program. */
export async function metaplexMetadataAddress(mint: Address): Promise<Address> {
  const encoder = getAddressEncoder();
  const [address] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: ['metadata', encoder.encode(TOKEN_METADATA_PROGRAM), encoder.encode(mint)],
  });
  return address;
}

/**
 * A Metaplex metadata account (MetadataV1: key 4, update authority, mint, then name, symbol and uri,
 * each a u32 length and its bytes padded with NULs, as the program writes them) for `mint`, written
 * straight into the chain's state: the program is not on the embedded chain. The name may hold any
 * text (a scam token's bidi controls included) up to 32 bytes of UTF-8; the symbol up to 10.
 */
export async function writeMetaplexMetadata(chain: TestChain, mint: Address, name: string, symbol: string): Promise<void> {
  const padded = (text: string, size: number) => {
    const encoded = new TextEncoder().encode(text);
    if (encoded.length > size) throw new RangeError(`"${text}" is ${encoded.length} bytes of UTF-8; the field holds ${size}`);
    const bytes = new Uint8Array(4 + size);
    new DataView(bytes.buffer).setUint32(0, size, true);
    bytes.set(encoded, 4);
    return bytes;
  };
  const data = new Uint8Array(679);
  data[0] = 4;
  data.set(getAddressEncoder().encode((await generateKeyPairSigner()).address), 1);
  data.set(getAddressEncoder().encode(mint), 33);
  let offset = 65;
  for (const part of [padded(name, 32), padded(symbol, 10), padded('https://example.invalid/meta.json', 200)]) {
    data.set(part, offset);
    offset += part.length;
  }
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [
    await metaplexMetadataAddress(mint),
    { lamports: 5_616_720, data: getBase64Decoder().decode(data), owner: TOKEN_METADATA_PROGRAM },
  ]);
}
