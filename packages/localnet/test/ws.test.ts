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
import { createFundedSigner, startTestChain, type TestChain } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

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
  const start = await rpcResult<number>(url, 'getSlot', [{ commitment: 'confirmed' }]);
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

test('rootSubscribe: one rootNotification per rooted slot, oldest first, the bare slot number; slots a long warp skipped are never roots', async () => {
  const { result: id } = await ws.call('rootSubscribe');
  const { result: updates } = await ws.call('slotsUpdatesSubscribe');
  const rootsOf = (subscription: unknown) => ws.notifications(subscription as number).map((m) => m.params?.result);
  const start = await rpcResult<number>(url, 'getSlot', [{ commitment: 'confirmed' }]);
  assert.ok(start > 32, 'earlier tests moved the chain past its genesis root');
  const tip = await rpcResult<number>(url, 'localnet_warpSlots', [5]);
  await ws.waitFor((m) => m.params?.subscription === id && m.params?.result === tip - 32);
  assert.deepEqual(rootsOf(id), [start - 31, start - 30, start - 29, start - 28, start - 27]);
  assert.deepEqual(ws.notifications(id as number)[0], { jsonrpc: '2.0', method: 'rootNotification', params: { result: start - 31, subscription: id } });
  // slotsUpdates tells the same roots, each once.
  await ws.waitFor((m) => m.params?.subscription === updates && (m.params?.result as { type: string; slot: number }).slot === tip - 32 && (m.params?.result as { type: string }).type === 'root');
  assert.deepEqual(rootsOf(updates).filter((u) => (u as { type: string }).type === 'root').map((u) => (u as { slot: number }).slot), rootsOf(id));

  // Past the 150 slots that keep blocks, a warp skips slots: only those with a block are rooted.
  const before = ws.notifications(id as number).length;
  const far = await rpcResult<number>(url, 'localnet_warpSlots', [1000]);
  await ws.waitFor((m) => m.params?.subscription === id && m.params?.result === far - 32);
  const blocks = await rpcResult<number[]>(url, 'getBlocks', [tip - 31, far - 32, { commitment: 'confirmed' }]);
  assert.deepEqual(rootsOf(id).slice(before), blocks);
  assert.ok(blocks.length < 1000 - 32, 'the skipped slots are left out');
  assert.deepEqual((await ws.call('rootUnsubscribe', [id])).result, true);
  assert.deepEqual((await ws.call('slotsUpdatesUnsubscribe', [updates])).result, true);
});

test('blockSubscribe and voteSubscribe answer exactly as a validator with them disabled', async () => {
  const socket = new WebSocket(chain.localnet.wsUrl);
  const replies: string[] = [];
  socket.on('message', (data) => replies.push(String(data)));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const ask = async (id: number, method: string, params?: unknown[]): Promise<string> => {
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const reply = replies.find((r) => (JSON.parse(r) as { id?: unknown }).id === id);
      if (reply) return reply;
      if (Date.now() > deadline) throw new Error(`no reply to ${method}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  // agave's RpcSolPubSubImpl: `Error::new(ErrorCode::MethodNotFound)` once the params parsed,
  // serialized by jsonrpc-core as below, byte for byte.
  const disabled = (id: number) => `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":${id}}`;
  const { address } = await generateKeyPairSigner();
  assert.equal(await ask(1, 'blockSubscribe', ['all']), disabled(1));
  assert.equal(await ask(2, 'blockSubscribe', [{ mentionsAccountOrProgram: address }, { commitment: 'confirmed', encoding: 'base64', transactionDetails: 'full', showRewards: false, maxSupportedTransactionVersion: 0 }]), disabled(2));
  assert.equal(await ask(3, 'voteSubscribe', []), disabled(3));
  assert.equal(await ask(4, 'voteSubscribe'), disabled(4));
  assert.equal(await ask(5, 'blockUnsubscribe', [0]), disabled(5));
  assert.equal(await ask(6, 'voteUnsubscribe', [0]), disabled(6));
  // Params that do not parse are refused first, as jsonrpc-derive and serde_json word it.
  assert.equal(await ask(7, 'blockSubscribe', []), '{"jsonrpc":"2.0","error":{"code":-32602,"message":"`params` should have at least 1 argument(s)"},"id":7}');
  assert.equal(await ask(8, 'blockSubscribe', ['everything']), '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: unknown variant `everything`, expected `all` or `mentionsAccountOrProgram`."},"id":8}');
  assert.equal(await ask(9, 'blockSubscribe', [{ mentionsAccountOrProgram: 7 }]), '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: invalid type: integer `7`, expected a string."},"id":9}');
  assert.equal(await ask(10, 'blockSubscribe', ['all', {}, 1]), '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid parameters: Expected from 1 to 2 parameters.","data":"\\"Got: 3\\""},"id":10}');
  assert.equal(JSON.parse(await ask(11, 'voteSubscribe', ['all'])).error.message, 'Invalid parameters: No parameters were expected');
  socket.close();
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
