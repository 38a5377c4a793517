/**
 * A real Wallet Standard wallet for browser tests: registered in the page before any of its
 * scripts run (`page.addInitScript`), announced the way @wallet-standard/wallet's registerWallet
 * does (the `wallet-standard:register-wallet` event, and an answer to `wallet-standard:app-ready`).
 * It connects with `standard:connect` and signs with `solana:signTransaction`, whose inputs go to
 * the test (`page.exposeFunction`), where a real ed25519 key signs the decoded transaction with
 * @solana/kit, exactly what a browser wallet does with the wire bytes it is given.
 */
import {
  getAddressEncoder,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  partiallySignTransaction,
  type KeyPairSigner,
} from '@solana/kit';
import type { Page } from 'playwright-core';
import { signAsWallet, type TestWalletKind, type WalletEdit } from '@cinder/testkit';

export const TEST_WALLET_NAME = 'Test Wallet';

export interface TestWallet {
  /** 'sign' (default) or 'refuse' (as a person who clicks "Reject" in the wallet). */
  mode: 'sign' | 'refuse';
  /** The inputs of every solana:signTransaction call, as base64 wire transactions. */
  calls: string[][];
  /** Runs before the wallet answers a call (once; cleared after): a person slow to approve, say. */
  beforeAnswer?: (() => Promise<void>) | undefined;
  /**
   * Changes the wallet makes before signing, as Phantom, Solflare or Seeker do (testkit's
   * testWallets.ts): undefined signs exactly what it is given. `floor` is the lower bound its
   * guards assert on the fee payer's lamports.
   */
  changes?: { kind: TestWalletKind | WalletEdit; floor: bigint } | undefined;
}

/**
 * The wallet's code in the page, as plain JavaScript source: a function of this file would reach
 * the page through Function.prototype.toString, with whatever helpers the TypeScript loader
 * inserted into it.
 */
const REGISTER_IN_PAGE = `
(({ address, publicKey, name, versions }) => {
  const toBase64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
  const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const chains = ['solana:mainnet', 'solana:devnet', 'solana:testnet', 'solana:localnet'];
  const account = Object.freeze({ address, publicKey: new Uint8Array(publicKey), chains, features: ['solana:signTransaction'] });
  const icon = 'data:image/svg+xml;base64,' + btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#3b5bdb"/><path d="M9 16h14M16 9v14" stroke="#fff" stroke-width="4"/></svg>');
  let accounts = [];
  const wallet = {
    version: '1.0.0',
    name,
    icon,
    chains,
    get accounts() { return accounts; },
    features: {
      'standard:connect': { version: '1.0.0', connect: async () => { accounts = [account]; return { accounts }; } },
      'standard:events': { version: '1.0.0', on: () => () => {} },
      'solana:signTransaction': {
        version: '1.0.0',
        supportedTransactionVersions: Object.freeze(versions),
        signTransaction: async (...inputs) => {
          if (inputs.some((input) => input.account.address !== address)) throw new Error('Unknown account');
          const signed = await window.cinderTestWalletSign(inputs.map((input) => toBase64(input.transaction)));
          return signed.map((wire) => ({ signedTransaction: fromBase64(wire) }));
        },
      },
    },
  };
  const callback = ({ register }) => register(wallet);
  window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
  window.addEventListener('wallet-standard:app-ready', (event) => callback(event.detail));
})`;

/**
 * Installs the wallet of `signer` in `page` (before navigation). `versions`: what its
 * solana:signTransaction declares in `supportedTransactionVersions` (default legacy and 0, as most
 * wallets today; [..., 1] as a wallet on wallet-standard-features 1.5.0 that signs v1).
 */
export async function installTestWallet(page: Page, signer: KeyPairSigner, versions: readonly ('legacy' | 0 | 1)[] = ['legacy', 0]): Promise<TestWallet> {
  const state: TestWallet = { mode: 'sign', calls: [] };
  await page.exposeFunction('cinderTestWalletSign', async (inputs: string[]) => {
    state.calls.push(inputs);
    const beforeAnswer = state.beforeAnswer;
    state.beforeAnswer = undefined;
    await beforeAnswer?.();
    if (state.mode === 'refuse') throw new Error('User rejected the request.');
    const signed: string[] = [];
    for (const wire of inputs) {
      if (state.changes) {
        signed.push(await signAsWallet(state.changes.kind, wire, [signer.keyPair], state.changes.floor));
        continue;
      }
      const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
      const withOwner = await partiallySignTransaction([signer.keyPair], transaction);
      signed.push(getBase64Decoder().decode(getTransactionEncoder().encode(withOwner)));
    }
    return signed;
  });
  const settings = { address: signer.address, publicKey: [...getAddressEncoder().encode(signer.address)], name: TEST_WALLET_NAME, versions };
  await page.addInitScript(`${REGISTER_IN_PAGE}(${JSON.stringify(settings)});`);
  return state;
}
