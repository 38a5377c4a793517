/**
 * The test-mode fault busyCluster: getRecentPrioritizationFees reports fees around the median, a
 * transaction paying less than the median waits its slots (and expires when they outlast its
 * blockhash), one paying the median executes at once. Slots are moved with localnet_warpSlots, and
 * every assertion is about slots and balances, never about time.
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
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { createFundedSigner, rpcCall, rpcResult, startTestChain, type TestChain } from '@cinder/testkit';

const MEDIAN = 10_000;

let chain: TestChain;
let url: string;

before(async () => {
  // No slot clock: slots move only with warps, so "how many slots passed" is the test's to say.
  chain = await startTestChain({ slotIntervalMs: 0 });
  url = chain.localnet.rpcUrl;
});
after(() => chain.close());

const setFaults = (faults: Record<string, unknown>) => rpcResult(url, 'localnet_setFaults', [faults]);
const warp = (slots: number) => rpcResult<number>(url, 'localnet_warpSlots', [slots]);
const slotNow = () => rpcResult<number>(url, 'getSlot', [{ commitment: 'processed' }]);

/** A signed transfer paying `microLamports` per compute unit (none: no price instruction at all). */
async function transfer(source: KeyPairSigner, destination: Address, microLamports: number | null) {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash({ commitment: 'processed' }).send();
  const budget = microLamports === null ? [] : [getSetComputeUnitLimitInstruction({ units: 1_000 }), getSetComputeUnitPriceInstruction({ microLamports: BigInt(microLamports) })];
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(source, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([...budget, getTransferSolInstruction({ source, destination, amount: 1_000_000n })], m),
  ));
  const signature = getSignatureFromTransaction(tx) as string;
  const reply = await rpcCall(url, 'sendTransaction', [getBase64EncodedWireTransaction(tx), { encoding: 'base64' }]);
  assert.equal(reply.result, signature, 'the RPC answers the signature whatever the cluster does with it');
  return signature;
}

async function statusOf(signature: string): Promise<{ slot: number; err: unknown } | null> {
  return (await rpcResult<{ value: ({ slot: number; err: unknown } | null)[] }>(url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).value[0]!;
}
const balance = async (account: Address) => (await chain.rpc.getBalance(account, { commitment: 'processed' }).send()).value;

test('busyCluster: recent fees read around the median, for any accounts asked about', async () => {
  await warp(200); // a full window of recent slots
  await setFaults({ busyCluster: { medianMicroLamports: MEDIAN, waitSlots: 5 } });
  try {
    const { address: account } = await generateKeyPairSigner();
    for (const accounts of [[], [account]]) {
      const fees = (await rpcResult<{ slot: number; prioritizationFee: number }[]>(url, 'getRecentPrioritizationFees', [accounts])).map((f) => f.prioritizationFee);
      assert.equal(fees.length, 150);
      assert.ok(fees.every((f) => f >= MEDIAN / 2 && f <= (MEDIAN * 3) / 2), 'each slot between half and one and a half times the median');
      const sorted = [...fees].sort((a, b) => a - b);
      const median = sorted[75]!;
      assert.ok(median >= MEDIAN * 0.9 && median <= MEDIAN * 1.1, `median of the reported fees ${median}`);
      // Read twice, a slot reads the same (a node's cache, not noise per call).
      const again = (await rpcResult<{ prioritizationFee: number }[]>(url, 'getRecentPrioritizationFees', [accounts])).map((f) => f.prioritizationFee);
      assert.deepEqual(again, fees);
    }
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
  const idle = (await rpcResult<{ prioritizationFee: number }[]>(url, 'getRecentPrioritizationFees', [[]])).map((f) => f.prioritizationFee);
  assert.ok(idle.every((f) => f === 0), 'an idle cluster (fault cleared) reports no fees');
});

test('busyCluster: below the median waits its slots; at the median executes in the slot it was sent', async () => {
  const { signer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: cheap } = await generateKeyPairSigner();
  const { address: paid } = await generateKeyPairSigner();
  await setFaults({ busyCluster: { medianMicroLamports: MEDIAN, waitSlots: 10 } });
  try {
    const sentIn = await slotNow();
    const zeroFee = await transfer(signer, cheap, null);
    const atMedian = await transfer(signer, paid, MEDIAN);
    const landed = await statusOf(atMedian);
    assert.equal(landed?.err, null);
    assert.equal(landed?.slot, sentIn, 'the transaction paying the median landed in the slot it was sent in');
    assert.equal(await balance(paid), 1_000_000n);
    assert.equal(await statusOf(zeroFee), null, 'the 0-fee transaction waits');
    await warp(9);
    assert.equal(await statusOf(zeroFee), null, 'still waiting one slot before its turn');
    await warp(1);
    const late = await statusOf(zeroFee);
    assert.equal(late?.err, null);
    assert.equal(late?.slot, sentIn + 10, 'it executed waitSlots after the slot it was sent in');
    assert.equal(await balance(cheap), 1_000_000n);
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
});

test('busyCluster: a transaction that waits past its blockhash lifetime never lands, and charges nothing', async () => {
  const { signer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: cheap } = await generateKeyPairSigner();
  await setFaults({ busyCluster: { medianMicroLamports: MEDIAN, waitSlots: 200 } });
  try {
    const before = await balance(signer.address);
    const zeroFee = await transfer(signer, cheap, 1);
    await warp(200);
    assert.equal(await statusOf(zeroFee), null, 'expired while it waited');
    await warp(10);
    assert.equal(await statusOf(zeroFee), null);
    assert.equal(await balance(cheap), 0n);
    assert.equal(await balance(signer.address), before, 'no fee charged for what never landed');
  } finally {
    await rpcResult(url, 'localnet_clearFaults');
  }
});

test('busyCluster must be null or { medianMicroLamports, waitSlots }, integers ≥ 1', async () => {
  for (const bad of [{}, { medianMicroLamports: 0, waitSlots: 1 }, { medianMicroLamports: 1, waitSlots: 1.5 }, { medianMicroLamports: 1, waitSlots: 1, x: 1 }, 5, [1]]) {
    const reply = await rpcCall(url, 'localnet_setFaults', [{ busyCluster: bad }]);
    assert.equal(reply.error?.code, -32602, JSON.stringify(bad));
  }
  assert.deepEqual((await rpcResult<{ busyCluster: unknown }>(url, 'localnet_setFaults', [{ busyCluster: null }])).busyCluster, null);
});
