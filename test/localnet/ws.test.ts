/** The PubSub WebSocket endpoint at the message level. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { WebSocket } from 'ws';
import { createFundedSigner, startTestChain, type TestChain } from '../helpers/localChain.ts';
import { rpcResult } from './rawRpc.ts';

interface Message {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
  method?: string;
  params?: { subscription: number; result: unknown };
}

/** A WebSocket client that keeps every message and lets a test wait for one. */
async function connect(url: string) {
  const socket = new WebSocket(url);
  const messages: Message[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as Message);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let nextId = 1;
  const client = {
    messages,
    async waitFor(predicate: (m: Message) => boolean, timeoutMs = 5000): Promise<Message> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(messages)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    async call(method: string, params: unknown[] = []): Promise<Message> {
      const id = nextId++;
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return client.waitFor((m) => m.id === id);
    },
    notifications: (subscription: number) => messages.filter((m) => m.params?.subscription === subscription),
    close: () => socket.close(),
  };
  return client;
}

let chain: TestChain;
let ws: Awaited<ReturnType<typeof connect>>;
let url: string;

before(async () => {
  chain = await startTestChain({ slotIntervalMs: 0 });
  url = chain.localnet.rpcUrl;
  ws = await connect(chain.localnet.wsUrl);
});
after(async () => {
  ws.close();
  await chain.close();
});

test('slotSubscribe notifies every new slot; unsubscribe works once', async () => {
  const { result: id } = await ws.call('slotSubscribe');
  assert.equal(typeof id, 'number');
  const start = await rpcResult<number>(url, 'getSlot');
  await rpcResult(url, 'localnet_warpSlots', [1]);
  await rpcResult(url, 'localnet_warpSlots', [40]);
  await ws.waitFor((m) => m.params?.subscription === id && (m.params?.result as { slot: number }).slot === start + 41);
  assert.deepEqual(ws.notifications(id as number).map((m) => [m.method, m.params?.result]), [
    ['slotNotification', { parent: start, root: 0, slot: start + 1 }],
    ['slotNotification', { parent: start + 40, root: start + 41 - 32, slot: start + 41 }],
  ]);
  assert.deepEqual((await ws.call('slotUnsubscribe', [id])).result, true);
  assert.deepEqual((await ws.call('slotUnsubscribe', [id])).error, { code: -32602, message: 'Invalid subscription id.' });
});

test('signatureSubscribe: pending, already landed, and finalized', async () => {
  const { address: recipient } = await generateKeyPairSigner();
  const airdrop = await rpcResult<string>(url, 'requestAirdrop', [recipient, 1_000_000_000]);
  // Already landed: the notification follows the subscription id, then the subscription ends.
  const landed = await ws.call('signatureSubscribe', [airdrop, { commitment: 'confirmed' }]);
  const notification = await ws.waitFor((m) => m.params?.subscription === landed.result);
  const { slot } = (await rpcResult<{ value: [{ slot: number }] }>(url, 'getSignatureStatuses', [[airdrop]])).value[0];
  assert.deepEqual(notification, {
    jsonrpc: '2.0',
    method: 'signatureNotification',
    params: { result: { context: { slot }, value: { err: null } }, subscription: landed.result },
  });
  assert.equal((await ws.call('signatureUnsubscribe', [landed.result])).error?.code, -32602);

  // Finalized: only once 32 slots deep.
  const finalized = await ws.call('signatureSubscribe', [airdrop, { commitment: 'finalized' }]);
  await rpcResult(url, 'localnet_warpSlots', [10]);
  assert.equal(ws.notifications(finalized.result as number).length, 0);
  await rpcResult(url, 'localnet_warpSlots', [30]);
  const done = await ws.waitFor((m) => m.params?.subscription === finalized.result);
  assert.deepEqual((done.params?.result as { value: unknown }).value, { err: null });
});

test('signatureSubscribe before the transaction lands', async () => {
  const { signer } = await createFundedSigner(chain, 2_000_000_000n);
  const { address: recipient } = await generateKeyPairSigner();
  // A signed transaction's signature is known before it is sent.
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: signer, destination: recipient, amount: 1_000_000n })], m),
  ));
  const pending = await ws.call('signatureSubscribe', [getSignatureFromTransaction(tx), { commitment: 'processed' }]);
  assert.equal(ws.notifications(pending.result as number).length, 0);
  await rpcResult(url, 'sendTransaction', [getBase64EncodedWireTransaction(tx), { encoding: 'base64' }]);
  const note = await ws.waitFor((m) => m.params?.subscription === pending.result);
  assert.deepEqual((note.params?.result as { value: unknown }).value, { err: null });
});

test('accountSubscribe notifies changes of the account', async () => {
  const { address: watched } = await generateKeyPairSigner();
  const { result: id } = await ws.call('accountSubscribe', [watched, { encoding: 'base64', commitment: 'confirmed' }]);
  await rpcResult(url, 'requestAirdrop', [watched, 5_000_000_000]);
  const note = await ws.waitFor((m) => m.params?.subscription === id);
  assert.equal(note.method, 'accountNotification');
  assert.deepEqual((note.params?.result as { value: unknown }).value, {
    data: ['', 'base64'],
    executable: false,
    lamports: 5_000_000_000,
    owner: '11111111111111111111111111111111',
    rentEpoch: 18446744073709552000,
    space: 0,
  });
  assert.deepEqual((await ws.call('accountUnsubscribe', [id])).result, true);
});

test('unknown methods, bad params and malformed messages get JSON-RPC errors', async () => {
  assert.deepEqual((await ws.call('rootSubscribeX')).error, { code: -32601, message: 'Method not found' });
  assert.deepEqual((await ws.call('signatureSubscribe', ['nope'])).error, { code: -32602, message: 'Invalid param: Invalid' });
  const socket = new WebSocket(chain.localnet.wsUrl);
  await new Promise((resolve) => socket.once('open', resolve));
  const reply = new Promise<string>((resolve) => socket.once('message', (d) => resolve(String(d))));
  socket.send('{not json');
  assert.deepEqual(JSON.parse(await reply), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  socket.close();
});
