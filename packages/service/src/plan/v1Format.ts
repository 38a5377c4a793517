/**
 * The v1 transaction format (SIMD-0385; sizes from solana-message `versions/v1/mod.rs`) as the
 * packer sees it: 4,096 bytes (SIMD-0296), at most 64 addresses, 64 instructions and 12
 * signatures, no lookup tables, and the compute budget in the message's config instead of
 * ComputeBudget instructions. Pure.
 *
 * Wire layout: 0x81, the legacy 3-byte header, a u32 config mask, the 32-byte lifetime, u8
 * instruction count, u8 address count, the addresses, the config values (u64 priority fee, u32
 * compute-unit limit, u32 loaded-accounts-data limit), one 4-byte header per instruction (u8
 * program index, u8 account count, u16 data length), then each instruction's account indexes
 * (one byte each) and data, and last one 64-byte signature per signer, with no count before them.
 */
import type { Address, Instruction } from '@solana/kit';
import { KeyTally, type PackFormat } from './pack.ts';

export const V1_TRANSACTION_SIZE_LIMIT = 4096;
export const V1_MAX_ADDRESSES = 64;
export const V1_MAX_INSTRUCTIONS = 64;
export const V1_MAX_SIGNATURES = 12;

/** Version byte, header, config mask, lifetime, instruction count, address count. */
const FIXED_BYTES = 1 + 3 + 4 + 32 + 1 + 1;
/** Cinder writes every config value it needs: priority fee (u64), compute-unit limit and loaded-data limit (u32 each). */
export const CINDER_V1_CONFIG_BYTES = 8 + 4 + 4;
const INSTRUCTION_HEADER_BYTES = 4;
const SIGNATURE_BYTES = 64;

/** A v1 transaction's wire size: a fixed 4-byte header per instruction, then one byte per account index. */
class V1Tally extends KeyTally {
  protected instructionCost(accounts: number, dataLength: number): number {
    return INSTRUCTION_HEADER_BYTES + accounts + dataLength;
  }

  get size(): number {
    return FIXED_BYTES + 32 * this.keys.size + CINDER_V1_CONFIG_BYTES + this.instructionBytes + SIGNATURE_BYTES * this.signers.size;
  }
}

export const V1_FORMAT: PackFormat = {
  sizeLimit: V1_TRANSACTION_SIZE_LIMIT,
  maxAddresses: V1_MAX_ADDRESSES,
  maxInstructions: V1_MAX_INSTRUCTIONS,
  budgetInstructions: false,
  tally: (feePayer) => new V1Tally(feePayer),
};

/** The wire size of a v1 transaction with these instructions and Cinder's three config values. */
export function v1TransactionSize(feePayer: Address, instructions: readonly Instruction[]): number {
  const tally = new V1Tally(feePayer);
  for (const instruction of instructions) tally.add(instruction);
  return tally.size;
}
