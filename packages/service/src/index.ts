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
export { createWalletGenerator, type GeneratedWallets } from './wallets/index.ts';

export type { PreviewQuerySchema } from './http/routes/reclaimRent.ts';
export type { PreviewSchema } from './http/routes/operationSchemas.ts';
export type { PrepareReclaimRequestSchema, PrepareResponseSchema } from './http/routes/prepare.ts';
export type { RelayRequestSchema, RelayResponseSchema } from './http/routes/relayTransactions.ts';
export type { TransactionStatusSchema } from './http/routes/transactions.ts';
export type { GenerateWalletsResponseSchema, generateWalletsQuerySchema } from './http/routes/generateWallets.ts';

// Until the client derives wallets with a library of its own (issue 23: the client imports nothing of the service at run time).
export { base58Encode } from './keys/base58.ts';
export { accountPath, accountSeedInto, generateMnemonic, MAX_ACCOUNT_INDEX, mnemonicToSeed, solanaParentNode, type DerivationScheme, type MnemonicWords } from './wallets/mnemonic.ts';
