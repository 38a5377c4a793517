/** Methods that only exist when the chain runs in test mode (`localnet_*`). */
import { getBase64Encoder } from '@solana/kit';
import type { Chain } from './chain.ts';
import type { FaultController } from './faults.ts';
import { addressParam, requireParam, u64Param } from './params.ts';
import type { RpcMethodTable } from './rpcContext.ts';
import { invalidParams } from './rpcErrors.ts';

const MAX_WARP = 1_000_000;
const MAX_ACCOUNT_DATA = 10 * 1024 * 1024;

export function testMethods(chain: Chain, faults?: FaultController): RpcMethodTable {
  const warp = (params: unknown[]): number => {
    const count = u64Param(requireParam(params, 0, 'slot count'), 'slot count');
    if (count < 1n || count > BigInt(MAX_WARP)) throw invalidParams(`Invalid params: slot count must be between 1 and ${MAX_WARP}.`);
    chain.advanceSlots(Number(count));
    return chain.slot;
  };
  return {
    /** params: [changes] — merges fault settings (see faults.ts); returns the settings now in force. */
    localnet_setFaults(params) {
      if (!faults) throw invalidParams('Invalid params: fault injection is not available.');
      return faults.set(requireParam(params, 0, 'faults'));
    },

    /** Switches every fault off. */
    localnet_clearFaults() {
      faults?.clear();
      return null;
    },

    /** How many sendTransaction calls were dropped by injected faults. */
    localnet_getDroppedSends() {
      return faults?.droppedSends ?? 0;
    },

    /** params: [address, { lamports, data (base64), owner, executable }] */
    localnet_setAccount(params) {
      const target = addressParam(requireParam(params, 0, 'address'));
      const spec = requireParam(params, 1, 'account') as { lamports?: unknown; data?: unknown; owner?: unknown; executable?: unknown };
      if (typeof spec !== 'object' || spec === null) throw invalidParams('Invalid params: the account must be an object.');
      const data = spec.data ?? '';
      if (typeof data !== 'string' || data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) {
        throw invalidParams('Invalid params: data must be base64.');
      }
      const bytes = new Uint8Array(getBase64Encoder().encode(data));
      if (bytes.length > MAX_ACCOUNT_DATA) throw invalidParams(`Invalid params: data must be at most ${MAX_ACCOUNT_DATA} bytes.`);
      if (spec.executable !== undefined && typeof spec.executable !== 'boolean') throw invalidParams('Invalid params: executable must be a boolean.');
      chain.setAccount({
        address: target,
        lamports: u64Param(spec.lamports ?? 0, 'lamports'),
        data: bytes,
        owner: addressParam(spec.owner ?? '11111111111111111111111111111111'),
        executable: spec.executable ?? false,
      });
      return null;
    },

    /**
     * params: [n] — moves the chain n slots (and n × 400 ms of block time) forward at once, each
     * slot with a new blockhash, so a test need not wait for blockhashes to expire or for
     * finality; the slot clock keeps running from there. Returns the new slot.
     */
    localnet_warpSlots(params) {
      return warp(params);
    },

    /** The same as localnet_warpSlots (the name tests of other tools use). */
    localnet_advanceSlots(params) {
      return warp(params);
    },
  };
}
