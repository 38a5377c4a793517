/**
 * One reader of a message's compute budget for every version, used by the money rules, the
 * sponsor's fee bound and the relay's checks. Pure.
 *
 * - Legacy and v0: the ComputeBudget instructions, read as the runtime reads them
 *   (src/plan/computeBudget.ts); without SetComputeUnitLimit the limit is the runtime's default
 *   (null here), so the priority fee is only known once that default is.
 * - v1 (SIMD-0385): the message's config alone. A limit left unset is 0, not a default
 *   (solana-message `v1::TransactionConfig`: "None means use 0"); the priority fee is a total in
 *   lamports. A v1 message that also carries ComputeBudget instructions is refused here: Cinder
 *   never writes one, and which of the two the runtime would honour is not a thing to bet money on.
 */
import type { Address, LegacyCompiledTransactionMessage, V0CompiledTransactionMessage, V1CompiledTransactionMessage } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { readComputeBudget, type ComputeBudgetError } from './computeBudget.ts';
import { MAX_COMPUTE_UNIT_LIMIT } from './pack.ts';
import { priorityFeeCharged } from './priorityFee.ts';
import { messageInstructions, type MessageInstruction } from './relayRules.ts';
import { MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES } from './transactionVersion.ts';

export type AnyCompiledMessage = LegacyCompiledTransactionMessage | V0CompiledTransactionMessage | V1CompiledTransactionMessage;

export interface MessageBudget {
  version: AnyCompiledMessage['version'];
  /** null: legacy/v0 without SetComputeUnitLimit (the runtime's default applies). */
  computeUnitLimit: number | null;
  /** null: legacy/v0 without SetLoadedAccountsDataSizeLimit (the runtime's 64 MiB). v1 unset: 0. */
  loadedAccountsDataSizeLimit: number | null;
  heapFrameBytes: number | null;
  computeUnitPriceMicroLamports: bigint;
  /** The priority fee the runtime charges, in lamports; null while it depends on a default limit. */
  priorityFeeLamports: bigint | null;
}

export type MessageBudgetError = ComputeBudgetError | { kind: 'ComputeBudgetInstructionInV1'; index: number };
export type MessageBudgetReading = { ok: true; budget: MessageBudget } | { ok: false; error: MessageBudgetError };

/** A v1 config value's bits in the mask (solana-message `v1::TransactionConfigMask`). */
const PRIORITY_FEE_BITS = 0b11;
const COMPUTE_UNIT_LIMIT_BIT = 0b100;
const LOADED_DATA_BIT = 0b1000;
const HEAP_SIZE_BIT = 0b10000;

export interface V1ConfigValues {
  priorityFeeLamports?: bigint;
  computeUnitLimit?: number;
  loadedAccountsDataSizeLimit?: number;
  heapSize?: number;
}

/** The config of a compiled v1 message: its values come in mask-bit order. */
export function v1ConfigOf(message: V1CompiledTransactionMessage): V1ConfigValues {
  const values = [...message.configValues];
  const next = () => values.shift()?.value;
  const config: V1ConfigValues = {};
  if ((message.configMask & PRIORITY_FEE_BITS) === PRIORITY_FEE_BITS) config.priorityFeeLamports = BigInt(next()!);
  if (message.configMask & COMPUTE_UNIT_LIMIT_BIT) config.computeUnitLimit = Number(next());
  if (message.configMask & LOADED_DATA_BIT) config.loadedAccountsDataSizeLimit = Number(next());
  if (message.configMask & HEAP_SIZE_BIT) config.heapSize = Number(next());
  return config;
}

/** Every message's instructions in one shape (v1 keeps them as headers and payloads): the relay rules' one reader. */
export const instructionsOfAnyMessage = (message: AnyCompiledMessage): MessageInstruction[] => messageInstructions(message);

export function readMessageBudget(message: AnyCompiledMessage): MessageBudgetReading {
  const instructions = instructionsOfAnyMessage(message);
  if (message.version === 1) {
    const budgetInstruction = instructions.find((i) => i.program === COMPUTE_BUDGET_PROGRAM_ADDRESS);
    if (budgetInstruction) return { ok: false, error: { kind: 'ComputeBudgetInstructionInV1', index: budgetInstruction.index } };
    const config = v1ConfigOf(message);
    const computeUnitLimit = Math.min(config.computeUnitLimit ?? 0, MAX_COMPUTE_UNIT_LIMIT);
    const priorityFeeLamports = config.priorityFeeLamports ?? 0n;
    return {
      ok: true,
      budget: {
        version: 1,
        computeUnitLimit,
        loadedAccountsDataSizeLimit: config.loadedAccountsDataSizeLimit ?? 0,
        heapFrameBytes: config.heapSize ?? null,
        // The price a v1 transaction is ranked by: its total spread over its limit.
        computeUnitPriceMicroLamports: computeUnitLimit === 0 ? 0n : (priorityFeeLamports * 1_000_000n) / BigInt(computeUnitLimit),
        priorityFeeLamports,
      },
    };
  }
  const reading = readComputeBudget(instructions.filter((i) => i.program !== null).map((i) => ({ programAddress: i.program as Address, data: i.data })));
  if (!reading.ok) return reading;
  const { computeUnitLimit, computeUnitPriceMicroLamports, heapFrameBytes, loadedAccountsDataSizeLimit } = reading.limits;
  return {
    ok: true,
    budget: {
      version: message.version,
      computeUnitLimit,
      loadedAccountsDataSizeLimit,
      heapFrameBytes,
      computeUnitPriceMicroLamports,
      priorityFeeLamports: computeUnitLimit === null ? null : priorityFeeCharged(computeUnitPriceMicroLamports, computeUnitLimit),
    },
  };
}

/**
 * Why a v1 message's limits would make it fail on chain, or null. An unset (zero) limit fails in
 * loading or at the first instruction and is charged all the same; a loaded-data limit below what
 * the transaction loads (`loadedBytesAtLeast`, from its simulation) fails the same way. The
 * sponsor's policy refuses such a message: it would be charged, and strike an innocent wallet.
 */
export function v1LimitsProblem(budget: MessageBudget, bounds: { loadedBytesAtLeast: number; maxPriorityFeeLamports: bigint }): string | null {
  if (budget.version !== 1) return null;
  if (!budget.computeUnitLimit) return 'leaves its compute-unit limit unset (0 in a v1 message)';
  if (!budget.loadedAccountsDataSizeLimit) return 'leaves its loaded-accounts-data limit unset (0 in a v1 message)';
  if (budget.loadedAccountsDataSizeLimit > MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES) return `asks for ${budget.loadedAccountsDataSizeLimit} bytes of loaded account data, over the runtime's 64 MiB`;
  if (budget.loadedAccountsDataSizeLimit < bounds.loadedBytesAtLeast) {
    return `allows ${budget.loadedAccountsDataSizeLimit} bytes of loaded account data where it loads ${bounds.loadedBytesAtLeast}`;
  }
  if ((budget.priorityFeeLamports ?? 0n) > bounds.maxPriorityFeeLamports) return `pays a priority fee of ${budget.priorityFeeLamports} lamports, over the bound of ${bounds.maxPriorityFeeLamports}`;
  return null;
}
