/**
 * Answers read from LiteSVM's accounts and programs: a message's lookup-table addresses, whether a
 * durable nonce is current, and the stake program's minimum delegation.
 */
import {
  address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createTransactionMessage,
  getAddressDecoder,
  getAddressEncoder,
  getBase58Decoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Lamports,
} from '@solana/kit';
import { FailedTransactionMetadata, type LiteSVM } from 'litesvm';
import { SYSTEM_PROGRAM } from './parsedInstructions.ts';
import type { LoadedAddresses } from './records.ts';
import type { DecodedMessage } from './wire.ts';

const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
const LOOKUP_TABLE_META_SIZE = 56;
const NONCE_ACCOUNT_SIZE = 80;
const ADVANCE_NONCE_ACCOUNT = 4;
const STAKE_PROGRAM = 'Stake11111111111111111111111111111111111111';
/** Stake instruction 13: sets the minimum delegation as return data. */
const GET_MINIMUM_DELEGATION = 13;

const base58 = getBase58Decoder();
const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();

/**
 * Addresses loaded through the message's lookup tables, or null when a table is missing or an
 * index is out of range (the transaction will then fail to sanitize in LiteSVM).
 */
export function resolveLoadedAddresses(svm: LiteSVM, message: DecodedMessage): LoadedAddresses | null {
  const loaded: LoadedAddresses = { writable: [], readonly: [] };
  // Legacy and v1 messages have no lookup tables: every key is static.
  if (message.version !== 0) return loaded;
  for (const lookup of message.addressTableLookups ?? []) {
    const table = svm.getAccount(lookup.lookupTableAddress);
    if (!table.exists || table.programAddress !== ADDRESS_LOOKUP_TABLE_PROGRAM) return null;
    const addresses = table.data.subarray(LOOKUP_TABLE_META_SIZE);
    const at = (index: number): Address | null =>
      (index + 1) * 32 <= addresses.length ? addressDecoder.decode(addresses.subarray(index * 32, index * 32 + 32)) : null;
    for (const [indexes, into] of [[lookup.writableIndexes, loaded.writable], [lookup.readonlyIndexes, loaded.readonly]] as const) {
      for (const index of indexes) {
        const resolved = at(index);
        if (resolved === null) return null;
        into.push(resolved);
      }
    }
  }
  return loaded;
}

/** Whether the message's first instruction advances a nonce account whose value is its lifetime. */
export function isDurableNonceValid(svm: LiteSVM, message: DecodedMessage): boolean {
  const first = message.instructions[0];
  if (!first || message.staticAccounts[first.programAddressIndex] !== SYSTEM_PROGRAM) return false;
  const data = first.data;
  if (!data || data.length < 4 || new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) !== ADVANCE_NONCE_ACCOUNT) return false;
  const nonceAddress = message.staticAccounts[first.accountIndices?.[0] ?? -1];
  if (!nonceAddress) return false;
  const account = svm.getAccount(nonceAddress);
  if (!account.exists || account.programAddress !== SYSTEM_PROGRAM || account.data.length !== NONCE_ACCOUNT_SIZE) return false;
  const nonceData = account.data;
  const initialized = new DataView(nonceData.buffer, nonceData.byteOffset, nonceData.byteLength).getUint32(4, true) === 1;
  const authority = addressDecoder.decode(nonceData.subarray(8, 40));
  const signers = message.staticAccounts.slice(0, message.header.numSignerAccounts);
  return initialized && base58.decode(nonceData.subarray(40, 72)) === message.lifetimeToken && signers.includes(authority);
}

/**
 * The stake program's own answer (its GetMinimumDelegation instruction, simulated), so that it is
 * whatever the program on this chain enforces under its feature set.
 */
export function stakeMinimumDelegation(svm: LiteSVM, blockhash: Blockhash): bigint {
  const payer = addressDecoder.decode(crypto.getRandomValues(new Uint8Array(32)));
  const payerAccount = { address: payer, data: new Uint8Array(), programAddress: address(SYSTEM_PROGRAM), executable: false, space: 0n };
  svm.setAccount({ ...payerAccount, lamports: 1_000_000_000n as Lamports });
  svm.withSigverify(false);
  try {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 0n }, m),
      (m) => appendTransactionMessageInstruction({ programAddress: address(STAKE_PROGRAM), data: new Uint8Array([GET_MINIMUM_DELEGATION, 0, 0, 0]) }, m),
    );
    const result = svm.simulateTransaction(compileTransaction(message));
    if (result instanceof FailedTransactionMetadata) throw new Error(`stake GetMinimumDelegation failed: ${result.toString()}`);
    const data = result.meta().returnData().data();
    return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(0, true);
  } finally {
    svm.withSigverify(true);
    svm.setAccount({ ...payerAccount, lamports: 0n as Lamports });
  }
}

/** Address order as accounts-db compares `Pubkey`s: their 32 bytes, lexicographically. */
function compareAddresses(a: Address, b: Address): number {
  const x = addressEncoder.encode(a);
  const y = addressEncoder.encode(b);
  for (let i = 0; i < 32; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/**
 * The `count` accounts holding the most lamports (getLargestAccounts): most first, ties in
 * descending address order, accounts without lamports left out — the order of accounts-db's
 * `load_largest_accounts`.
 */
export function largestAccounts(svm: LiteSVM, knownAddresses: Set<Address>, count: number): { address: Address; lamports: bigint }[] {
  const accounts: { address: Address; lamports: bigint }[] = [];
  for (const known of knownAddresses) {
    const lamports = svm.getBalance(known) ?? 0n;
    if (lamports === 0n) knownAddresses.delete(known); // closed: re-added if written again
    else accounts.push({ address: known, lamports });
  }
  accounts.sort((a, b) => (a.lamports === b.lamports ? compareAddresses(b.address, a.address) : a.lamports > b.lamports ? -1 : 1));
  return accounts.slice(0, count);
}
