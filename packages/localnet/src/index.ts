/**
 * Embedded local Solana chain: LiteSVM behind the Solana JSON-RPC (HTTP) and PubSub (WebSocket)
 * APIs, so that @solana/kit and other Solana tools work against it unchanged.
 */
import { address } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { Chain, type Logger } from './chain.ts';
import type { Timing } from './timing.ts';
import { Faucet } from './faucet.ts';
import { installFeatures } from './features.ts';
import { preload, type PreloadOptions } from './preload.ts';
import { startHttpServer, type HttpRpcServer } from './httpServer.ts';
import { createDispatcher } from './rpcDispatcher.ts';
import { createFaultController } from './faults.ts';
import { createRpcMethods, type Endpoints } from './rpcMethods.ts';
import { startWsServer } from './wsServer.ts';

export type { Timing } from './timing.ts';
export { PreloadError, type AccountJson, type PreloadedAccount, type PreloadedProgram, type PreloadedUpgradeableProgram, type PreloadOptions } from './preload.ts';

export interface LocalnetOptions extends PreloadOptions {
  host?: string;
  /** HTTP JSON-RPC port; 0 = pick a free port. */
  port: number;
  /** Default port + 1; when port is 0, a free port too. */
  wsPort?: number;
  /** Default 400; 0 = no slot clock (slots advance only with the test-only warp). */
  slotIntervalMs?: number;
  /** Enables test-only RPC methods (localnet_*) and faults; implies `timing: 'instant'` unless given. */
  testMode?: boolean;
  /**
   * 'validator' (default): a sent transaction executes about 0.1 s after the send, in the slot
   * being produced, and is confirmed when the next slot starts, as on solana-test-validator.
   * 'instant': it executes inside the send and is confirmed at once (the default in test mode).
   */
  timing?: Timing;
  /** Creates Token-2022's native mint at start (a fresh test validator has none). Default false. */
  token2022NativeMint?: boolean;
  /** Slots in every epoch, without warm-up, as solana-test-validator's `--slots-per-epoch` (default 432,000, its genesis default). */
  slotsPerEpoch?: number;
  /**
   * Whether the v1 transaction gate (`txv1aq4pp…`) is active, as on mainnet: default true. False
   * gives a cluster from before the gate (v1 refused, no feature account), to test fallbacks.
   */
  v1Transactions?: boolean;
  logger?: Logger;
  /** sBPF programs loaded at genesis (LiteSVM's addProgram), e.g. a stand-in for a program mainnet has. */
  programs?: readonly { address: string; bytes: Uint8Array }[];
}

export interface Localnet {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly svm: LiteSVM;
  /** Stops the slot timer and closes both servers, terminating open sockets. Idempotent. */
  close(): Promise<void>;
}

const silentLogger: Logger = { info() {}, warn() {}, error() {} };

function checkPort(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > 65535)) {
    throw new RangeError(`${name} must be an integer from 0 to 65535, got ${String(value)}`);
  }
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startLocalnet(options: LocalnetOptions): Promise<Localnet> {
  const host = options.host ?? '127.0.0.1';
  const slotIntervalMs = options.slotIntervalMs ?? 400;
  const logger = options.logger ?? silentLogger;
  checkPort(options.port, 'port');
  checkPort(options.wsPort, 'wsPort');
  const wsPort = options.wsPort ?? (options.port === 0 ? 0 : options.port + 1);
  checkPort(wsPort, 'wsPort (port + 1)');
  if (!Number.isFinite(slotIntervalMs) || slotIntervalMs < 0) throw new RangeError(`slotIntervalMs must be >= 0, got ${slotIntervalMs}`);

  const testMode = options.testMode ?? false;
  const timing = options.timing ?? (testMode ? 'instant' : 'validator');
  if (timing !== 'validator' && timing !== 'instant') throw new RangeError(`timing must be 'validator' or 'instant', got ${String(timing)}`);
  const chain = new Chain(logger, { timing, token2022NativeMint: options.token2022NativeMint ?? false, ...(options.slotsPerEpoch === undefined ? {} : { slotsPerEpoch: options.slotsPerEpoch }) });
  // The faucet first: it takes over the richest genesis account, which a preloaded one must not be.
  const faucet = await Faucet.create(chain);
  preload(chain, options);
  installFeatures(chain, { v1Transactions: options.v1Transactions ?? true });
  for (const program of options.programs ?? []) chain.svm.addProgram(address(program.address), program.bytes);
  // Fault injection exists only in test mode; production-like runs never pay for it.
  const faults = testMode
    ? createFaultController({
        haltBlocks: (halted) => (halted ? chain.stop() : chain.start(slotIntervalMs)),
        currentSlot: () => {
          chain.tick();
          return chain.slot;
        },
      })
    : undefined;
  let endpoints: Endpoints | null = null;
  const dispatch = createDispatcher(createRpcMethods(chain, { testMode, faucet, faults, endpoints: () => endpoints }), logger, faults?.intercept);
  const http: HttpRpcServer = await startHttpServer({ host, port: options.port, dispatch, logger, faults });
  let ws;
  try {
    ws = await startWsServer({ host, port: wsPort, chain, logger });
  } catch (err) {
    await http.close();
    throw err;
  }
  chain.start(slotIntervalMs);
  endpoints = { rpc: `${urlHost(host)}:${http.port}`, pubsub: `${urlHost(host)}:${ws.port}` };

  const rpcUrl = `http://${urlHost(host)}:${http.port}`;
  const wsUrl = `ws://${urlHost(host)}:${ws.port}`;
  logger.info({ rpcUrl, wsUrl, slotIntervalMs, testMode, timing }, 'localnet started');

  let closing: Promise<void> | undefined;
  const wsServer = ws;
  return {
    rpcUrl,
    wsUrl,
    svm: chain.svm,
    close() {
      closing ??= (async () => {
        chain.stop();
        faults?.close();
        await Promise.all([http.close(), wsServer.close()]);
        logger.info({ rpcUrl }, 'localnet stopped');
      })();
      return closing;
    },
  };
}
export { FEATURE_PROGRAM, V1_TRANSACTIONS_FEATURE } from './features.ts';
