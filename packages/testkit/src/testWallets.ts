/**
 * Wallets that change what they sign, as browser wallets on mainnet do (docs/wallet-additions.md):
 * each takes a prepared wire transaction, changes its message the way such a wallet would, and
 * signs the changed message with the owner's key. The changed message is compiled afresh (kit's
 * compiler orders the keys), so any signature the prepared bytes carried is gone: the relay adds
 * the fee sponsor's own.
 */
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  decompileTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createNoopSigner } from '@solana/kit';
import { memoryWriteGuard, phantomLikeGuards, solflareLikeGuards } from './walletGuards.ts';

export const COMPUTE_BUDGET_ADDRESS = 'ComputeBudget111111111111111111111111111111' as Address;
export const MEMO_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

/** What a test wallet knows when it changes a message: who pays the fee, and the least balance its guards assert of that payer. */
export interface WalletContext {
  feePayer: Address;
  /** The lower bound a guard asserts on the fee payer's lamports (a wallet derives it from its own simulation). */
  floor: bigint;
}

export type WalletEdit = (instructions: Instruction[], context: WalletContext) => Instruction[];

const isBudget = (i: Instruction) => i.programAddress === COMPUTE_BUDGET_ADDRESS;

/** The message's compute-budget instructions first, then `before`, the rest, then `after`: where Phantom places its guards. */
function around(instructions: Instruction[], before: Instruction[], after: Instruction[]): Instruction[] {
  return [...instructions.filter(isBudget), ...before, ...instructions.filter((i) => !isBudget(i)), ...after];
}

/** A SetComputeUnitLimit (discriminator 2, u32) or SetComputeUnitPrice (3, u64) instruction. */
export function computeBudgetInstruction(kind: 'limit' | 'price', value: bigint): Instruction {
  const data = new Uint8Array(kind === 'limit' ? 5 : 9);
  data[0] = kind === 'limit' ? 2 : 3;
  const view = new DataView(data.buffer);
  if (kind === 'limit') view.setUint32(1, Number(value), true);
  else view.setBigUint64(1, value, true);
  return { programAddress: COMPUTE_BUDGET_ADDRESS, data };
}

/** The message's SetComputeUnitLimit, or null. */
function unitLimitOf(instructions: Instruction[]): number | null {
  const limit = instructions.find((i) => isBudget(i) && i.data?.[0] === 2);
  return limit?.data ? new DataView(limit.data.buffer, limit.data.byteOffset + 1, 4).getUint32(0, true) : null;
}

/** Replaces (or adds) a compute-budget instruction of this kind. */
function withBudget(instructions: Instruction[], kind: 'limit' | 'price', value: bigint): Instruction[] {
  const tag = kind === 'limit' ? 2 : 3;
  const rest = instructions.filter((i) => !(isBudget(i) && i.data?.[0] === tag));
  return [computeBudgetInstruction(kind, value), ...rest];
}

export function memoInstruction(text: string, signer?: Address): Instruction {
  return {
    programAddress: MEMO_ADDRESS,
    accounts: signer ? [{ address: signer, role: AccountRole.READONLY_SIGNER }] : [],
    data: new TextEncoder().encode(text),
  };
}

/** The changes each kind of wallet makes. */
export const walletEdits = {
  /** Phantom: four guards on the fee payer (three before Cinder's instructions, one after), the compute budget as prepared. */
  phantom: ((instructions, { feePayer, floor }) => {
    const guards = phantomLikeGuards(feePayer, floor);
    return around(instructions, guards.before, guards.after);
  }) as WalletEdit,
  /** Phantom, also raising the compute-unit limit by what its four guards may cost (2,000 each). */
  phantomRaisingLimit: ((instructions, context) => {
    const edited = walletEdits.phantom(instructions, context);
    const limit = unitLimitOf(instructions) ?? 200_000;
    return withBudget(edited, 'limit', BigInt(limit + 8_000));
  }) as WalletEdit,
  /** Solflare: two guards on the fee payer, before Cinder's instructions. */
  solflare: ((instructions, { feePayer, floor }) => around(instructions, solflareLikeGuards(feePayer, floor), [])) as WalletEdit,
  /** Seeker: a Memo after Cinder's instructions. */
  seeker: ((instructions) => [...instructions, memoInstruction('Signed with Seeker')]) as WalletEdit,
  /** Seeker where the owner pays: a Memo and its own unit price (1,000 micro-lamports). */
  seekerRaisingPrice: ((instructions) => withBudget([...instructions, memoInstruction('Signed with Seeker')], 'price', 1_000n)) as WalletEdit,
  /** Hostile: a System transfer of 1,000,000 lamports out of the fee payer to a stranger. */
  hostileTransfer: ((instructions, { feePayer }) => [
    ...instructions,
    getTransferSolInstruction({ source: createNoopSigner(feePayer), destination: 'SysvarRent111111111111111111111111111111111' as Address, amount: 1_000_000n }),
  ]) as WalletEdit,
  /** Hostile: a Lighthouse MemoryWrite, which pays for a memory account. */
  hostileMemoryWrite: ((instructions, { feePayer }) => [
    ...instructions,
    memoryWriteGuard(feePayer, 'SysvarC1ock11111111111111111111111111111111' as Address, feePayer),
  ]) as WalletEdit,
  /** Hostile: two Memos. */
  hostileSecondMemo: ((instructions) => [...instructions, memoInstruction('one'), memoInstruction('two')]) as WalletEdit,
} satisfies Record<string, WalletEdit>;

export type TestWalletKind = keyof typeof walletEdits;

/**
 * What a wallet of `kind` returns for a prepared wire transaction (base64): the message changed as
 * that wallet would, signed with `keyPairs` (the owner's). Base64 wire out.
 */
export async function signAsWallet(kind: TestWalletKind | WalletEdit, wire: string, keyPairs: CryptoKeyPair[], floor: bigint): Promise<string> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  const message = decompileTransactionMessage(compiled);
  if (!('blockhash' in message.lifetimeConstraint)) throw new Error('a prepared message has a blockhash lifetime');
  const feePayer = compiled.staticAccounts[0]!;
  const edit = typeof kind === 'function' ? kind : walletEdits[kind];
  const instructions = edit([...message.instructions], { feePayer, floor });
  const changed = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(message.lifetimeConstraint as Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0], m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await partiallySignTransaction(keyPairs, compileTransaction(changed));
  return getBase64EncodedWireTransaction(signed);
}


