/**
 * The identity of a prepared message: what Cinder prepared, not the exact bytes a wallet signed.
 * Pure: no I/O.
 *
 * Wallets change what they sign: Phantom and Solflare add Lighthouse assertion instructions, some
 * wallets add one Memo, and several rewrite the compute budget. A sponsored turn, a relay token and
 * "a relay of prepared transactions is not counted again" must still recognise the message Cinder
 * prepared, so all three ask this one function. Which additions are acceptable at all is the
 * relay's rules' concern (src/plan/relayRules.ts); this only says "the same prepared message".
 *
 * The identity is a SHA-256 (base64url) over, in order: the fee payer, the recent blockhash (the
 * message's lifetime token), and every instruction other than Compute Budget, Lighthouse and Memo
 * instructions, each as (program address, its accounts with their signer and writable flags, data).
 * Account flags come from the message header, as the runtime reads them. Everything is framed with
 * lengths, so no two different inputs hash the same bytes.
 */
import { createHash, type Hash } from 'node:crypto';
import { getCompiledTransactionMessageDecoder, type Address, type ReadonlyUint8Array } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { indexedInstructions, type RelayableMessage } from './relayRules.ts';

/** Lighthouse (assertion-only guard instructions added by Phantom and Solflare). */
export const LIGHTHOUSE_PROGRAM_ADDRESS = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95' as Address;

/** The SPL Memo program, its current and its first (v1) deployment. */
export const MEMO_PROGRAM_ADDRESSES: ReadonlySet<Address> = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address,
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo' as Address,
]);

/** Instructions a wallet may add or change without the message ceasing to be the one Cinder prepared. */
const isWalletAddition = (program: Address | undefined) =>
  program === COMPUTE_BUDGET_PROGRAM_ADDRESS || program === LIGHTHOUSE_PROGRAM_ADDRESS || (program !== undefined && MEMO_PROGRAM_ADDRESSES.has(program));

const IDENTITY_DOMAIN = 'cinder-prepared-message:1';

/** The account at `index`: its address (or where a lookup table supplies it) and its flags, as the runtime reads the header. */
function accountAt(message: RelayableMessage, index: number): { key: string; signer: boolean; writable: boolean } {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const count = message.staticAccounts.length;
  const address = message.staticAccounts[index];
  if (address !== undefined) {
    const signer = index < numSignerAccounts;
    const writable = signer ? index < numSignerAccounts - numReadonlySignerAccounts : index < count - numReadonlyNonSignerAccounts;
    return { key: address, signer, writable };
  }
  // Loaded from an address lookup table (v0): writable loaded addresses come before readonly ones.
  const lookups = message.version === 0 ? (message.addressTableLookups ?? []) : [];
  let position = index - count;
  const writableTotal = lookups.reduce((sum, l) => sum + l.writableIndexes.length, 0);
  const writable = position < writableTotal;
  if (!writable) position -= writableTotal;
  for (const lookup of lookups) {
    const list = writable ? lookup.writableIndexes : lookup.readonlyIndexes;
    if (position < list.length) return { key: `lookup:${lookup.lookupTableAddress}:${list[position]}`, signer: false, writable };
    position -= list.length;
  }
  return { key: `missing:${index}`, signer: false, writable: false };
}

function frame(hash: Hash, bytes: ReadonlyUint8Array | string): void {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(data.length);
  hash.update(length);
  hash.update(data);
}

/** The identity of the message Cinder prepared, unchanged by a wallet's Lighthouse, Memo and compute-budget instructions. */
export function preparedMessageIdentity(message: RelayableMessage): string {
  const hash = createHash('sha256');
  frame(hash, IDENTITY_DOMAIN);
  frame(hash, message.staticAccounts[0] ?? '');
  // A decoded message carries its blockhash (kit's CompiledTransactionMessageWithLifetime).
  frame(hash, (message as { lifetimeToken?: string }).lifetimeToken ?? '');
  // A v1 message's config is its compute budget, which a wallet may change as it may change
  // legacy's ComputeBudget instructions: left out like them. Its version is framed, so a v1 and a
  // legacy message of the same instructions are not the same prepared message.
  if (message.version === 1) frame(hash, 'v1');
  for (const instruction of indexedInstructions(message)) {
    const program = message.staticAccounts[instruction.programAddressIndex];
    if (isWalletAddition(program)) continue;
    frame(hash, program ?? `missing:${instruction.programAddressIndex}`);
    const accounts = instruction.accountIndices;
    frame(hash, String(accounts.length));
    for (const index of accounts) {
      const account = accountAt(message, index);
      frame(hash, `${account.key}:${account.signer ? 's' : '-'}${account.writable ? 'w' : '-'}`);
    }
    frame(hash, instruction.data);
  }
  return hash.digest('base64url');
}

const decoder = getCompiledTransactionMessageDecoder();

/** The identity of compiled message bytes (kit's `messageBytes`), or null when they are no legacy, v0 or v1 message. */
export function preparedIdentityOfBytes(messageBytes: ReadonlyUint8Array): string | null {
  try {
    const message = decoder.decode(messageBytes);
    return message.version === 'legacy' || message.version === 0 || message.version === 1 ? preparedMessageIdentity(message) : null;
  } catch {
    return null;
  }
}
