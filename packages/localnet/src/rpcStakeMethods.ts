/**
 * getStakeActivation, removed from agave in 2.0 but still called by web3.js v1
 * (`Connection.getStakeActivation`): answered as agave 1.18 answered it.
 */
import { address } from '@solana/kit';
import type { Chain } from './chain.ts';
import { addressParam, checkContext, commitmentOption, configParam, refuseExtraParams, requireParam, u64Param } from './params.ts';
import { invalidParams } from './rpcErrors.ts';
import type { RpcMethodTable } from './rpcContext.ts';

const STAKE_PROGRAM = 'Stake11111111111111111111111111111111111111';
const U64_MAX = 0xffff_ffff_ffff_ffffn;

interface Activation {
  effective: bigint;
  activating: bigint;
  deactivating: bigint;
}

/**
 * Delegation::stake_activating_and_deactivating for a chain whose StakeHistory has no entries
 * (this chain never writes one): a delegation is activating in its activation epoch and fully
 * effective after it; deactivating in its deactivation epoch and fully inactive after it.
 */
export function stakeActivation(stake: bigint, activationEpoch: bigint, deactivationEpoch: bigint, epoch: bigint): Activation {
  let effective: bigint;
  let activating = 0n;
  if (activationEpoch === U64_MAX) effective = stake;
  else if (activationEpoch === deactivationEpoch) return { effective: 0n, activating: 0n, deactivating: 0n };
  else if (epoch === activationEpoch) [effective, activating] = [0n, stake];
  else if (epoch < activationEpoch) effective = 0n;
  else effective = stake;
  if (epoch < deactivationEpoch) return { effective, activating, deactivating: 0n };
  if (epoch === deactivationEpoch) return { effective, activating: 0n, deactivating: effective };
  return { effective: 0n, activating: 0n, deactivating: 0n };
}

export function stakeMethods(chain: Chain): RpcMethodTable {
  return {
    // [pubkey, { commitment, minContextSlot, epoch }?] → { state, active, inactive }.
    getStakeActivation(params) {
      const pubkey = addressParam(requireParam(params, 0, 'pubkey'));
      refuseExtraParams(params, 1, 2);
      const config = configParam(params, 1);
      checkContext(chain, config);
      const { epoch: current } = chain.epochInfo(chain.slotAt(commitmentOption(config)));
      const epoch = config.epoch === undefined || config.epoch === null ? current : u64Param(config.epoch, 'epoch');
      if (epoch !== current) throw invalidParams(`Invalid param: epoch ${epoch}. Only the current epoch (${current}) is supported`);
      const account = chain.svm.getAccount(address(pubkey));
      if (!account.exists) throw invalidParams('Invalid param: account not found');
      const data = account.data;
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      // StakeStateV2: 0 Uninitialized, 1 Initialized(Meta), 2 Stake(Meta, Stake, StakeFlags), 3 RewardsPool.
      const tag = account.programAddress === STAKE_PROGRAM && data.length >= 200 ? view.getUint32(0, true) : -1;
      if (tag < 0 || tag > 3) throw invalidParams('Invalid param: not a stake account');
      if (tag !== 1 && tag !== 2) throw invalidParams('Invalid param: stake account not initialized');
      const rentExemptReserve = view.getBigUint64(4, true);
      const spendable = (lamports: bigint) => (lamports > 0n ? lamports : 0n);
      if (tag === 1) return { state: 'inactive', active: 0n, inactive: spendable(account.lamports - rentExemptReserve) };
      // Meta ends at 124; the delegation: voter 32 bytes, stake, activation epoch, deactivation epoch.
      const { effective, activating, deactivating } = stakeActivation(view.getBigUint64(156, true), view.getBigUint64(164, true), view.getBigUint64(172, true), epoch);
      const state = deactivating > 0n ? 'deactivating' : activating > 0n ? 'activating' : effective > 0n ? 'active' : 'inactive';
      return { state, active: effective, inactive: spendable(account.lamports - effective - rentExemptReserve) };
    },
  };
}
