/** The first screen: the browser wallets to connect, and for a visitor without one, an address to look at (read-only). */
import { useEffect, useState } from 'preact/hooks';
import type { WalletAccount } from '@wallet-standard/base';
import { connect, watchWallets, type SigningWallet } from './wallet.ts';

export function WalletPicker({
  onConnected,
  onWatch,
}: {
  onConnected: (wallet: SigningWallet, account: WalletAccount) => void;
  onWatch: (address: string) => void;
}) {
  const [wallets, setWallets] = useState<SigningWallet[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [address, setAddress] = useState('');
  useEffect(() => watchWallets(setWallets), []);
  return (
    <>
      <section class="panel" aria-labelledby="pick-title">
        <h1 id="pick-title">Reclaim the rent of your empty token accounts</h1>
        <p>
          Every token account holds about 0.002 SOL of rent. Connect your wallet to see what closing its empty accounts returns; your wallet signs, Cinder never
          sees a private key.
        </p>
        {wallets.length === 0 ? (
          <p class="notice">No browser wallet found. Install or unlock a Solana wallet (Phantom, Solflare, Backpack, …) and reload this page.</p>
        ) : (
          <ul class="wallets">
            {wallets.map((wallet) => (
              <li key={wallet.name}>
                <button
                  type="button"
                  class="wallet"
                  disabled={busy !== null}
                  onClick={async () => {
                    setBusy(wallet.name);
                    setError(null);
                    try {
                      onConnected(wallet, await connect(wallet));
                    } catch (e) {
                      setError(`${wallet.name} did not connect${e instanceof Error && e.message ? `: ${e.message}` : ''}.`);
                    } finally {
                      setBusy(null);
                    }
                  }}
                >
                  <img src={wallet.icon} alt="" width={32} height={32} />
                  <span>{busy === wallet.name ? `Connecting to ${wallet.name}…` : `Connect ${wallet.name}`}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
      </section>
      <section class="panel" aria-labelledby="watch-title">
        <h2 id="watch-title">Or look at any wallet, read-only</h2>
        <form
          class="row watch"
          onSubmit={(event) => {
            event.preventDefault();
            if (address.trim()) onWatch(address.trim());
          }}
        >
          <label for="watch-address">Wallet address</label>
          <input
            id="watch-address"
            type="text"
            autocomplete="off"
            spellcheck={false}
            minLength={32}
            maxLength={44}
            pattern="[1-9A-HJ-NP-Za-km-z]{32,44}"
            title="A Solana address: 32 to 44 base58 characters"
            required
            value={address}
            onInput={(event) => setAddress(event.currentTarget.value)}
          />
          <button type="submit">See its accounts</button>
        </form>
        <p class="muted">No wallet needed: you see what a reclaim would do; only the wallet’s owner can do it.</p>
      </section>
    </>
  );
}
