/**
 * The fixture of the `priorityFee: "auto"` tests (autoPriorityFee.test.ts, autoPriorityFeeMany.test.ts):
 * the real app behind a proxy that counts its RPC calls, on a chain from before the v1 gate (a
 * preview and a prepare then pack the same transactions), a funded payer, and the chain's
 * busyCluster fault to turn on and off.
 */
import { createFundedSigner, createTestApp, rpcResult, startTestChain, type TestApp, type TestChain } from '@cinder/testkit';
import type { KeyPairSigner } from '@solana/kit';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';

/** The busy cluster's median price (µL/CU); a transaction below it waits 1,000 slots: it expires first. */
export const MEDIAN = 50_000;
export const WAIT_SLOTS = 1_000;

export interface BusyClusterFixture {
  chain: TestChain;
  proxy: RpcProxy;
  t: TestApp;
  payer: KeyPairSigner;
  /** Other apps a test builds on the same chain: closed with the fixture. */
  apps: { close(): Promise<void> }[];
  /** The busyCluster fault at `median` µL/CU (default MEDIAN). */
  busy(median?: number): Promise<unknown>;
  idle(): Promise<unknown>;
  close(): Promise<void>;
}

export async function startBusyClusterFixture(): Promise<BusyClusterFixture> {
  const chain = await startTestChain({ v1Transactions: false });
  const proxy = await startRpcProxy(chain.localnet.rpcUrl);
  const t = await createTestApp({}, { chain, chainAdapter: { rpcUrl: proxy.url } });
  const payer = (await createFundedSigner(chain, 100_000_000_000n)).signer;
  // A real cluster always has 150 recent slots to report fees for; a chain just started has a few,
  // whose busy fees may all sit below the median. A full window makes the 75th percentile what the
  // tests' assertions rely on, however fast the machine got here.
  await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [200]);
  const apps: { close(): Promise<void> }[] = [];
  return {
    chain,
    proxy,
    t,
    payer,
    apps,
    busy: (median = MEDIAN) => rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ busyCluster: { medianMicroLamports: median, waitSlots: WAIT_SLOTS } }]),
    idle: () => rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults'),
    async close() {
      await Promise.all([t.close(), ...apps.map((a) => a.close())]);
      await proxy.close();
      await chain.close();
    },
  };
}
