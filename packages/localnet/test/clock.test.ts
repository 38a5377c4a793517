/**
 * The slot clock: slots follow wall time (400 ms each by default) whatever the load, not the
 * number of transactions; many transactions share a slot; a warp moves block time with the slots;
 * a halted chain resumes where it stopped. Plus getSupply's accounting of burnt fees.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { address, type Signature } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, sendInstructions, startTestChain, type TestChain } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

const confirmed = [{ commitment: 'confirmed' }];

/** Blocks the event loop (and so the chain's timer, which runs in this process) for `ms`. */
function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin: simulates a process too busy to run timers
  }
}

describe('without a slot clock (slots move only with warps)', () => {
  let chain: TestChain;
  before(async () => {
    chain = await startTestChain({ slotIntervalMs: 0 });
  });
  after(() => chain.close());

  test('many transactions land in one slot; the slot does not move with them', async () => {
    const { signer } = await createFundedSigner(chain, 10_000_000_000n);
    const slot = await rpcResult<number>(chain.localnet.rpcUrl, 'getSlot', confirmed);
    const signatures: Signature[] = [];
    for (let i = 0; i < 20; i++) {
      signatures.push(await sendInstructions(chain, signer, [getTransferSolInstruction({ source: signer, destination: signer.address, amount: BigInt(i + 1) })]));
    }
    const { value } = await chain.rpc.getSignatureStatuses(signatures).send();
    assert.deepEqual(new Set(value.map((s) => s?.slot)), new Set([BigInt(slot)]));
    assert.equal(await rpcResult(chain.localnet.rpcUrl, 'getSlot', confirmed), slot);
    const block = await rpcResult<{ signatures: string[] }>(chain.localnet.rpcUrl, 'getBlock', [slot, { transactionDetails: 'signatures', commitment: 'confirmed' }]);
    for (const signature of signatures) assert.ok(block.signatures.includes(signature));
    // Slot 0 is the genesis block, as on a cluster: it holds no transaction, even on a chain whose
    // clock never moved (a fast machine's first transactions used to land there, reported as slot 0).
    assert.ok(slot >= 1, `landed in slot ${slot}`);
    const genesis = await rpcResult<{ signatures: string[] }>(chain.localnet.rpcUrl, 'getBlock', [0, { transactionDetails: 'signatures', commitment: 'confirmed' }]);
    assert.deepEqual(genesis.signatures, []);
  });

  test('a warp moves block time 400 ms per slot', async () => {
    const started = Date.now();
    const before = await rpcResult<number>(chain.localnet.rpcUrl, 'localnet_warpSlots', [1]);
    const slot = await rpcResult<number>(chain.localnet.rpcUrl, 'localnet_warpSlots', [1000]);
    assert.equal(slot, before + 1000);
    const [then, now] = [await rpcResult<number>(chain.localnet.rpcUrl, 'getBlockTime', [before]), await rpcResult<number>(chain.localnet.rpcUrl, 'getBlockTime', [slot])];
    // 400 s for the slots, plus whatever wall time passed meanwhile (block times never lag the clock).
    const wall = Math.ceil((Date.now() - started) / 1000);
    assert.ok(now - then >= 399 && now - then <= 401 + wall, `1000 slots took ${now - then} s of block time`);
    // The test-only alias tools may call instead.
    assert.equal(await rpcResult(chain.localnet.rpcUrl, 'localnet_advanceSlots', [1]), slot + 1);
  });

  test('getSupply goes down by exactly the fees paid', async () => {
    const { signer } = await createFundedSigner(chain, 1_000_000_000n);
    const supplyOf = async () => (await chain.rpc.getSupply().send()).value;
    const before = await supplyOf();
    await sendInstructions(chain, signer, [getTransferSolInstruction({ source: signer, destination: address('11111111111111111111111111111112'), amount: 1_000_000n })]);
    const after = await supplyOf();
    assert.equal(before.total - after.total, 5000n);
    assert.equal(after.circulating, after.total);
    assert.deepEqual(after.nonCirculatingAccounts, []);
  });
});

describe('with the realistic 400 ms clock', () => {
  let chain: TestChain;
  before(async () => {
    chain = await startTestChain({ slotIntervalMs: 400 });
  });
  after(() => chain.close());

  test('slots follow the wall clock even when the process was too busy to run the timer', async () => {
    const url = chain.localnet.rpcUrl;
    const started = Date.now();
    const first = await rpcResult<number>(url, 'getSlot', confirmed);
    busyWait(1300);
    const second = await rpcResult<number>(url, 'getSlot', confirmed);
    const elapsed = Date.now() - started;
    const moved = second - first;
    assert.ok(moved >= Math.floor(elapsed / 400) - 1 && moved <= Math.ceil(elapsed / 400) + 1, `${moved} slots in ${elapsed} ms`);
    assert.ok(moved >= 2, 'the slots the busy second missed were produced');
  });

  test('a halted chain (haltBlocks) stays put and resumes from the same slot', async () => {
    const url = chain.localnet.rpcUrl;
    await rpcResult(url, 'localnet_setFaults', [{ haltBlocks: true }]);
    const halted = await rpcResult<number>(url, 'getSlot', confirmed);
    busyWait(900);
    assert.equal(await rpcResult(url, 'getSlot', confirmed), halted);
    await rpcResult(url, 'localnet_clearFaults', []);
    const resumed = await rpcResult<number>(url, 'getSlot', confirmed);
    assert.ok(resumed - halted <= 1, `resumed at ${resumed}, halted at ${halted}: no jump over the halt`);
  });
});
