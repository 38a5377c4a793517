/**
 * A v1 message's config (SIMD-0385) read as the runtime reads it, for the relay's and the sponsor's
 * checks (src/plan/walletAdditions.ts). Pure.
 *
 * - The mask's two priority-fee bits come together (the u64 spans two value slots) or not at all,
 *   and bits above the heap size's are reserved: either mistake makes the message malformed.
 * - A heap size, when set, follows RequestHeapFrame's rule: a multiple of 1,024 from 32 KiB to 256 KiB.
 * - An unset limit is 0 (src/plan/messageBudget.ts): that is not malformed, it fails on chain and is
 *   charged, so the sponsor's policy refuses it (v1LimitsProblem) where the owner's own message is
 *   the owner's business.
 */
import type { V1CompiledTransactionMessage } from '@solana/kit';
import type { ComputeBudgetLimits } from './computeBudget.ts';
import { readMessageBudget } from './messageBudget.ts';

const PRIORITY_FEE_BITS = 0b11;
const KNOWN_BITS = 0b11111;
const MIN_HEAP_FRAME_BYTES = 32 * 1024;
const MAX_HEAP_FRAME_BYTES = 256 * 1024;

/** What in a v1 config the runtime refuses, or null. */
export function v1ConfigProblem(message: V1CompiledTransactionMessage): string | null {
  const mask = message.configMask;
  const fee = mask & PRIORITY_FEE_BITS;
  if (fee !== 0 && fee !== PRIORITY_FEE_BITS) return 'its config mask sets one of the two priority-fee bits without the other';
  if ((mask & ~KNOWN_BITS) !== 0) return `its config mask sets reserved bits (${mask})`;
  const budget = readMessageBudget(message);
  const heap = budget.ok ? budget.budget.heapFrameBytes : null;
  if (heap !== null && (heap % 1024 !== 0 || heap < MIN_HEAP_FRAME_BYTES || heap > MAX_HEAP_FRAME_BYTES)) {
    return `its heap size ${heap} is not a multiple of 1,024 from 32 KiB to 256 KiB`;
  }
  return null;
}

export type V1BudgetReading = { ok: true; limits: ComputeBudgetLimits & { priorityFeeLamports: bigint } } | { ok: false; index: number };

/** The compute budget of a v1 message, from its config; a ComputeBudget instruction in it is refused (its index). */
export function v1MessageBudget(message: V1CompiledTransactionMessage): V1BudgetReading {
  const reading = readMessageBudget(message);
  if (!reading.ok) return { ok: false, index: 'index' in reading.error ? reading.error.index : 0 };
  const { budget } = reading;
  return {
    ok: true,
    limits: {
      computeUnitLimit: budget.computeUnitLimit,
      computeUnitPriceMicroLamports: budget.computeUnitPriceMicroLamports,
      heapFrameBytes: budget.heapFrameBytes,
      loadedAccountsDataSizeLimit: budget.loadedAccountsDataSizeLimit,
      priorityFeeLamports: budget.priorityFeeLamports ?? 0n,
    },
  };
}
