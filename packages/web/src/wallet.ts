/**
 * Browser wallets through the Wallet Standard: every wallet that registers itself (Phantom,
 * Solflare, Backpack, …) and can connect and sign Solana transactions. The page hands the wallet
 * wire bytes and gets signed wire bytes back; no key ever reaches the page.
 */
import { getWallets } from '@wallet-standard/app';
import type { IdentifierString, Wallet, WalletAccount } from '@wallet-standard/base';
import { StandardConnect, type StandardConnectFeature } from '@wallet-standard/features';
import { SolanaSignTransaction, type SolanaSignTransactionFeature } from '@solana/wallet-standard-features';

export type SigningWallet = Wallet & { features: StandardConnectFeature & SolanaSignTransactionFeature };

export function canSign(wallet: Wallet): wallet is SigningWallet {
  return StandardConnect in wallet.features && SolanaSignTransaction in wallet.features && wallet.chains.some((chain) => chain.startsWith('solana:'));
}

/** Calls `onChange` with the wallets that can sign now and whenever one registers or leaves; returns the unsubscribe. */
export function watchWallets(onChange: (wallets: SigningWallet[]) => void): () => void {
  const registry = getWallets();
  const publish = () => onChange(registry.get().filter(canSign));
  const offRegister = registry.on('register', publish);
  const offUnregister = registry.on('unregister', publish);
  publish();
  return () => {
    offRegister();
    offUnregister();
  };
}

/** A transaction version as the API's `transactionVersions` names it. */
export type TransactionVersion = 'legacy' | 0 | 1;

/**
 * The transaction versions the wallet signs, read at run time from the very feature the page calls
 * (solana:signTransaction's `supportedTransactionVersions`; 1 since wallet-standard-features 1.5.0):
 * the server packs v1 only for a wallet that declares 1, and legacy otherwise. A wallet that
 * declares nothing the API knows gets the API's default (legacy and 0).
 */
export function transactionVersionsOf(wallet: SigningWallet): TransactionVersion[] | undefined {
  const declared: readonly unknown[] = wallet.features[SolanaSignTransaction].supportedTransactionVersions ?? [];
  const known = [...new Set(declared.filter((v): v is TransactionVersion => v === 'legacy' || v === 0 || v === 1))];
  return known.length > 0 ? known : undefined;
}

/** standard:connect; the first Solana account the wallet grants. */
export async function connect(wallet: SigningWallet): Promise<WalletAccount> {
  const { accounts } = await wallet.features[StandardConnect].connect();
  const account = accounts.find((a) => a.chains.some((chain) => chain.startsWith('solana:'))) ?? accounts[0];
  if (!account) throw new Error(`${wallet.name} did not share an account.`);
  return account;
}

/**
 * One solana:signTransaction call with every transaction (the wallet shows one approval for all,
 * where it can), the wire bytes returned in the same order.
 */
export async function signAll(wallet: SigningWallet, account: WalletAccount, transactions: Uint8Array[], chain: IdentifierString | null): Promise<Uint8Array[]> {
  const inputs = transactions.map((transaction) => ({ account, transaction, ...(chain ? { chain } : {}) }));
  const outputs = await wallet.features[SolanaSignTransaction].signTransaction(...inputs);
  if (outputs.length !== transactions.length) throw new Error(`${wallet.name} returned ${outputs.length} of ${transactions.length} transactions.`);
  return outputs.map((output) => output.signedTransaction);
}
