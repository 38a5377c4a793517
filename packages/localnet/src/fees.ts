/**
 * Transaction fee = 5,000 lamports per signature (transaction signatures plus the signatures
 * verified by precompile instructions) + priority fee (ceil(compute unit price in micro-lamports
 * × compute unit limit / 1e6)). LiteSVM's metadata does not expose the fee, so it is recomputed
 * here exactly as LiteSVM charges it (see test/localnet/fees.test.ts, which checks payer deltas).
 */
import type { DecodedMessage, V1Message } from './wire.ts';

export const LAMPORTS_PER_SIGNATURE = 5000n;
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;

// Programs whose instructions reserve only 3,000 CU when no SetComputeUnitLimit is given
// (agave `reserve_minimal_cus_for_builtin_instructions`). Measured against LiteSVM 1.5: Stake,
// Address Lookup Table, Vote, ZK ElGamal and secp256r1 count as 200,000 like any BPF program.
const BUILTIN_PROGRAMS = new Set<string>([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM,
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
]);

// Precompiles whose first data byte is the number of signatures they verify; each is charged
// like a transaction signature.
const SIGNATURE_PRECOMPILES = new Set<string>([
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

export interface ComputeBudget {
  readonly unitLimit: number;
  /** Micro-lamports per compute unit. */
  readonly unitPrice: bigint;
  /**
   * The priority fee as a total: v1's config states it so (in lamports), where legacy and v0
   * derive it from the price; undefined for those.
   */
  readonly priorityFeeLamports?: bigint;
}

/**
 * A v1 message's budget is its config alone (solana-message `v1::TransactionConfig`): an unset
 * limit is zero, not a default, and the priority fee is a total in lamports. The price shown for
 * it (prioritization fees) is that total spread over the limit.
 */
function readV1ComputeBudget(message: V1Message): ComputeBudget {
  const unitLimit = Math.min(message.config.computeUnitLimit ?? 0, MAX_COMPUTE_UNIT_LIMIT);
  const priorityFeeLamports = message.config.priorityFeeLamports ?? 0n;
  const unitPrice = unitLimit === 0 ? 0n : (priorityFeeLamports * 1_000_000n) / BigInt(unitLimit);
  return { unitLimit, unitPrice, priorityFeeLamports };
}

/**
 * Compute budget requested by a message. Malformed or duplicate ComputeBudget instructions make
 * the transaction fail before execution (LiteSVM reports that error); for pricing purposes they
 * count as "no request", as in agave's `get_fee_for_message`.
 */
export function readComputeBudget(message: DecodedMessage): ComputeBudget {
  if (message.version === 1) return readV1ComputeBudget(message);
  let requestedLimit: number | undefined;
  let requestedPrice: bigint | undefined;
  let defaultLimit = 0;
  let invalid = false;
  const seen = new Set<number>();
  for (const instruction of message.instructions) {
    const program = message.staticAccounts[instruction.programAddressIndex];
    defaultLimit += program !== undefined && BUILTIN_PROGRAMS.has(program)
      ? MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT
      : DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    const data = instruction.data ?? new Uint8Array();
    const kind = data[0] ?? -1;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const size = kind === 3 ? 9 : kind === 1 || kind === 2 || kind === 4 ? 5 : Infinity;
    if (data.length < size || seen.has(kind)) {
      invalid = true;
      continue;
    }
    seen.add(kind);
    if (kind === 2) requestedLimit = view.getUint32(1, true);
    if (kind === 3) requestedPrice = view.getBigUint64(1, true);
  }
  if (invalid) return { unitLimit: MAX_COMPUTE_UNIT_LIMIT, unitPrice: 0n };
  return {
    unitLimit: Math.min(requestedLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT),
    unitPrice: requestedPrice ?? 0n,
  };
}

export function signatureCount(message: DecodedMessage): number {
  let count = message.header.numSignerAccounts;
  for (const instruction of message.instructions) {
    const program = message.staticAccounts[instruction.programAddressIndex];
    if (program !== undefined && SIGNATURE_PRECOMPILES.has(program)) count += instruction.data?.[0] ?? 0;
  }
  return count;
}

export function priorityFee(budget: ComputeBudget): bigint {
  if (budget.priorityFeeLamports !== undefined) return budget.priorityFeeLamports;
  return (budget.unitPrice * BigInt(budget.unitLimit) + 999_999n) / 1_000_000n;
}

export function calculateFee(message: DecodedMessage): bigint {
  return LAMPORTS_PER_SIGNATURE * BigInt(signatureCount(message)) + priorityFee(readComputeBudget(message));
}
