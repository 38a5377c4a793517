/**
 * Root notifications as a validator sends them (agave `notify_roots`): every slot that becomes a
 * root, in order, as a bare slot number, 32 slots behind the tip — whether the slots come from the
 * clock with no transaction at all, from a warp, or follow a transaction. Heard through web3.js v1
 * (`onRootChange`) and kit (`rootNotifications`). Every wait is on a condition with a generous
 * deadline, never on the machine's speed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Connection } from '@solana/web3.js';
import { generateKeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, sendInstructions, startTestChain, type TestChain } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';
import { closeConnections, openConnection } from './web3Client.ts';

const DEADLINE_MS = 120_000;

let chain: TestChain;
let connection: Connection;
const abort = new AbortController();

async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Each root is the one before it plus one: no rooted slot left out (every slot here has a block). */
function assertConsecutive(roots: readonly number[], who: string): void {
  roots.forEach((root, i) => {
    if (i > 0) assert.equal(root, roots[i - 1]! + 1, `${who}: root ${root} follows ${roots[i - 1]} (${roots.join(',')})`);
  });
}

before(async () => {
  chain = await startTestChain({ slotIntervalMs: 400 });
  connection = openConnection(chain.localnet);
});
after(async () => {
  abort.abort();
  closeConnections();
  await chain.close();
});

test('web3.js onRootChange and kit rootNotifications hear every root, in order, 32 slots behind the tip: from the clock, after a warp, after a transaction', async () => {
  const url = chain.localnet.rpcUrl;
  // A fresh chain's root is its genesis slot until the tip passes slot 32 (as on a fresh
  // validator): start past that so that the clock alone roots a slot every 400 ms.
  await rpcResult(url, 'localnet_warpSlots', [33]);

  const web3Roots: number[] = [];
  const kitRoots: number[] = [];
  /** root → the slot whose arrival rooted it, from kit's slotNotifications. */
  const slotOfRoot = new Map<number, number>();
  connection.onRootChange((root) => web3Roots.push(root));
  const [rootStream, slotStream] = await Promise.all([
    chain.rpcSubscriptions.rootNotifications().subscribe({ abortSignal: abort.signal }),
    chain.rpcSubscriptions.slotNotifications().subscribe({ abortSignal: abort.signal }),
  ]);
  void (async () => {
    for await (const root of rootStream) kitRoots.push(Number(root));
  })();
  void (async () => {
    for await (const { slot, root } of slotStream) if (!slotOfRoot.has(Number(root))) slotOfRoot.set(Number(root), Number(slot));
  })();

  // 1. The clock alone, no transaction: web3.js subscribes once its socket is open, so this is
  // also what shows that both subscriptions are in place.
  await until('3 roots from the slot clock in both clients', () => web3Roots.length >= 3 && kitRoots.length >= 3);

  // 2. A warp of 40 slots roots 40 slots at once: each is told, in order.
  const tip = await rpcResult<number>(url, 'localnet_warpSlots', [40]);
  await until('the root 32 slots behind the warped-to tip', () => web3Roots.includes(tip - 32) && kitRoots.includes(tip - 32));

  // 3. A transaction changes nothing to it: roots keep coming until its own slot is rooted.
  const { signer } = await createFundedSigner(chain, 1_000_000_000n);
  const { address: recipient } = await generateKeyPairSigner();
  const signature = await sendInstructions(chain, signer, [getTransferSolInstruction({ source: signer, destination: recipient, amount: 1_000_000n })]);
  const { value: [status] } = await chain.rpc.getSignatureStatuses([signature]).send();
  const landedIn = Number(status!.slot);
  await until('the root of the slot the transaction landed in', () => web3Roots.includes(landedIn) && kitRoots.includes(landedIn));

  assert.ok(web3Roots.every((root) => typeof root === 'number'), 'web3.js gets plain slot numbers');
  assertConsecutive(web3Roots, 'web3.js');
  assertConsecutive(kitRoots, 'kit');
  assert.ok(web3Roots.includes(tip - 33) && web3Roots.includes(tip - 32), 'the warp\'s roots include those just before its last');

  // Each root trails the confirmed tip by 32 slots: it was set when slot root + 32 arrived…
  const measured = kitRoots.filter((root) => slotOfRoot.has(root));
  assert.ok(measured.length >= 3);
  for (const root of measured) assert.equal(slotOfRoot.get(root), root + 32, `root ${root}`);
  // …and is never ahead of what getSlot reports at `finalized` (the same 32 slots behind `confirmed`).
  const lastRoot = Math.max(...kitRoots);
  const finalized = await rpcResult<number>(url, 'getSlot', [{ commitment: 'finalized' }]);
  const confirmed = await rpcResult<number>(url, 'getSlot', [{ commitment: 'confirmed' }]);
  assert.ok(finalized >= lastRoot, `finalized ${finalized} ≥ last root ${lastRoot}`);
  assert.ok(confirmed - lastRoot >= 32, `confirmed ${confirmed} is at least 32 slots past the last root ${lastRoot}`);
});
