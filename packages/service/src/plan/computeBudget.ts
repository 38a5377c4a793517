/**
 * The compute-budget instructions of a message, read exactly as the runtime reads them (agave
 * `compute-budget-instruction`, ComputeBudgetInstructionDetails::try_from and
 * sanitize_and_convert_to_compute_budget_limits), so that the fee the relay computes for a message
 * is the fee the chain charges:
 *
 * - an instruction is a compute-budget one when its program is ComputeBudget111…, wherever it is;
 * - its data is borsh `ComputeBudgetInstruction` read with `try_from_slice_unchecked`: a u8 tag,
 *   then the value; bytes after the value are ignored (a 10-byte SetComputeUnitPrice is valid);
 *   tag 0 (the removed RequestUnits), an unknown tag or data too short for the value is
 *   InstructionError(index, InvalidInstructionData);
 * - a second instruction of the same kind is DuplicateInstruction(index of the second);
 * - RequestHeapFrame must be a multiple of 1,024 from 32 KiB to 256 KiB (else InvalidInstructionData
 *   at its index); SetLoadedAccountsDataSizeLimit(0) is InvalidLoadedAccountsDataSizeLimit;
 * - the limit is capped at 1,400,000; the price is u64 micro-lamports per compute unit; without
 *   SetComputeUnitLimit the runtime uses a default that depends on the feature set (left null here).
 *
 * Pure: compiled instructions in, the limits or the runtime's error out.
 */
import type { Address, ReadonlyUint8Array } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { MAX_COMPUTE_UNIT_LIMIT } from './pack.ts';

const MIN_HEAP_FRAME_BYTES = 32 * 1024;
const MAX_HEAP_FRAME_BYTES = 256 * 1024;

export interface ComputeBudgetLimits {
  /** null: no SetComputeUnitLimit (the runtime's feature-dependent default applies). */
  computeUnitLimit: number | null;
  computeUnitPriceMicroLamports: bigint;
  heapFrameBytes: number | null;
  loadedAccountsDataSizeLimit: number | null;
}

export type ComputeBudgetError =
  | { kind: 'InvalidInstructionData'; index: number }
  | { kind: 'DuplicateInstruction'; index: number }
  | { kind: 'InvalidLoadedAccountsDataSizeLimit' };

export type ComputeBudgetReading = { ok: true; limits: ComputeBudgetLimits } | { ok: false; error: ComputeBudgetError };

export interface CompiledInstructionView {
  programAddress: Address;
  data: ReadonlyUint8Array;
}

/** The runtime's error, in its own words (as getTransaction and simulate print it). */
export function describeComputeBudgetError(error: ComputeBudgetError): string {
  switch (error.kind) {
    case 'InvalidInstructionData':
      return `instruction ${error.index} is a compute-budget instruction the runtime refuses (InvalidInstructionData)`;
    case 'DuplicateInstruction':
      return `instruction ${error.index} repeats a compute-budget instruction (DuplicateInstruction)`;
    case 'InvalidLoadedAccountsDataSizeLimit':
      return 'SetLoadedAccountsDataSizeLimit is 0 (InvalidLoadedAccountsDataSizeLimit)';
  }
}

const u32At = (data: ReadonlyUint8Array) => (data.length >= 5 ? new DataView(data.buffer, data.byteOffset + 1, 4).getUint32(0, true) : null);
const u64At = (data: ReadonlyUint8Array) => (data.length >= 9 ? new DataView(data.buffer, data.byteOffset + 1, 8).getBigUint64(0, true) : null);

export function readComputeBudget(instructions: readonly CompiledInstructionView[]): ComputeBudgetReading {
  let limit: number | null = null;
  let price: bigint | null = null;
  let heap: { index: number; bytes: number } | null = null;
  let loaded: number | null = null;
  for (const [index, instruction] of instructions.entries()) {
    if (instruction.programAddress !== COMPUTE_BUDGET_PROGRAM_ADDRESS) continue;
    const { data } = instruction;
    const invalid: ComputeBudgetReading = { ok: false, error: { kind: 'InvalidInstructionData', index } };
    const duplicate: ComputeBudgetReading = { ok: false, error: { kind: 'DuplicateInstruction', index } };
    switch (data[0]) {
      case 1: {
        const bytes = u32At(data);
        if (bytes === null) return invalid;
        if (heap) return duplicate;
        heap = { index, bytes };
        break;
      }
      case 2: {
        const units = u32At(data);
        if (units === null) return invalid;
        if (limit !== null) return duplicate;
        limit = units;
        break;
      }
      case 3: {
        const microLamports = u64At(data);
        if (microLamports === null) return invalid;
        if (price !== null) return duplicate;
        price = microLamports;
        break;
      }
      case 4: {
        const bytes = u32At(data);
        if (bytes === null) return invalid;
        if (loaded !== null) return duplicate;
        loaded = bytes;
        break;
      }
      default:
        return invalid;
    }
  }
  if (heap && (heap.bytes < MIN_HEAP_FRAME_BYTES || heap.bytes > MAX_HEAP_FRAME_BYTES || heap.bytes % 1024 !== 0)) {
    return { ok: false, error: { kind: 'InvalidInstructionData', index: heap.index } };
  }
  if (loaded === 0) return { ok: false, error: { kind: 'InvalidLoadedAccountsDataSizeLimit' } };
  return {
    ok: true,
    limits: {
      computeUnitLimit: limit === null ? null : Math.min(limit, MAX_COMPUTE_UNIT_LIMIT),
      computeUnitPriceMicroLamports: price ?? 0n,
      heapFrameBytes: heap?.bytes ?? null,
      loadedAccountsDataSizeLimit: loaded,
    },
  };
}
