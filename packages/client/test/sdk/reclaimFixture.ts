/**
 * Wallets to reclaim, built on the embedded chain with real instructions, for the SDK and CLI tests
 * of the whole-wallet reclaim and the keyless prepare → sign → relay path; and the wallet's side of
 * that path (decode the prepared wire transaction, sign it with @solana/kit, encode it again).
 */
import {
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { getInitializeAccount3Instruction, getTokenSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { NATIVE_MINT } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, freezeTokenAccount, getLamports, mintTokens, sendInstructions, type TestChain } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS } from '@cinder/testkit';

export interface ReclaimWallet {
  signer: KeyPairSigner;
  secretKey: Uint8Array;
  /** base58 of the 64-byte secret key. */
  key: string;
  /** Accounts a default reclaim closes (empty ones of both programs, the empty wrapped-SOL account). */
  closable: Address[];
  /** An empty account frozen by its mint's freeze authority: skipped with ACCOUNT_FROZEN. */
  frozen: Address | null;
  /** An account with a balance: kept by default, burned and closed when its mint is listed in `burn`. */
  kept: { account: Address; mint: Address } | null;
}

/**
 * `n` empty token accounts of `mint` owned by `owner`, at fresh addresses (not associated), four
 * per transaction: a wallet full of the empty accounts that airdrops and trades leave behind.
 */
export async function emptyAccounts(chain: TestChain, payer: KeyPairSigner, owner: Address, mint: Address, n: number, tokenProgram: Address = TOKEN_PROGRAM_ADDRESS): Promise<Address[]> {
  const space = BigInt(getTokenSize());
  const rent = await chain.rpc.getMinimumBalanceForRentExemption(space).send();
  const made: Address[] = [];
  for (let i = 0; i < n; i += 4) {
    const accounts = await Promise.all(Array.from({ length: Math.min(4, n - i) }, () => generateKeyPairSigner()));
    await sendInstructions(
      chain,
      payer,
      accounts.flatMap((account) => [
        getCreateAccountInstruction({ payer, newAccount: account, lamports: rent, space, programAddress: tokenProgram }),
        getInitializeAccount3Instruction({ account: account.address, mint, owner }, { programAddress: tokenProgram }),
      ]),
    );
    made.push(...accounts.map((a) => a.address));
  }
  return made;
}

/**
 * A wallet with SOL and: `classic` empty SPL Token accounts, `token2022` empty Token-2022 accounts
 * (associated, so with the ImmutableOwner extension: 170 bytes and more rent), an empty
 * wrapped-SOL account, optionally a frozen empty account and an account holding 5 tokens.
 */
export async function walletToReclaim(
  chain: TestChain,
  options: { classic?: number; token2022?: boolean; wrappedSol?: boolean; frozen?: boolean; kept?: boolean; lamports?: bigint } = {},
): Promise<ReclaimWallet> {
  const { signer, secretKey } = await createFundedSigner(chain, options.lamports ?? 10_000_000_000n);
  const closable: Address[] = [];
  const mint = await createTestMint(chain, signer, { decimals: 6, freezeAuthority: signer.address });
  closable.push(...(await emptyAccounts(chain, signer, signer.address, mint, options.classic ?? 3)));
  if (options.token2022 ?? true) {
    const mint2022 = await createMint2022(chain, signer, { decimals: 6 });
    closable.push(await createAta(chain, signer, signer.address, mint2022, TOKEN_2022_PROGRAM_ADDRESS));
  }
  if (options.wrappedSol ?? true) closable.push(await createAta(chain, signer, signer.address, NATIVE_MINT));
  let frozen: Address | null = null;
  if (options.frozen ?? true) {
    frozen = await createAta(chain, signer, signer.address, mint);
    await freezeTokenAccount(chain, signer, frozen, mint);
  }
  let kept: ReclaimWallet['kept'] = null;
  if (options.kept ?? true) {
    const keptMint = await createTestMint(chain, signer, { decimals: 6 });
    const account = await createAta(chain, signer, signer.address, keptMint);
    await mintTokens(chain, signer, keptMint, account, 5_000_000n);
    kept = { account, mint: keptMint };
  }
  return { signer, secretKey, key: getBase58Decoder().decode(secretKey), closable, frozen, kept };
}

/** The sum of the accounts' lamports as the chain holds them now: what closing them returns. */
export async function lamportsOf(chain: TestChain, accounts: readonly Address[]): Promise<bigint> {
  let sum = 0n;
  for (const account of accounts) sum += await getLamports(chain, account);
  return sum;
}

/** Accounts among these that still exist. */
export async function stillOpen(chain: TestChain, accounts: readonly Address[]): Promise<Address[]> {
  const open: Address[] = [];
  for (const account of accounts) if ((await getLamports(chain, account)) > 0n) open.push(account);
  return open;
}

/**
 * What a wallet does with a prepared transaction: decode the base64 wire bytes, add its signature
 * (kit checks that the key is one of the message's signers), encode it again. Partially: a
 * sponsored transaction's fee payer slot is the service's to fill.
 */
export async function signPrepared(transactions: readonly string[], signer: KeyPairSigner): Promise<string[]> {
  const decoder = getTransactionDecoder();
  const base64 = getBase64Encoder();
  return Promise.all(
    transactions.map(async (wire) => getBase64EncodedWireTransaction(await partiallySignTransaction([signer.keyPair], decoder.decode(base64.encode(wire))))),
  );
}
