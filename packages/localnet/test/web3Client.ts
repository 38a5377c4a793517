/** web3.js v1 Connections to a test chain, closed with it. */
import { Connection } from '@solana/web3.js';
import type { Localnet } from '../src/index.ts';

const opened: Connection[] = [];

/** A Connection as a user's script makes one: confirmed commitment, default blockhash cache, the chain's WebSocket. */
export function openConnection(localnet: Localnet): Connection {
  const connection = new Connection(localnet.rpcUrl, { commitment: 'confirmed', wsEndpoint: localnet.wsUrl });
  opened.push(connection);
  return connection;
}

/**
 * Closes the Connections' WebSockets. web3.js has no public close, and it reconnects forever
 * (max_reconnects: Infinity) and logs every failed attempt once the chain is gone.
 */
export function closeConnections(): void {
  for (const connection of opened.splice(0)) {
    const socket = (connection as unknown as { _rpcWebSocket: { setAutoReconnect(on: boolean): void; close(): void } })._rpcWebSocket;
    socket.setAutoReconnect(false);
    socket.close();
  }
}
