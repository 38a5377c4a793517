/** The method table served over HTTP: cluster/clock methods here, the rest by topic. */
import type { Chain } from './chain.ts';
import { checkContext, configParam, hashParam, requireParam } from './params.ts';
import { accountMethods } from './rpcAccountMethods.ts';
import { FEATURE_SET, SOLANA_CORE_VERSION, withContext, type RpcHandler, type RpcMethodTable } from './rpcContext.ts';
import { testMethods } from './rpcTestMethods.ts';
import type { FaultController } from './faults.ts';
import { transactionMethods } from './rpcTransactionMethods.ts';

function clusterMethods(chain: Chain): RpcMethodTable {
  const read = (params: unknown[], index: number) => checkContext(chain, configParam(params, index));
  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': SOLANA_CORE_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => chain.genesisHash,
    getIdentity: () => ({ identity: chain.identity }),
    getSlot(params) {
      read(params, 0);
      return chain.slot;
    },
    getBlockHeight(params) {
      read(params, 0);
      return chain.blockHeight;
    },
    getTransactionCount(params) {
      read(params, 0);
      return chain.processedTransactionCount;
    },
    getEpochInfo(params) {
      read(params, 0);
      const { epoch, slotIndex, slotsInEpoch } = chain.epochInfo();
      return {
        absoluteSlot: chain.slot,
        blockHeight: chain.blockHeight,
        epoch,
        slotIndex,
        slotsInEpoch,
        transactionCount: chain.processedTransactionCount,
      };
    },
    getLatestBlockhash(params) {
      read(params, 0);
      return withContext(chain, chain.latestBlockhash());
    },
    isBlockhashValid(params) {
      const blockhash = hashParam(requireParam(params, 0, 'blockhash'));
      read(params, 1);
      return withContext(chain, chain.isBlockhashValid(blockhash));
    },
  };
}

export function createRpcMethods(chain: Chain, options: { testMode: boolean; faults?: FaultController | undefined }): ReadonlyMap<string, RpcHandler> {
  return new Map(Object.entries({
    ...clusterMethods(chain),
    ...accountMethods(chain),
    ...transactionMethods(chain),
    // Absent (→ "Method not found") unless the chain was started in test mode.
    ...(options.testMode ? testMethods(chain, options.faults) : {}),
  }));
}
