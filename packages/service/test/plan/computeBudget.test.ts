/**
 * The compute-budget reader against the runtime's rules (agave compute-budget-instruction,
 * ComputeBudgetInstructionDetails): borsh read with try_from_slice_unchecked (trailing bytes
 * accepted), a second instruction of a kind is DuplicateInstruction at its index, tag 0 / unknown
 * tags / short data are InvalidInstructionData, heap frames are multiples of 1 KiB in 32–256 KiB,
 * a loaded-accounts limit of 0 is InvalidLoadedAccountsDataSizeLimit, the limit is capped at 1.4 M.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { readComputeBudget } from '../../src/plan/computeBudget.ts';

const cb = (...bytes: number[]) => ({ programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS as Address, data: new Uint8Array(bytes) });
const le = (value: bigint, size: number) => [...Array(size)].map((_, i) => Number((value >> BigInt(8 * i)) & 0xffn));
const limit = (units: number, ...extra: number[]) => cb(2, ...le(BigInt(units), 4), ...extra);
const price = (micro: bigint, ...extra: number[]) => cb(3, ...le(micro, 8), ...extra);
const heap = (bytes: number) => cb(1, ...le(BigInt(bytes), 4));
const loaded = (bytes: number) => cb(4, ...le(BigInt(bytes), 4));
const other = { programAddress: TOKEN_PROGRAM_ADDRESS as Address, data: new Uint8Array([9]) };

describe('readComputeBudget: compute-budget instructions as the runtime reads them', () => {
  it('reads limit (u32, capped at 1,400,000), price (u64 micro-lamports), heap frame and loaded-accounts limit, wherever they are', () => {
    const reading = readComputeBudget([other, price(2n ** 64n - 1n), limit(2_000_000), heap(64 * 1024), loaded(1000)]);
    assert.deepEqual(reading, {
      ok: true,
      limits: { computeUnitLimit: 1_400_000, computeUnitPriceMicroLamports: 2n ** 64n - 1n, heapFrameBytes: 65_536, loadedAccountsDataSizeLimit: 1000 },
    });
    assert.deepEqual(readComputeBudget([other]), {
      ok: true,
      limits: { computeUnitLimit: null, computeUnitPriceMicroLamports: 0n, heapFrameBytes: null, loadedAccountsDataSizeLimit: null },
    });
  });

  it('accepts bytes after the value (try_from_slice_unchecked): a 10-byte SetComputeUnitPrice sets its price', () => {
    const reading = readComputeBudget([limit(200_000, 7), price(5_000_000n, 0xff)]);
    assert.ok(reading.ok);
    assert.equal(reading.limits.computeUnitPriceMicroLamports, 5_000_000n);
    assert.equal(reading.limits.computeUnitLimit, 200_000);
  });

  it('refuses a repeated kind with DuplicateInstruction at the second one\'s index', () => {
    assert.deepEqual(readComputeBudget([other, price(0n), price(1n)]), { ok: false, error: { kind: 'DuplicateInstruction', index: 2 } });
    assert.deepEqual(readComputeBudget([limit(1), other, limit(2)]), { ok: false, error: { kind: 'DuplicateInstruction', index: 2 } });
    assert.deepEqual(readComputeBudget([heap(32 * 1024), heap(64 * 1024)]), { ok: false, error: { kind: 'DuplicateInstruction', index: 1 } });
    assert.deepEqual(readComputeBudget([loaded(1), loaded(2)]), { ok: false, error: { kind: 'DuplicateInstruction', index: 1 } });
  });

  it('refuses tag 0, unknown tags, empty or short data: InvalidInstructionData at its index', () => {
    for (const bad of [cb(0, 0, 0, 0, 0), cb(5, 0, 0, 0, 0), cb(), cb(3, 1, 2, 3, 4, 5, 6, 7), cb(2, 1, 2, 3)]) {
      assert.deepEqual(readComputeBudget([other, bad]), { ok: false, error: { kind: 'InvalidInstructionData', index: 1 } });
    }
  });

  it('checks the heap frame (multiple of 1 KiB, 32 to 256 KiB) and a loaded-accounts limit of 0 after reading all', () => {
    for (const bytes of [31 * 1024, 257 * 1024, 33 * 1024 + 1]) {
      assert.deepEqual(readComputeBudget([heap(bytes), price(1n)]), { ok: false, error: { kind: 'InvalidInstructionData', index: 0 } });
    }
    assert.deepEqual(readComputeBudget([loaded(0)]), { ok: false, error: { kind: 'InvalidLoadedAccountsDataSizeLimit' } });
    // A duplicate is found while reading, before the heap frame is checked (the runtime's order).
    assert.deepEqual(readComputeBudget([heap(1), price(1n), price(2n)]), { ok: false, error: { kind: 'DuplicateInstruction', index: 2 } });
  });
});
