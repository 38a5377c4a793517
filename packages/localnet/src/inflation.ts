/**
 * The cluster's inflation schedule (`solana_inflation::Inflation`) and the rates a validator derives
 * from it, for getInflationGovernor and getInflationRate.
 *
 * The local chain pays no inflation: it has no vote or stake accounts, so getInflationReward answers
 * null and rewards lists are empty. These two methods describe the schedule a cluster created with
 * this genesis would follow, as a solana-test-validator (no stake either) describes its own.
 */
import { firstSlotInEpoch, type EpochScheduleParams } from './epochs.ts';

/** getInflationGovernor's value, in the validator's field order (`RpcInflationGovernor`). */
export interface InflationGovernor {
  initial: number;
  terminal: number;
  taper: number;
  foundation: number;
  foundationTerm: number;
}

/** getInflationRate's value, in the validator's field order (`RpcInflationRate`). */
export interface InflationRate {
  total: number;
  validator: number;
  foundation: number;
  epoch: bigint;
}

/**
 * `Inflation::default()`, what a genesis config carries unless told otherwise (a feature activated
 * after genesis would switch to `Inflation::full()` or `pico()`; no feature is ever activated here).
 */
export const DEFAULT_INFLATION: Readonly<InflationGovernor> = Object.freeze({
  initial: 0.08,
  terminal: 0.015,
  taper: 0.15,
  foundation: 0.05,
  foundationTerm: 7,
});

/** `solana_clock::SECONDS_PER_YEAR`. */
const SECONDS_PER_YEAR = 365.242_199 * 24 * 60 * 60;
/** Genesis PoH defaults: a tick every 6.25 ms (160 a second), 64 ticks a slot — 400 ms slots. */
const TICK_DURATION_NS = 6_250_000;
const TICKS_PER_SLOT = 64;
/** `years_as_slots(1.0, tick_duration, ticks_per_slot)`, the bank's `slots_per_year`. */
const SLOTS_PER_YEAR = (SECONDS_PER_YEAR * (1_000_000_000 / TICK_DURATION_NS)) / TICKS_PER_SLOT;

/** `Inflation::total(year)`. */
function total(inflation: InflationGovernor, year: number): number {
  const tapered = inflation.initial * Math.pow(1 - inflation.taper, year);
  return tapered > inflation.terminal ? tapered : inflation.terminal;
}

/** `Inflation::foundation(year)`. */
function foundation(inflation: InflationGovernor, year: number): number {
  return year < inflation.foundationTerm ? total(inflation, year) * inflation.foundation : 0;
}

/**
 * The rates of `epoch`, as `Bank::slot_in_year_for_inflation` dates them: years since inflation
 * started, counted in slots up to the first slot of the epoch. Inflation starts at the first slot of
 * the epoch before the one its feature was activated in; with nothing activated after genesis that
 * is slot 0.
 */
export function inflationRate(schedule: EpochScheduleParams, epoch: bigint, inflation: InflationGovernor = DEFAULT_INFLATION): InflationRate {
  const year = Number(firstSlotInEpoch(schedule, epoch)) / SLOTS_PER_YEAR;
  const totalRate = total(inflation, year);
  const foundationRate = foundation(inflation, year);
  return { total: totalRate, validator: totalRate - foundationRate, foundation: foundationRate, epoch };
}
