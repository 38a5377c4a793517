/**
 * Validator timing (the default outside test mode): a sent transaction executes right after the
 * send, in the slot being produced (the single validator is its leader), and is confirmed when the
 * next slot starts, so that what a client does between a send and its confirmation (fetch a
 * blockhash, advance a nonce, open a subscription) sees what it sees on a test validator.
 * Plus the cluster facts of a fresh test validator. Slots move here only with warps (no clock), so
 * every assertion is about slots, never about time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessageLifetimeUsingDurableNonce,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Nonce,
} from '@solana/kit';
import { getCreateAccountInstruction, getInitializeNonceAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import { WebSocket } from 'ws';
import { rpcCall, rpcResult, waitForStatus } from '@cinder/testkit';
import { startLocalnet, type Localnet } from '../src/index.ts';

interface Status {
  slot: number;
  confirmations: number | null;
  confirmationStatus: string;
  err: unknown;
}

let localnet: Localnet;
let url: string;
let payer: KeyPairSigner;

const warp = (slots: number) => rpcResult(url, 'localnet_warpSlots', [slots]);
const slotAt = (commitment: string) => rpcResult<number>(url, 'getSlot', [{ commitment }]);
const statusOf = async (signature: string) =>
  (await rpcResult<{ value: (Status | null)[] }>(url, 'getSignatureStatuses', [[signature]])).value[0] ?? null;

/** Sends, waits for the execution (in the current slot), then warps the slot that confirms it. */
async function sendAndConfirm(encoded: string, skipPreflight = false): Promise<Status> {
  const signature = await rpcResult<string>(url, 'sendTransaction', [encoded, { encoding: 'base64', skipPreflight }]);
  await waitUntil(async () => (await statusOf(signature)) !== null);
  await warp(1);
  const status = await statusOf(signature);
  assert.equal(status?.confirmationStatus, 'confirmed');
  return status!;
}

async function signed(instructions: Instruction[], lifetime?: { blockhash: Blockhash; lastValidBlockHeight: bigint }) {
  const blockhash = lifetime ?? (await createSolanaRpc(url).getLatestBlockhash().send()).value;
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  return { encoded: getBase64EncodedWireTransaction(transaction), signature: getSignatureFromTransaction(transaction), blockhash: blockhash.blockhash };
}

before(async () => {
  localnet = await startLocalnet({ port: 0, testMode: true, timing: 'validator', slotIntervalMs: 0 });
  url = localnet.rpcUrl;
  payer = await generateKeyPairSigner();
  const airdrop = await rpcResult<string>(url, 'requestAirdrop', [payer.address, 100_000_000_000]);
  await waitForStatus(url, airdrop);
  await warp(3);
  assert.equal((await statusOf(airdrop))?.err, null);
});
after(() => localnet.close());

describe('validator timing', () => {
  test('a sent transaction executes in the slot being produced and is confirmed when the next one starts; then the blockhash is a new one', async () => {
    const sentIn = await slotAt('processed');
    const recipient = (await generateKeyPairSigner()).address;
    const tx = await signed([getTransferSolInstruction({ source: payer, destination: recipient, amount: 1_000_000_000n })]);
    const signature = await rpcResult<string>(url, 'sendTransaction', [tx.encoded, { encoding: 'base64' }]);
    assert.equal(signature, tx.signature);
    // Executed in the current slot (no slot has passed: this chain has no clock), processed only.
    await waitUntil(async () => (await statusOf(signature)) !== null);
    assert.deepEqual(await statusOf(signature), { slot: sentIn, confirmations: 0, confirmationStatus: 'processed', err: null, status: { Ok: null } });
    assert.equal(await slotAt('processed'), sentIn);
    assert.equal((await rpcResult<{ value: number }>(url, 'getBalance', [recipient, { commitment: 'processed' }])).value, 1_000_000_000);
    assert.equal(await rpcResult(url, 'getTransaction', [signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }]), null);
    assert.equal((await rpcCall(url, 'getBlock', [sentIn, { commitment: 'confirmed' }])).error?.code, -32004);

    await warp(1);
    const confirmed = await statusOf(signature);
    assert.equal(confirmed?.confirmationStatus, 'confirmed');
    assert.equal(confirmed?.confirmations, 1);
    assert.equal(await slotAt('confirmed'), sentIn);
    const transaction = await rpcResult<{ slot: number }>(url, 'getTransaction', [signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }]);
    assert.equal(transaction.slot, sentIn);
    const block = await rpcResult<{ signatures: string[] }>(url, 'getBlock', [sentIn, { commitment: 'confirmed', transactionDetails: 'signatures' }]);
    // The block holds the transaction and the validator's vote on the block before it.
    assert.equal(block.signatures.length, 2);
    assert.ok(block.signatures.includes(signature));
    const { value } = await rpcResult<{ value: { blockhash: string } }>(url, 'getLatestBlockhash', [{ commitment: 'confirmed' }]);
    assert.notEqual(value.blockhash, tx.blockhash);
  });

  test('a failed transaction resent with a fresh blockhash is a new transaction; only the identical one is already processed', async () => {
    const recipient = (await generateKeyPairSigner()).address;
    // More than the payer has: fails on chain (skipPreflight), paying its fee.
    const transfer = getTransferSolInstruction({ source: payer, destination: recipient, amount: 10_000_000_000_000n });
    const first = await signed([transfer]);
    assert.deepEqual((await sendAndConfirm(first.encoded, true)).err, { InstructionError: [0, { Custom: 1 }] });
    const again = await rpcCall(url, 'sendTransaction', [first.encoded, { encoding: 'base64' }]);
    assert.equal(again.error?.code, -32002);
    assert.match(again.error?.message ?? '', /already been processed/);

    const second = await signed([transfer]);
    assert.notEqual(second.blockhash, first.blockhash);
    assert.notEqual(second.signature, first.signature);
    const status = await sendAndConfirm(second.encoded, true);
    assert.deepEqual(status.err, { InstructionError: [0, { Custom: 1 }] });
    assert.ok(status.slot > (await statusOf(first.signature))!.slot);
  });

  test('a durable nonce advances once per slot: two nonce transactions in a row both land', async () => {
    const nonceAccount = await generateKeyPairSigner();
    const rent = await rpcResult<number>(url, 'getMinimumBalanceForRentExemption', [80]);
    const create = await signed([
      getCreateAccountInstruction({ payer, newAccount: nonceAccount, lamports: BigInt(rent), space: 80n, programAddress: '11111111111111111111111111111111' as Address }),
      getInitializeNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer.address }),
    ]);
    assert.equal((await sendAndConfirm(create.encoded)).err, null);
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const account = await rpcResult<{ value: { data: [string, string] } }>(url, 'getAccountInfo', [nonceAccount.address, { encoding: 'base64', commitment: 'confirmed' }]);
      const nonce = getBase58Decoder().decode(Buffer.from(account.value.data[0], 'base64').subarray(40, 72)) as Nonce;
      nonces.push(nonce);
      const transaction = await signTransactionMessageWithSigners(
        pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingDurableNonce({ nonce, nonceAccountAddress: nonceAccount.address, nonceAuthorityAddress: payer.address }, m),
          (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: payer.address, amount: BigInt(i + 1) })], m),
        ),
      );
      assert.equal((await sendAndConfirm(getBase64EncodedWireTransaction(transaction))).err, null);
    }
    assert.notEqual(nonces[0], nonces[1]);
  });

  test('a confirmed subscription opened after an airdrop executed, before it is confirmed, still sees its change (web3.js\'s onAccountChange then requestAirdrop)', async () => {
    const recipient = (await generateKeyPairSigner()).address;
    const signature = await rpcResult<string>(url, 'requestAirdrop', [recipient, 2_000_000_000]);
    const socket = new WebSocket(localnet.wsUrl);
    const messages: { id?: number; result?: unknown; params?: { result: { value: { lamports: number } } } }[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    try {
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      await waitUntil(async () => (await statusOf(signature)) !== null);
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: [recipient, { encoding: 'base64', commitment: 'confirmed' }] }));
      await waitUntil(() => messages.some((m) => m.id === 1));
      assert.equal(messages.filter((m) => m.params).length, 0, 'nothing before the write is confirmed');
      await warp(1);
      await waitUntil(() => messages.some((m) => m.params !== undefined));
      assert.deepEqual(messages.filter((m) => m.params).map((m) => m.params!.result.value.lamports), [2_000_000_000]);
      assert.equal((await statusOf(signature))?.err, null);
    } finally {
      socket.close();
    }
  });
});

describe('a fresh chain looks like a fresh test validator', () => {
  test('an airdrop of 1 lamport to a new account answers a signature and fails on chain (rent)', async () => {
    const recipient = (await generateKeyPairSigner()).address;
    const signature = await rpcResult<string>(url, 'requestAirdrop', [recipient, 1]);
    assert.match(signature, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    await waitForStatus(url, signature);
    await warp(3);
    const status = await statusOf(signature);
    assert.deepEqual(status?.err, { InsufficientFundsForRent: { account_index: 1 } });
    assert.equal((await rpcResult<{ value: number }>(url, 'getBalance', [recipient])).value, 0);
    // The faucet's transfer is a transaction like any other.
    const transaction = await rpcResult<{ transaction: { message: { accountKeys: string[] } } }>(url, 'getTransaction', [signature, { encoding: 'json', commitment: 'confirmed' }]);
    assert.equal(transaction.transaction.message.accountKeys[1], recipient);
  });

  test('one vote account, of this chain\'s identity', async () => {
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    const accounts = await rpcResult<{ current: { nodePubkey: string; votePubkey: string; epochVoteAccount: boolean }[]; delinquent: unknown[] }>(url, 'getVoteAccounts');
    assert.equal(accounts.current.length, 1);
    assert.equal(accounts.delinquent.length, 0);
    assert.equal(accounts.current[0]!.nodePubkey, identity);
    assert.notEqual(accounts.current[0]!.votePubkey, identity);
    const other = (await generateKeyPairSigner()).address;
    assert.deepEqual(await rpcResult(url, 'getVoteAccounts', [{ votePubkey: other }]), { current: [], delinquent: [] });
  });

  test('getBlockProduction: this chain\'s identity led and produced every slot of the range', async () => {
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    const slot = await slotAt('processed');
    const all = await rpcResult<{ context: { slot: number }; value: { byIdentity: Record<string, [number, number]>; range: { firstSlot: number; lastSlot: number } } }>(
      url, 'getBlockProduction', [{ commitment: 'processed' }],
    );
    assert.deepEqual(all.value.range, { firstSlot: 0, lastSlot: slot });
    assert.deepEqual(all.value.byIdentity, { [identity]: [slot + 1, slot + 1] });
    const range = await rpcResult<{ value: { byIdentity: Record<string, [number, number]>; range: unknown } }>(
      url, 'getBlockProduction', [{ commitment: 'processed', range: { firstSlot: 2, lastSlot: 4 } }],
    );
    assert.deepEqual(range.value, { byIdentity: { [identity]: [3, 3] }, range: { firstSlot: 2, lastSlot: 4 } });
    const other = (await generateKeyPairSigner()).address;
    assert.deepEqual((await rpcResult<{ value: { byIdentity: object } }>(url, 'getBlockProduction', [{ identity: other }])).value.byIdentity, {});
    assert.equal((await rpcCall(url, 'getBlockProduction', [{ commitment: 'processed', range: { firstSlot: 0, lastSlot: slot + 10 } }])).error?.code, -32602);
  });
});

/** Polls until `predicate` holds; the 2-minute bound only ends a test that would otherwise hang. */
async function waitUntil(predicate: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await predicate())) {
    assert.ok(Date.now() < deadline, 'condition never met');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
