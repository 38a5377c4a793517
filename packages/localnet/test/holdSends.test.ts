/**
 * The test-mode fault holdSendsMs: sendTransaction answers the signature at once (after preflight,
 * as a cluster's RPC does) and the transaction lands only after the hold — in the order sent, in
 * the slot current then; one whose blockhash expired meanwhile never lands; another transaction
 * can race past a held one and make it fail on chain. Waits are on conditions with generous
 * deadlines; the only thing that needs time is that one HTTP round trip fits in a long hold.
 */
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
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, startTestChain, type TestChain } from '@cinder/testkit';
import { rpcCall, rpcResult } from '@cinder/testkit';

/** Long enough that a status query right after the send certainly comes back within it. */
const LONG_HOLD_MS = 5_000;
const DEADLINE_MS = 120_000;

let chain: TestChain;
let url: string;

before(async () => {
  chain = await startTestChain({ slotIntervalMs: 400 });
  url = chain.localnet.rpcUrl;
});
after(() => chain.close());

const setFaults = (faults: Record<string, unknown>) => rpcResult(url, 'localnet_setFaults', [faults]);

/** A signed transfer (base64 wire) and its signature; `blockhash` defaults to the latest. */
async function transfer(source: KeyPairSigner, destination: Address, amount: bigint) {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(source, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source, destination, amount })], m),
  ));
  return { wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) as string };
}

const send = (wire: string) => rpcCall(url, 'sendTransaction', [wire, { encoding: 'base64' }]);

interface Status { slot: number; err: unknown }
async function statusOf(signature: string): Promise<Status | null> {
  return (await rpcResult<{ value: (Status | null)[] }>(url, 'getSignatureStatuses', [[signature]])).value[0]!;
}
async function landed(signature: string): Promise<Status> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const status = await statusOf(signature);
    if (status) return status;
    if (Date.now() > deadline) throw new Error(`${signature} never landed`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const balance = async (account: Address) => (await chain.rpc.getBalance(account, { commitment: 'confirmed' }).send()).value;

test('a held send is answered with its signature at once, is unknown to the chain during the hold, then lands', async () => {
  const { signer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: recipient } = await generateKeyPairSigner();
  assert.deepEqual(await setFaults({ holdSendsMs: LONG_HOLD_MS }), {
    dropSends: 0, dropOneTransaction: false, haltBlocks: false, holdSendsMs: LONG_HOLD_MS, failRequests: 0, failStatus: 503,
    retryAfterSeconds: null, failAfterSend: false, closeConnections: 0, delayMs: 0, busyCluster: null,
  });
  try {
    const { wire, signature } = await transfer(signer, recipient, 1_000_000n);
    const sentInSlot = await rpcResult<number>(url, 'getSlot', [{ commitment: 'confirmed' }]);
    assert.deepEqual(await send(wire), { jsonrpc: '2.0', result: signature, id: 1 });
    assert.equal(await statusOf(signature), null, 'in flight: not landed yet');
    assert.equal(await balance(recipient), 0n);
    const status = await landed(signature);
    assert.equal(status.err, null);
    assert.ok(status.slot > sentInSlot, `landed in slot ${status.slot}, after the slot ${sentInSlot} it was sent in`);
    assert.equal(await balance(recipient), 1_000_000n);
    // A send that fails preflight is refused at once, as before: nothing is held.
    const tooMuch = await transfer(signer, recipient, 10_000_000_000n);
    assert.equal((await send(tooMuch.wire)).error?.code, -32002);
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
});

test('held sends execute in the order sent; a transaction raced past a held one makes it fail on chain, fee charged', async () => {
  const { signer: payer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: first } = await generateKeyPairSigner();
  const { address: second } = await generateKeyPairSigner();
  const { address: racer } = await generateKeyPairSigner();
  try {
    // A long hold, then a short one: the second send still waits for the first.
    await setFaults({ holdSendsMs: LONG_HOLD_MS });
    const a = await transfer(payer, first, 600_000_000n);
    assert.equal((await send(a.wire)).result, a.signature);
    await setFaults({ holdSendsMs: 1 });
    const b = await transfer(payer, second, 1_000_000n);
    assert.equal((await send(b.wire)).result, b.signature);
    // No hold for the racer: it lands at once and spends what the held `a` was going to move.
    await setFaults({ holdSendsMs: 0 });
    const race = await transfer(payer, racer, 900_000_000n);
    assert.equal((await send(race.wire)).result, race.signature);
    assert.equal((await statusOf(race.signature))?.err, null);
    assert.equal(await statusOf(a.signature), null, 'a is still held');
    assert.equal(await statusOf(b.signature), null, 'b waits behind a');

    const [statusA, statusB] = [await landed(a.signature), await landed(b.signature)];
    // a passed preflight when sent, then failed on chain: recorded, fee paid, nothing moved.
    assert.deepEqual(statusA.err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal(statusB.err, null);
    assert.equal(await balance(first), 0n);
    assert.equal(await balance(second), 1_000_000n);
    assert.equal(await balance(payer.address), 1_000_000_000n - 900_000_000n - 1_000_000n - 3n * 5000n);
    // In the order sent: a before b (in an earlier slot, or earlier in the same block).
    assert.ok(statusA.slot <= statusB.slot);
    if (statusA.slot === statusB.slot) {
      const block = await rpcResult<{ signatures: string[] }>(url, 'getBlock', [statusA.slot, { transactionDetails: 'signatures', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
      assert.ok(block.signatures.indexOf(a.signature) < block.signatures.indexOf(b.signature));
    }
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
});

test('a held transaction whose blockhash expires during the hold never lands', async () => {
  const { signer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: recipient } = await generateKeyPairSigner();
  try {
    await setFaults({ holdSendsMs: LONG_HOLD_MS });
    const stale = await transfer(signer, recipient, 1_000_000n);
    assert.equal((await send(stale.wire)).result, stale.signature);
    // 151 slots later its blockhash is too old; a send made after the warp (fresh blockhash) is
    // released after it, so once that one landed the stale one was tried.
    await rpcResult(url, 'localnet_warpSlots', [151]);
    const fresh = await transfer(signer, recipient, 2_000_000n);
    assert.equal((await send(fresh.wire)).result, fresh.signature);
    assert.equal((await landed(fresh.signature)).err, null);
    assert.equal(await statusOf(stale.signature), null);
    assert.equal(await balance(recipient), 2_000_000n);
    assert.equal(await balance(signer.address), 1_000_000_000n - 2_000_000n - 5000n, 'no fee for the expired one');
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
});

test('holdSendsMs must be an integer ≥ 0', async () => {
  assert.deepEqual((await rpcCall(url, 'localnet_setFaults', [{ holdSendsMs: -1 }])).error, { code: -32602, message: 'Invalid params: holdSendsMs must be an integer ≥ 0.' });
  assert.deepEqual((await rpcCall(url, 'localnet_setFaults', [{ holdSendsMs: '1500' }])).error, { code: -32602, message: 'Invalid params: holdSendsMs must be an integer ≥ 0.' });
});
