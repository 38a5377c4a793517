/**
 * Epoch arithmetic of `solana_epoch_schedule::EpochSchedule`, and the schedule a test validator's
 * genesis has. The arithmetic keeps warm-up (epochs of 32, 64, 128… slots until `firstNormalSlot`),
 * as the sysvar can hold it; the chain itself starts without it, as solana-test-validator does.
 */
import { EpochSchedule, type LiteSVM } from 'litesvm';

export interface EpochScheduleParams {
  slotsPerEpoch: bigint;
  warmup: boolean;
  firstNormalEpoch: bigint;
  firstNormalSlot: bigint;
}

export interface EpochPosition {
  epoch: bigint;
  slotIndex: bigint;
  slotsInEpoch: bigint;
}

const MINIMUM_SLOTS_PER_EPOCH = 32n;
const MINIMUM_EPOCH_BITS = 5n; // log2(32)

function bitLength(n: bigint): bigint {
  return BigInt(n.toString(2).length);
}

export function epochPosition(schedule: EpochScheduleParams, slot: bigint): EpochPosition {
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    // Epoch e spans [32·(2^e − 1), 32·(2^(e+1) − 1)).
    const epoch = bitLength(slot + MINIMUM_SLOTS_PER_EPOCH) - MINIMUM_EPOCH_BITS - 1n;
    const slotsInEpoch = 1n << (epoch + MINIMUM_EPOCH_BITS);
    return { epoch, slotIndex: slot - (slotsInEpoch - MINIMUM_SLOTS_PER_EPOCH), slotsInEpoch };
  }
  const firstNormalSlot = schedule.warmup ? schedule.firstNormalSlot : 0n;
  const firstNormalEpoch = schedule.warmup ? schedule.firstNormalEpoch : 0n;
  const normalSlot = slot - firstNormalSlot;
  return {
    epoch: firstNormalEpoch + normalSlot / schedule.slotsPerEpoch,
    slotIndex: normalSlot % schedule.slotsPerEpoch,
    slotsInEpoch: schedule.slotsPerEpoch,
  };
}

/** `EpochSchedule::get_first_slot_in_epoch`. */
export function firstSlotInEpoch(schedule: EpochScheduleParams, epoch: bigint): bigint {
  const firstNormalEpoch = schedule.warmup ? schedule.firstNormalEpoch : 0n;
  const firstNormalSlot = schedule.warmup ? schedule.firstNormalSlot : 0n;
  if (epoch <= firstNormalEpoch) return ((1n << epoch) - 1n) * MINIMUM_SLOTS_PER_EPOCH;
  return (epoch - firstNormalEpoch) * schedule.slotsPerEpoch + firstNormalSlot;
}

/** solana-test-validator's default: `EpochSchedule::without_warmup()`, 432,000 slots from epoch 0. */
export const DEFAULT_SLOTS_PER_EPOCH = 432_000;
/** `MINIMUM_SLOTS_PER_EPOCH`: the least `--slots-per-epoch` a test validator takes. */
export const MIN_SLOTS_PER_EPOCH = Number(MINIMUM_SLOTS_PER_EPOCH);

/**
 * Sets the chain's EpochSchedule sysvar as a test validator's genesis does: `EpochSchedule::custom(n,
 * n, false)` for `--slots-per-epoch n`, `without_warmup()` (n = 432,000) otherwise. LiteSVM's own
 * default has warm-up, under which epoch 0 ends after 32 slots (13 s): suites written against a test
 * validator (web3.js's) expect epoch 0 for a whole run.
 */
export function applyTestValidatorEpochSchedule(svm: LiteSVM, slotsPerEpoch = DEFAULT_SLOTS_PER_EPOCH): EpochScheduleParams {
  if (!Number.isSafeInteger(slotsPerEpoch) || slotsPerEpoch < MIN_SLOTS_PER_EPOCH) throw new RangeError(`slots per epoch must be a whole number of at least ${MIN_SLOTS_PER_EPOCH}, got ${slotsPerEpoch}`);
  const slots = BigInt(slotsPerEpoch);
  svm.setEpochSchedule(new EpochSchedule(slots, slots, false, 0n, 0n));
  return { slotsPerEpoch: slots, warmup: false, firstNormalEpoch: 0n, firstNormalSlot: 0n };
}
