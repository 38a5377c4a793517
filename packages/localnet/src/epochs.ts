/**
 * Epoch arithmetic of `solana_epoch_schedule::EpochSchedule`. LiteSVM's default schedule has
 * warm-up on (epochs of 32, 64, 128… slots until `firstNormalSlot`), so a flat
 * `slot / slotsPerEpoch` would report the wrong epoch for every slot a local chain ever reaches.
 */
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
