/**
 * Durable nonces as a validator stores them. LiteSVM derives the next durable nonce from the
 * transaction's own recent blockhash, where agave derives it from the bank's blockhash (the slot's
 * newest). The two differ whenever a client reuses a blockhash it fetched earlier — web3.js v1
 * caches one for 30 s — and then a nonce created or advanced with that old blockhash can never be
 * advanced by a later transaction with the same one ("nonce can only advance once per slot"), which
 * a validator accepts in any later slot. So after a transaction lands, a nonce it wrote from its
 * own blockhash is rewritten to the one the bank's blockhash gives.
 */
import { createHash } from 'node:crypto';
import { address, getAddressEncoder, type Address, type EncodedAccount } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { SYSTEM_PROGRAM } from './parsedInstructions.ts';

/** nonce::state::Versions::Current(State::Initialized(Data)): 4 + 4 + 32 + 32 + 8 bytes. */
const NONCE_ACCOUNT_LENGTH = 80;
const DURABLE_NONCE_AT = 40;

/** DurableNonce::from_blockhash: sha256("DURABLE_NONCE" ‖ blockhash). */
export function durableNonce(blockhash: string): Uint8Array {
  return createHash('sha256').update('DURABLE_NONCE').update(new Uint8Array(getAddressEncoder().encode(blockhash as Address))).digest();
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** The stored durable nonce of `key` when it is an initialized nonce account, else null. */
function storedNonce(svm: LiteSVM, key: string): { account: EncodedAccount; data: Uint8Array; nonce: Uint8Array } | null {
  const account = svm.getAccount(address(key));
  if (!account.exists || account.programAddress !== SYSTEM_PROGRAM || account.data.length !== NONCE_ACCOUNT_LENGTH) return null;
  const data = new Uint8Array(account.data);
  const view = new DataView(data.buffer);
  if (view.getUint32(0, true) !== 1 || view.getUint32(4, true) !== 1) return null;
  return { account, data, nonce: data.subarray(DURABLE_NONCE_AT, DURABLE_NONCE_AT + 32) };
}

function writeNonce(svm: LiteSVM, stored: NonNullable<ReturnType<typeof storedNonce>>, nonce: Uint8Array): void {
  stored.data.set(nonce, DURABLE_NONCE_AT);
  svm.setAccount({ ...stored.account, data: stored.data });
}

/**
 * Runs `run` (LiteSVM's execution or simulation of a transaction) with the durable-nonce check
 * agave makes. LiteSVM refuses to advance a nonce that holds the durable nonce of the
 * transaction's own blockhash ("can only advance once per slot"); agave compares with the bank's
 * blockhash. A nonce written in the slot whose blockhash a client cached, then advanced with that
 * blockhash in a later slot, passes agave's check and failed LiteSVM's. For the call, such a nonce
 * holds the bank's value (which LiteSVM's check passes); it gets its own back unless the
 * transaction advanced it (then `rebaseDurableNonces` gives it the bank's value for good).
 */
export function withBankDurableNonces<T>(svm: LiteSVM, accounts: readonly string[], lifetimeToken: string, bankBlockhash: string, run: () => T): T {
  // Only the System program writes nonce accounts.
  if (lifetimeToken === bankBlockhash || !accounts.includes(SYSTEM_PROGRAM)) return run();
  const fromTransaction = durableNonce(lifetimeToken);
  const fromBank = durableNonce(bankBlockhash);
  const swapped: string[] = [];
  for (const key of accounts) {
    const stored = storedNonce(svm, key);
    if (!stored || !sameBytes(stored.nonce, fromTransaction)) continue;
    writeNonce(svm, stored, fromBank);
    swapped.push(key);
  }
  try {
    return run();
  } finally {
    for (const key of swapped) {
      const stored = storedNonce(svm, key);
      if (stored && sameBytes(stored.nonce, fromBank)) writeNonce(svm, stored, fromTransaction);
    }
  }
}

/**
 * Rewrites the durable nonce of every initialized nonce account in `written` that holds the nonce
 * derived from the transaction's `lifetimeToken` to the one derived from `bankBlockhash`.
 */
export function rebaseDurableNonces(svm: LiteSVM, written: readonly string[], lifetimeToken: string, bankBlockhash: string): void {
  if (lifetimeToken === bankBlockhash) return;
  const fromTransaction = durableNonce(lifetimeToken);
  for (const key of written) {
    const stored = storedNonce(svm, key);
    if (stored && sameBytes(stored.nonce, fromTransaction)) writeNonce(svm, stored, durableNonce(bankBlockhash));
  }
}
