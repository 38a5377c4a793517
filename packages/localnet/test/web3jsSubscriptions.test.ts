/**
 * Subscriptions as web3.js v1 makes them (onLogs, onProgramAccountChange, onRootChange,
 * onSlotUpdate, onAccountChange, onSignature), and a client that asks for something the chain does
 * not offer. web3.js logs every failed subscription with console.error and re-sends it at once,
 * forever; so "web3.js stays quiet" is checked on console.error itself.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, type Logs, type SlotUpdate } from '@solana/web3.js';
import { WebSocket } from 'ws';
import { startLocalnet, type Localnet } from '../src/index.ts';
import { rpcResult } from '@cinder/testkit';
import { closeConnections, openConnection } from './web3Client.ts';

let localnet: Localnet;
let connection: Connection;
let payer: Keypair;
const consoleErrors: unknown[][] = [];
const originalConsoleError = console.error;

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

before(async () => {
  console.error = (...args: unknown[]) => {
    consoleErrors.push(args);
  };
  localnet = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 400 });
  connection = openConnection(localnet);
  payer = Keypair.generate();
  const signature = await connection.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) }, 'confirmed');
});
after(async () => {
  console.error = originalConsoleError;
  closeConnections();
  await localnet.close();
});

test('onLogs (mentions and all), onProgramAccountChange, onAccountChange and onSignature see one transfer', async () => {
  const recipient = Keypair.generate();
  const mentions: Logs[] = [];
  const all: Logs[] = [];
  const programChanges: string[] = [];
  const accountChanges: number[] = [];
  const ids = [
    connection.onLogs(recipient.publicKey, (logs) => mentions.push(logs), 'confirmed'),
    connection.onLogs('all', (logs) => all.push(logs), 'confirmed'),
    connection.onProgramAccountChange(SystemProgram.programId, (info) => programChanges.push(info.accountId.toBase58()), {
      commitment: 'confirmed',
      filters: [{ dataSize: 0 }],
    }),
    connection.onAccountChange(recipient.publicKey, (info) => accountChanges.push(info.lamports), { commitment: 'confirmed' }),
  ];
  // Subscriptions are made asynchronously: wait until the chain has them all.
  await new Promise((resolve) => setTimeout(resolve, 500));

  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient.publicKey, lamports: LAMPORTS_PER_SOL }));
  const signature = await connection.sendTransaction(tx, [payer]);
  const settled = await new Promise<unknown>((resolve) => connection.onSignature(signature, (result) => resolve(result.err), 'confirmed'));
  assert.equal(settled, null);

  const log = await until('logs mentioning the recipient', () => mentions.find((l) => l.signature === signature));
  assert.equal(log.err, null);
  assert.ok(log.logs.includes('Program 11111111111111111111111111111111 success'));
  await until('logs of all transactions', () => all.find((l) => l.signature === signature));
  await until('the recipient in programNotification', () => programChanges.find((a) => a === recipient.publicKey.toBase58()));
  assert.deepEqual(await until('accountNotification', () => (accountChanges.length > 0 ? accountChanges : undefined)), [LAMPORTS_PER_SOL]);

  // A transaction that does not mention the recipient is not sent to its logs subscription.
  const other = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL }));
  const otherSignature = await connection.sendTransaction(other, [payer]);
  await until('logs of the other transaction', () => all.find((l) => l.signature === otherSignature));
  assert.equal(mentions.some((l) => l.signature === otherSignature), false);

  await connection.removeOnLogsListener(ids[0]!);
  await connection.removeOnLogsListener(ids[1]!);
  await connection.removeProgramAccountChangeListener(ids[2]!);
  await connection.removeAccountChangeListener(ids[3]!);
  assert.deepEqual(consoleErrors, []);
});

test('onRootChange follows the finalized slot; onSlotUpdate reports new slots', async () => {
  const roots: number[] = [];
  const updates: SlotUpdate[] = [];
  const rootId = connection.onRootChange((root) => roots.push(root));
  const updateId = connection.onSlotUpdate((update) => updates.push(update));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const slot = await rpcResult<number>(localnet.rpcUrl, 'localnet_warpSlots', [40]);
  const root = await until('a root at or past the warp', () => roots.find((r) => r >= slot - 32));
  assert.ok(root <= slot - 32, `root ${root} lags slot ${slot} by 32`);
  const created = await until('createdBank of the warped-to slot', () => updates.find((u) => u.type === 'createdBank' && u.slot >= slot));
  assert.ok(created.type === 'createdBank' && created.parent < created.slot);
  await connection.removeRootChangeListener(rootId);
  await connection.removeSlotUpdateListener(updateId);
  assert.deepEqual(consoleErrors, []);
});

test('logsSubscribe at finalized waits until the transaction is 32 slots deep', async () => {
  const seen: Logs[] = [];
  const id = connection.onLogs(payer.publicKey, (logs) => seen.push(logs), 'finalized');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL }));
  const signature = await connection.sendTransaction(tx, [payer]);
  while ((await connection.getSignatureStatus(signature)).value === null) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(seen.some((l) => l.signature === signature), false, 'not before it is finalized');
  await rpcResult(localnet.rpcUrl, 'localnet_warpSlots', [33]);
  await until('finalized logs', () => seen.find((l) => l.signature === signature));
  await connection.removeOnLogsListener(id);
});

test('an unsupported subscription is answered once with -32601; repeats of it are slowed down, not looped', async () => {
  const socket = new WebSocket(localnet.wsUrl);
  const messages: { id?: number; result?: unknown; error?: { code: number } }[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const send = (id: number, method: string, params: unknown[] = []) => socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  send(1, 'blockSubscribe', ['all']);
  send(2, 'blockSubscribe', ['all']);
  send(3, 'blockSubscribe', ['all']);
  send(4, 'slotSubscribe');
  await until('the slotSubscribe answer', () => messages.find((m) => m.id === 4));
  // The first failure is answered at once; the identical repeats are held back (the later
  // slotSubscribe is answered before them), which is what turns a client's retry loop into a slow one.
  assert.deepEqual(messages.filter((m) => m.id !== undefined).map((m) => m.id), [1, 4]);
  assert.deepEqual(messages.find((m) => m.id === 1)?.error, { code: -32601, message: 'Method not found' });
  await until('the held-back repeat', () => messages.find((m) => m.id === 2));
  assert.deepEqual(messages.find((m) => m.id === 2)?.error, { code: -32601, message: 'Method not found' });
  socket.close();
});
