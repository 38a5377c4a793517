/**
 * Wallets for the many-wallets tests and benchmark: owners with no SOL holding empty token accounts,
 * made by a funded payer a few owners per transaction, and the signing of a prepared multi-owner
 * transaction by the test's own keys (as `cinder reclaim --keys-file` does on the user's machine).
 */
import {
  createKeyPairSignerFromBytes,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { getLamports, sendInstructions, type TestChain } from '../helpers/localChain.ts';
import { createTestKey, type TestKey } from '../helpers/keys.ts';

export interface ManyWallet {
  key: TestKey;
  signer: KeyPairSigner;
  /** Its token accounts, in the order of the mints given. */
  accounts: Address[];
}

/** Owners per account-creating transaction (a few ATA creations fit one transaction). */
const OWNERS_PER_SETUP = 3;

/** `count` wallets with no SOL, each with an empty associated account of every mint in `mints`. */
export async function createEmptyWallets(
  chain: TestChain,
  payer: KeyPairSigner,
  count: number,
  mints: readonly { mint: Address; tokenProgram?: Address }[],
): Promise<ManyWallet[]> {
  const wallets: ManyWallet[] = [];
  for (let i = 0; i < count; i++) {
    const key = await createTestKey();
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    const accounts = await Promise.all(
      mints.map(async ({ mint, tokenProgram = TOKEN_PROGRAM_ADDRESS }) => (await findAssociatedTokenPda({ owner: signer.address, mint, tokenProgram }))[0]),
    );
    wallets.push({ key, signer, accounts });
  }
  for (let i = 0; i < wallets.length; i += OWNERS_PER_SETUP) {
    const group = wallets.slice(i, i + OWNERS_PER_SETUP);
    await sendInstructions(
      chain,
      payer,
      group.flatMap((w) =>
        mints.map(({ mint, tokenProgram = TOKEN_PROGRAM_ADDRESS }, m) =>
          getCreateAssociatedTokenIdempotentInstruction({ payer, ata: w.accounts[m]!, owner: w.signer.address, mint, tokenProgram }),
        ),
      ),
    );
  }
  return wallets;
}

/** The lamports each address holds now. */
export const balancesOf = (chain: TestChain, addresses: readonly Address[]) => Promise.all(addresses.map((a) => getLamports(chain, a)));

export const sum = (values: readonly bigint[]) => values.reduce((s, v) => s + v, 0n);

/** A prepared transaction (base64, signatures zeroed) signed by those of `signers` it names. */
export async function signPrepared(wire: string, signers: readonly KeyPairSigner[]): Promise<string> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const needed = signers.filter((s) => s.address in transaction.signatures);
  return getBase64EncodedWireTransaction(await partiallySignTransaction(needed.map((s) => s.keyPair), transaction));
}
