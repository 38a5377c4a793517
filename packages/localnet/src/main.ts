/**
 * `cinder-localnet [--port N]` (`npm run localnet` at the repository root): the local chain on its
 * own. The JSON-RPC port is --port, else LOCALNET_PORT, else 8899; the WebSocket listens on the
 * next one.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { startLocalnet } from './index.ts';

function readPort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 8899;
  const port = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65534)) {
    console.error(`The port (--port or LOCALNET_PORT) must be an integer from 0 to 65534 (the WebSocket uses the next port), got "${raw}"`);
    process.exit(1);
  }
  return port;
}

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const port = readPort(values.port ?? process.env.LOCALNET_PORT);
const logger = pino({ name: 'localnet' });
const localnet = await startLocalnet({ port, logger }).catch((err: unknown) => {
  console.error(`Could not start the local chain: ${(err as Error).message}`);
  process.exit(1);
});

console.log(`Solana JSON-RPC: ${localnet.rpcUrl}`);
console.log(`Solana WebSocket: ${localnet.wsUrl}`);

const stop = (signal: NodeJS.Signals) => {
  logger.info({ signal }, 'stopping localnet');
  localnet.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'localnet did not close cleanly');
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
