/**
 * The embedded local chain in a process of its own, for `npm run bench:preview`'s separate-chain
 * mode: on a real cluster the RPC node is another machine, so its work (encoding thousands of
 * accounts as JSON, simulations) must not be counted as the service's. Test mode, for
 * `localnet_setAccount`. Sends one "ready" message with its URL; answers "stats" with its CPU time.
 */
import { startLocalnet } from '@cinder/localnet';

export interface ChainServerReady {
  type: 'ready';
  rpcUrl: string;
}

export interface ChainServerStats {
  type: 'stats';
  /** CPU time of this process so far (user + system), ms. */
  cpuMs: number;
}

const localnet = await startLocalnet({ port: 0, testMode: true });
process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') {
    const { user, system } = process.cpuUsage();
    process.send!({ type: 'stats', cpuMs: (user + system) / 1000 } satisfies ChainServerStats);
  } else if (message.type === 'stop') {
    void localnet.close().then(() => process.exit(0));
  }
});
// Gone with its parent, however the parent ends.
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready', rpcUrl: localnet.rpcUrl } satisfies ChainServerReady);
