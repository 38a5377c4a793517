/** What the server tells the page, in <meta> tags of index.html (no inline script: the Content-Security-Policy forbids it). */
const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';

/** A public cluster gets explorer links; the embedded chain and unknown RPC providers none. */
export type Cluster = 'mainnet-beta' | 'devnet' | 'testnet' | null;
const cluster = meta('cinder-cluster');
export const CLUSTER: Cluster = cluster === 'mainnet-beta' || cluster === 'devnet' || cluster === 'testnet' ? cluster : null;

/** API_KEYS is set on the server: ask for a key before the first request. */
export const KEY_REQUIRED = meta('cinder-api-key') === 'required';
