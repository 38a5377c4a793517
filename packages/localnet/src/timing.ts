/**
 * How this chain's time passes: slots, and when a sent transaction executes and is confirmed and
 * finalized, with validator timing (a test validator's) or instant timing (fast tests).
 */

/** A blockhash is usable for this many blocks after the one that produced it. */
export const MAX_PROCESSING_AGE = 150;
/** Landed transactions count as finalized once they are this many slots deep. */
export const FINALIZATION_DEPTH = 32;

/**
 * When a sent transaction executes. `validator`: as on a test validator, FORWARDING_MS after the
 * send, in the slot being produced then, and confirmed when the next slot starts; `instant`: inside
 * the call that sends it, in the current slot, and confirmed at once (fast tests of code that only
 * needs a chain).
 */
export type Timing = 'validator' | 'instant';

/**
 * Slots between a transaction's slot and its optimistic confirmation with validator timing. A
 * single-node test validator votes on slot s as soon as s is frozen, and its own vote is the
 * supermajority, so s is confirmed while s + 1 is being produced.
 */
export const CONFIRMATION_DEPTH = 1;

/**
 * From a send to its execution with validator timing: the RPC forwards to the leader's TPU, then
 * sigverify and the banking stage. A client that subscribes to a signature right after sending it
 * (web3.js's confirmTransaction) finds it not yet processed, as it does on a test validator.
 */
export const FORWARDING_MS = 100;

/** Simulated time per slot for warps and for chains without a slot timer. */
export const DEFAULT_SLOT_MS = 400;
