/**
 * createCinderClient: the client's methods over one transport (./http.ts), the wallet routes'
 * (./wallets.ts) and the operations' (./operations.ts), in one frozen object.
 */
import { createTransport } from './http.ts';
import { operationMethods } from './operations.ts';
import type { CinderClient, CinderClientOptions } from './types.ts';
import { walletMethods } from './wallets.ts';

/**
 * A client of the Cinder server at `options.baseUrl`. Its options are checked here: a wrong one is
 * a CinderApiError INVALID_ARGUMENT at once, not at the first call.
 *
 * @example
 * ```ts
 * import { createCinderClient } from '@cinder/client';
 *
 * const cinder = createCinderClient({
 *   baseUrl: 'http://127.0.0.1:8080',
 *   apiKey: process.env.CINDER_API_KEY,
 *   retry: { retries: 5, onRetry: ({ error, delayMs }) => console.warn(`${error.code}: retrying in ${delayMs} ms`) },
 * });
 * const { wallets } = await cinder.generateWallets(2);
 * ```
 */
export function createCinderClient(options: CinderClientOptions): CinderClient {
  const transport = createTransport(options);
  return Object.freeze({
    baseUrl: transport.baseUrl,
    ...walletMethods(transport),
    ...operationMethods(transport),
  } satisfies CinderClient);
}
