/** The method table served over HTTP: cluster/clock methods here, the rest by topic. */
import type { Chain } from './chain.ts';
import { LAMPORTS_PER_SIGNATURE } from './fees.ts';
import { DEFAULT_INFLATION, inflationRate } from './inflation.ts';
import {
  addressParam,
  arrayParam,
  boolOption,
  checkContext,
  commitmentOption,
  configParam,
  hashParam,
  refuseExtraParams,
  requireParam,
  u64Param,
} from './params.ts';
import { blockMethods } from './rpcBlockMethods.ts';
import { invalidParams, RpcError, RpcErrorCode } from './rpcErrors.ts';
import { accountMethods } from './rpcAccountMethods.ts';
import { FEATURE_SET, SOLANA_CORE_VERSION, withContext, type RpcHandler, type RpcMethodTable } from './rpcContext.ts';
import { stakeMethods } from './rpcStakeMethods.ts';
import { testMethods } from './rpcTestMethods.ts';
import type { FaultController } from './faults.ts';
import type { Faucet } from './faucet.ts';
import { transactionMethods } from './rpcTransactionMethods.ts';

const MAX_SLOT_LEADERS = 5000;
/** The stake of a test validator's bootstrap vote account (agave's `--bootstrap-validator-stake` default). */
const VOTE_ACCOUNT_STAKE = 500_000_000_000n;
const MAX_INFLATION_REWARD_ADDRESSES = 100;

export interface Endpoints {
  /** host:port of the JSON-RPC and PubSub servers, for getClusterNodes. */
  rpc: string;
  pubsub: string;
}

function clusterMethods(chain: Chain, endpoints: () => Endpoints | null): RpcMethodTable {
  /** Checks the config's commitment and minContextSlot; returns the slot that commitment sees. */
  const read = (params: unknown[], index: number): number => {
    const config = configParam(params, index);
    checkContext(chain, config);
    return chain.slotAt(commitmentOption(config));
  };
  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': SOLANA_CORE_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => chain.clusterGenesisHash,
    getIdentity: () => ({ identity: chain.identity }),
    getSlot(params) {
      return read(params, 0);
    },
    // Block heights equal slots here (slots a warp jumps over still count).
    getBlockHeight(params) {
      return read(params, 0);
    },
    getTransactionCount(params) {
      read(params, 0);
      return chain.processedTransactionCount;
    },
    getEpochInfo(params) {
      const slot = read(params, 0);
      const { epoch, slotIndex, slotsInEpoch } = chain.epochInfo(slot);
      return {
        absoluteSlot: slot,
        blockHeight: slot,
        epoch,
        slotIndex,
        slotsInEpoch,
        transactionCount: chain.processedTransactionCount,
      };
    },
    getLatestBlockhash(params) {
      const config = configParam(params, 0);
      checkContext(chain, config);
      return withContext(chain, chain.latestBlockhash(commitmentOption(config)));
    },
    isBlockhashValid(params) {
      const blockhash = hashParam(requireParam(params, 0, 'blockhash'));
      read(params, 1);
      return withContext(chain, chain.isBlockhashValid(blockhash));
    },
    // Removed from agave in 2.0 (getFeeForMessage replaces it), yet web3.js v1 still calls it:
    // answered as agave 1.18 answered it, the fee per signature while the blockhash is recent,
    // else null. Its second param was a bare commitment config then (no minContextSlot).
    getFeeCalculatorForBlockhash(params) {
      const blockhash = hashParam(requireParam(params, 0, 'blockhash'));
      refuseExtraParams(params, 1, 2);
      commitmentOption(configParam(params, 1));
      return withContext(chain, chain.isBlockhashValid(blockhash) ? { feeCalculator: { lamportsPerSignature: LAMPORTS_PER_SIGNATURE } } : null);
    },
    getEpochSchedule() {
      const schedule = chain.svm.getEpochSchedule();
      return {
        slotsPerEpoch: schedule.slotsPerEpoch,
        leaderScheduleSlotOffset: schedule.leaderScheduleSlotOffset,
        warmup: schedule.warmup,
        firstNormalEpoch: schedule.firstNormalEpoch,
        firstNormalSlot: schedule.firstNormalSlot,
      };
    },
    getSupply(params) {
      const config = configParam(params, 0);
      checkContext(chain, config);
      boolOption(config, 'excludeNonCirculatingAccountsList', false);
      // No lamports are locked away on a local chain: all of the supply circulates.
      const total = chain.capitalization;
      return withContext(chain, { total, circulating: total, nonCirculating: 0n, nonCirculatingAccounts: [] });
    },
    // One validator (this chain's identity) leads every slot and holds all the stake.
    getSlotLeader(params) {
      read(params, 0);
      return chain.identity;
    },
    getSlotLeaders(params) {
      u64Param(requireParam(params, 0, 'start slot'), 'start slot');
      const limit = Number(u64Param(requireParam(params, 1, 'limit'), 'limit'));
      if (limit > MAX_SLOT_LEADERS) throw invalidParams(`Invalid limit; max ${MAX_SLOT_LEADERS}`);
      return Array.from({ length: limit }, () => chain.identity);
    },
    getLeaderSchedule(params) {
      // [slot?, config?]; the slot may be null, or left out with the config first.
      const explicitSlot = typeof params[0] === 'number' || typeof params[0] === 'string';
      const configIndex = explicitSlot || params[0] === null ? 1 : 0;
      const config = configParam(params, configIndex);
      const slot = explicitSlot ? Number(u64Param(params[0], 'slot')) : read(params, configIndex);
      if (config.identity !== undefined && config.identity !== null) {
        const identity = addressParam(config.identity);
        if (identity !== chain.identity) return {};
      }
      const { epoch, slotsInEpoch } = chain.epochInfo(slot);
      // As on the validator: the schedule is known up to the epoch after the current one.
      if (epoch > chain.epochInfo().epoch + 1n) return null;
      return { [chain.identity]: Array.from({ length: Number(slotsInEpoch) }, (_, i) => i) };
    },
    getClusterNodes() {
      const where = endpoints();
      return [{
        pubkey: chain.identity,
        gossip: null,
        tvu: null,
        tpu: null,
        tpuQuic: null,
        tpuForwards: null,
        tpuForwardsQuic: null,
        tpuVote: null,
        serveRepair: null,
        rpc: where?.rpc ?? null,
        pubsub: where?.pubsub ?? null,
        version: SOLANA_CORE_VERSION,
        featureSet: FEATURE_SET,
        shredVersion: 0,
      }];
    },
    // A test validator votes with one vote account, which holds all the stake. No vote
    // transactions run here, so its credits and last vote are those a vote in every slot gives.
    getVoteAccounts(params) {
      const config = configParam(params, 0);
      checkContext(chain, config);
      const slot = chain.slotAt(commitmentOption(config));
      for (const key of ['votePubkey'] as const) if (config[key] !== undefined && config[key] !== null) addressParam(config[key]);
      boolOption(config, 'keepUnstakedDelinquents', false);
      if (config.votePubkey !== undefined && config.votePubkey !== null && config.votePubkey !== chain.votePubkey) return { current: [], delinquent: [] };
      const { epoch } = chain.epochInfo(slot);
      return {
        current: [{
          votePubkey: chain.votePubkey,
          nodePubkey: chain.identity,
          activatedStake: VOTE_ACCOUNT_STAKE,
          epochVoteAccount: true,
          commission: 0,
          lastVote: slot,
          epochCredits: [[Number(epoch), slot, 0]],
          rootSlot: chain.finalizedSlot,
        }],
        delinquent: [],
      };
    },
    // [config?]: { commitment, range: { firstSlot, lastSlot? }, identity }; the leader of every
    // slot is this chain's identity, and the slots without a block are those a warp skipped.
    getBlockProduction(params) {
      const config = configParam(params, 0);
      checkContext(chain, config);
      const slot = chain.slotAt(commitmentOption(config));
      const range = config.range as { firstSlot?: unknown; lastSlot?: unknown } | undefined | null;
      const firstSlot = range ? Number(u64Param(requireParam([range.firstSlot], 0, 'firstSlot'), 'firstSlot')) : slot - Number(chain.epochInfo(slot).slotIndex);
      const lastSlot = range?.lastSlot !== undefined && range.lastSlot !== null ? Number(u64Param(range.lastSlot, 'lastSlot')) : slot;
      if (lastSlot > slot) throw invalidParams(`lastSlot, ${lastSlot}, cannot be greater than current slot, ${slot}`);
      if (firstSlot > lastSlot) throw invalidParams(`lastSlot, ${lastSlot}, cannot be less than firstSlot, ${firstSlot}`);
      const identity = config.identity === undefined || config.identity === null ? null : addressParam(config.identity);
      const leaderSlots = lastSlot - firstSlot + 1;
      // Slots older than the blocks kept were produced (a warp skips only recent ones).
      const kept = chain.firstAvailableBlock;
      const produced = Math.max(0, Math.min(lastSlot + 1, kept) - firstSlot) + chain.blockSlots(Math.max(firstSlot, kept), lastSlot, Number.MAX_SAFE_INTEGER).length;
      const byIdentity = identity === null || identity === chain.identity ? { [chain.identity]: [leaderSlots, produced] } : {};
      return withContext(chain, { byIdentity, range: { firstSlot, lastSlot } });
    },
    getInflationReward(params) {
      const addresses = arrayParam(requireParam(params, 0, 'addresses'), 'addresses', MAX_INFLATION_REWARD_ADDRESSES).map(addressParam);
      const config = configParam(params, 1);
      checkContext(chain, config);
      if (config.epoch !== undefined && config.epoch !== null) u64Param(config.epoch, 'epoch');
      return addresses.map(() => null);
    },
    // [config?]: only { commitment }; the schedule is the same at every commitment.
    getInflationGovernor(params) {
      refuseExtraParams(params, 0, 1);
      commitmentOption(configParam(params, 0));
      return { ...DEFAULT_INFLATION };
    },
    // No params; the validator answers for the epoch of its finalized bank (the default commitment).
    getInflationRate(params) {
      refuseExtraParams(params, 0, 0);
      return inflationRate(chain.epochSchedule, chain.epochInfo(chain.finalizedSlot).epoch);
    },
    // The chain starts empty and keeps nothing on disk, so it never has a snapshot archive: the
    // validator's answer when it has none (no snapshot config, or no full snapshot archive yet).
    getHighestSnapshotSlot(params) {
      refuseExtraParams(params, 0, 0);
      throw new RpcError(RpcErrorCode.NO_SNAPSHOT, 'No snapshot');
    },
    getStakeMinimumDelegation(params) {
      read(params, 0);
      return withContext(chain, chain.stakeMinimumDelegation());
    },
    minimumLedgerSlot() {
      return chain.firstAvailableBlock;
    },
    getMaxRetransmitSlot() {
      return chain.slot;
    },
    getMaxShredInsertSlot() {
      return chain.slot;
    },
  };
}

export function createRpcMethods(
  chain: Chain,
  options: { testMode: boolean; faucet: Faucet; faults?: FaultController | undefined; endpoints?: () => Endpoints | null },
): ReadonlyMap<string, RpcHandler> {
  const table: RpcMethodTable = {
    ...clusterMethods(chain, options.endpoints ?? (() => null)),
    ...accountMethods(chain),
    ...transactionMethods(chain, options.faucet, options.faults?.holdSend),
    ...blockMethods(chain),
    ...stakeMethods(chain),
    // Absent (→ "Method not found") unless the chain was started in test mode.
    ...(options.testMode ? testMethods(chain, options.faults) : {}),
  };
  // Every request first brings the slot up to the wall clock, so an answer never lags the clock
  // even when the event loop was too busy to run the slot timer on time.
  return new Map(Object.entries(table).map(([name, handler]) => [name, (params: unknown[]) => {
    chain.tick();
    return handler(params);
  }]));
}
