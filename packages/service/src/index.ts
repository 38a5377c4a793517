/**
 * The service's public entry (`@cinder/service`): what another package may use.
 * - To run the service in-process (tests, an embedding): `buildApp(deps)` and the makers of its
 *   dependencies, as src/server.ts does.
 * - The API's shapes, for the SDK and the web app (types only: they import nothing of the service
 *   at run time).
 */
export { buildApp, type AppDeps, type CinderApp } from './app.ts';
export { createChainAdapter, type ChainAdapterOptions } from './chain/chainAdapter.ts';
export type { ChainAdapter } from './chain/types.ts';
export { ConfigError, loadConfig, type Config } from './config.ts';
export { createLogger } from './logger.ts';
export { loadSponsor, type Sponsor } from './keys/sponsor.ts';
export { createWalletGenerator, walletGeneratorOptions, type GeneratedWallets } from './wallets/index.ts';

// The API's request and answer types, from the route schemas (src/api.ts).
export type * from './api.ts';
