/** What the server tells the page, in <meta> tags of index.html (no inline script: the Content-Security-Policy forbids it). */
const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';

/** A public cluster gets explorer links; the embedded chain and unknown RPC providers none. */
export type Cluster = 'mainnet-beta' | 'devnet' | 'testnet' | null;
const cluster = meta('cinder-cluster');
export const CLUSTER: Cluster = cluster === 'mainnet-beta' || cluster === 'devnet' || cluster === 'testnet' ? cluster : null;

/** API_KEYS is set on the server: ask for a key before the first request. */
export const KEY_REQUIRED = meta('cinder-api-key') === 'required';

/** The server's limits on the generator's fields (MAX_WALLETS_PER_REQUEST and its kin), for each field's max. */
const limits = new Map(meta('cinder-limits').split(' ').map((pair) => pair.split('=') as [string, string]));
const limit = (name: string, fallback: number) => {
  const value = Number(limits.get(name));
  return Number.isInteger(value) && value > 0 ? value : fallback;
};
export const LIMITS = { wallets: limit('wallets', 10_000), mnemonicWallets: limit('mnemonic', 100), vanityLength: limit('vanity', 4) } as const;
