/**
 * The slot clock keeps a validator's slot boundaries when its timer runs late. A single test
 * validator starts slot s + 1 every 400 ms and confirms slot s as it does (its own vote is the
 * supermajority), so a client waiting for `confirmed` over the WebSocket waits for the end of its
 * transaction's slot, not longer. Here new slots, and with them those confirmations, are pushed by
 * the chain's timer; a late run (a busy machine) must not push every later slot late as well.
 *
 * Time is node:test's mock clock (Date and setTimeout), so every assertion is about which slots
 * exist at a given instant of that clock, never about the machine's real time. A mock timer due
 * inside a `tick(ms)` runs at the end of it, late, as a real timer does behind a busy event loop.
 * The mock's intervals repeat at exact multiples, which Node's do not; setInterval here is Node's
 * own rule on top of the mocked setTimeout, so that a clock built on an interval would be caught.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { Chain } from '../src/chain.ts';

const SLOT_MS = 400;
const silent = { info() {}, warn() {}, error() {} };

let chain: Chain | undefined;
let produced: number[];

const realSetInterval = globalThis.setInterval;
const realClearInterval = globalThis.clearInterval;
const intervals = new Map<object, () => void>();

/**
 * setInterval as Node runs it (lib/internal/timers.js, listOnTimeout): each repeat is scheduled
 * from the time its run began, so every late run delays all the runs after it.
 */
function nodeSetInterval(callback: () => void, ms: number): NodeJS.Timeout {
  let current: NodeJS.Timeout;
  const handle = {
    unref: () => handle,
    ref: () => handle,
    cancelled: false,
  };
  const run = () => {
    if (handle.cancelled) return;
    current = setTimeout(run, ms);
    callback();
  };
  current = setTimeout(run, ms);
  const clear = () => {
    handle.cancelled = true;
    clearTimeout(current);
  };
  intervals.set(handle, clear);
  return handle as unknown as NodeJS.Timeout;
}
beforeEach(() => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_800_000_000_000 });
  globalThis.setInterval = nodeSetInterval as unknown as typeof setInterval;
  globalThis.clearInterval = ((handle: object) => intervals.get(handle)?.()) as typeof clearInterval;
  chain = new Chain(silent, { timing: 'validator' });
  produced = [];
  chain.slotAdvanced.on((slot) => produced.push(slot));
  chain.start(SLOT_MS);
});

afterEach(() => {
  chain?.stop();
  mock.timers.reset();
  globalThis.setInterval = realSetInterval;
  globalThis.clearInterval = realClearInterval;
});

test('a timer that runs late does not delay the slots after it', () => {
  const first = chain!.slot;
  // The wake due at the first boundary runs 150 ms late (the process was busy).
  mock.timers.tick(SLOT_MS + 150);
  assert.deepEqual(produced, [first + 1]);
  // One millisecond after the second boundary, the second new slot has started.
  mock.timers.tick(SLOT_MS - 150 + 1);
  assert.deepEqual(produced, [first + 1, first + 2]);
  // And the slots go on one per boundary, none late, none twice.
  for (let i = 0; i < 10; i++) mock.timers.tick(SLOT_MS);
  assert.deepEqual(produced, Array.from({ length: 12 }, (_, i) => first + 1 + i));
});

test('late runs do not add up: after many, a slot still starts at its boundary', () => {
  const first = chain!.slot;
  // Thirty slots in a row whose wakes each run 40 ms late: an interval would drift 1.2 s (three
  // slots) behind the clock by the end.
  for (let i = 1; i <= 30; i++) mock.timers.tick(i === 1 ? SLOT_MS + 40 : SLOT_MS);
  const last = produced.at(-1)!;
  assert.equal(last, first + 30);
  // The next boundary is 400 − 40 ms away: one millisecond past it, the next slot exists.
  mock.timers.tick(SLOT_MS - 40 + 1);
  assert.equal(produced.at(-1), first + 31);
  assert.equal(produced.length, 31);
});

test('a slot is confirmed when the next one starts, even after a late wake', () => {
  const first = chain!.slot;
  mock.timers.tick(SLOT_MS + 300);
  const current = chain!.slot;
  assert.equal(current, first + 1);
  assert.equal(chain!.confirmedSlot, first);
  // Just past the next boundary (100 ms later, not 400), the slot is confirmed.
  mock.timers.tick(SLOT_MS - 300 + 1);
  assert.equal(chain!.confirmedSlot, current);
});

test('a stopped clock produces no slot until it starts again', () => {
  const first = chain!.slot;
  mock.timers.tick(SLOT_MS);
  chain!.stop();
  mock.timers.tick(5 * SLOT_MS);
  assert.deepEqual(produced, [first + 1]);
  chain!.start(SLOT_MS);
  mock.timers.tick(SLOT_MS);
  assert.deepEqual(produced, [first + 1, first + 2]);
});
