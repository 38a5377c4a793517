/**
 * The test fixtures every package's tests share (one public entry): a funded local chain and
 * tokens of every kind on it, the service built in-process as src/server.ts builds it, a sponsor,
 * a real redis-server, raw JSON-RPC, wallet checks against independent implementations, sBPF
 * stand-ins for programs mainnet has and the guards browser wallets add.
 */
export * from './app.ts';
export * from './hdVectors.ts';
export * from './keys.ts';
export * from './localChain.ts';
export * from './rawRpc.ts';
export * from './redis.ts';
export * from './sponsor.ts';
export * from './tokenKinds.ts';
export * from './walletChecks.ts';
export * from './sbpf.ts';
export * from './walletGuards.ts';
export * from './testWallets.ts';
