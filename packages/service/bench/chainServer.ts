/**
 * The embedded local chain in a process of its own, for `npm run bench:preview`'s separate-chain
 * mode: on a real cluster the RPC node is another machine, so its work (encoding thousands of
 * accounts as JSON, simulations) must not be counted as the service's (`npm run bench:any-size`'s
 * fleet too). Test mode, for `localnet_setAccount`. CHAIN_CONFIRMATION=unknownMs,processedUntilMs:
 * a real cluster's timing too, by the RPC proxy of the tests (test/chain/rpcProxy.ts), in this
 * process as well. Sends one "ready" message with its URLs; answers "stats" with its CPU time.
 */
import { startLocalnet } from '@cinder/localnet';
import { startRpcProxy } from '../test/chain/rpcProxy.ts';

export interface ChainServerReady {
  type: 'ready';
  rpcUrl: string;
  wsUrl: string;
  /** The proxy with a cluster's timing, with CHAIN_CONFIRMATION. */
  proxyUrl: string | null;
}

export interface ChainServerStats {
  type: 'stats';
  /** CPU time of this process so far (user + system), ms. */
  cpuMs: number;
}

const localnet = await startLocalnet({ port: 0, testMode: true });
const confirmation = process.env.CHAIN_CONFIRMATION?.split(',').map(Number);
const proxy = confirmation ? await startRpcProxy(localnet.rpcUrl, { confirmation: { unknownMs: confirmation[0]!, processedUntilMs: confirmation[1]! } }) : null;
process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') {
    const { user, system } = process.cpuUsage();
    process.send!({ type: 'stats', cpuMs: (user + system) / 1000 } satisfies ChainServerStats);
  } else if (message.type === 'stop') {
    void Promise.all([proxy?.close(), localnet.close()]).then(() => process.exit(0));
  }
});
// Gone with its parent, however the parent ends.
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready', rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, proxyUrl: proxy?.url ?? null } satisfies ChainServerReady);
