/**
 * Piscina worker: runs one wallet task and hands its batch back by transfer (no copy, and the
 * worker keeps no reference to it). Loaded as TypeScript through the tsx loader that worker
 * threads inherit from the parent's execArgv (`tsx src/server.ts`, `node --import tsx`).
 */
import { move } from 'piscina';
import { runTask, type WalletTask } from './generate.ts';

export default function run(task: WalletTask): Uint8Array {
  return move(runTask(task)) as Uint8Array;
}
