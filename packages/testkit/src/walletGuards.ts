/**
 * Lighthouse instructions as browser wallets add them to what they sign, for tests of wallets
 * that change messages. Encodings follow Lighthouse's borsh layout
 * (programs/lighthouse/src/instruction.rs and types/assert/account_info.rs): discriminator, log
 * level, then the assertion. docs/wallet-additions.md says what Phantom and Solflare add.
 */
import { AccountRole, type Address, type Instruction } from '@solana/kit';

export const LIGHTHOUSE_PROGRAM_ADDRESS = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95' as Address;

export const LighthouseOperator = { Equal: 0, NotEqual: 1, GreaterThan: 2, LessThan: 3, GreaterThanOrEqual: 4, LessThanOrEqual: 5 } as const;

const ASSERT_ACCOUNT_INFO = 5;
const ASSERT_ACCOUNT_INFO_MULTI = 6;
const LOG_SILENT = 0;
const KNOWN_PROGRAM_SYSTEM = 0;
const EQUAL = 0;

const u64 = (value: bigint) => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return [...bytes];
};

const guard = (target: Address, data: number[]): Instruction => ({
  programAddress: LIGHTHOUSE_PROGRAM_ADDRESS,
  accounts: [{ address: target, role: AccountRole.READONLY }],
  data: new Uint8Array(data),
});

/** AssertAccountInfo { Lamports { value, operator } } on `target` (12 bytes of data). */
export function lamportsGuard(target: Address, operator: number, lamports: bigint): Instruction {
  return guard(target, [ASSERT_ACCOUNT_INFO, LOG_SILENT, 0, ...u64(lamports), operator]);
}

/** Account-info assertions that only the key holder can break: owner is System, IsSigner / IsWritable / not Executable. */
const KNOWN_OWNER_SYSTEM = [3, KNOWN_PROGRAM_SYSTEM, EQUAL];
const IS_SIGNER = [5, 1, EQUAL];
const IS_WRITABLE = [6, 1, EQUAL];
const NOT_EXECUTABLE = [7, 0, EQUAL];
const OWNER_SYSTEM = [2, ...new Array<number>(32).fill(0), EQUAL];

/**
 * Four guards with the data sizes of Phantom's (17, 52, 16 and 27 bytes: x402-foundation/x402
 * pull request 3318), each an AssertAccountInfoMulti on the fee payer, in the order Phantom places
 * them: the first three before the transaction's own instructions, the last after. Phantom's
 * exact assertions are not public; these assert a lamports lower bound (`floor`) and properties
 * only the fee payer's key holder can change, so they pass on a chain running the real program.
 * The 17-byte one writes its count as a two-byte LEB128 (Lighthouse's reader accepts it) to reach
 * Phantom's size with the same two assertions as the 16-byte one.
 */
export function phantomLikeGuards(feePayer: Address, floor: bigint): { before: Instruction[]; after: Instruction[] } {
  const lamportsAtLeast = [0, ...u64(floor), LighthouseOperator.GreaterThanOrEqual];
  const multi = (count: number[], assertions: number[][]) => guard(feePayer, [ASSERT_ACCOUNT_INFO_MULTI, LOG_SILENT, ...count, ...assertions.flat()]);
  const g17 = multi([0x82, 0x00], [lamportsAtLeast, KNOWN_OWNER_SYSTEM]);
  const g52 = multi([6], [OWNER_SYSTEM, IS_SIGNER, IS_WRITABLE, NOT_EXECUTABLE, KNOWN_OWNER_SYSTEM, IS_SIGNER]);
  const g16 = multi([2], [lamportsAtLeast, KNOWN_OWNER_SYSTEM]);
  const g27 = multi([8], [IS_SIGNER, IS_WRITABLE, NOT_EXECUTABLE, KNOWN_OWNER_SYSTEM, IS_SIGNER, IS_WRITABLE, NOT_EXECUTABLE, KNOWN_OWNER_SYSTEM]);
  return { before: [g17, g52, g16], after: [g27] };
}

/** Solflare adds two Lighthouse instructions (x402-foundation/x402 pull request 991); their content is not public. */
export function solflareLikeGuards(feePayer: Address, floor: bigint): Instruction[] {
  return [lamportsGuard(feePayer, LighthouseOperator.GreaterThanOrEqual, floor), guard(feePayer, [ASSERT_ACCOUNT_INFO_MULTI, LOG_SILENT, 2, ...KNOWN_OWNER_SYSTEM, ...IS_SIGNER])];
}

/** Lighthouse MemoryWrite of the payer's lamports into memory account `memory` (refused: it pays for that account). */
export function memoryWriteGuard(payer: Address, memory: Address, source: Address): Instruction {
  return {
    programAddress: LIGHTHOUSE_PROGRAM_ADDRESS,
    accounts: [
      { address: LIGHTHOUSE_PROGRAM_ADDRESS, role: AccountRole.READONLY },
      { address: '11111111111111111111111111111111' as Address, role: AccountRole.READONLY },
      { address: payer, role: AccountRole.WRITABLE_SIGNER },
      { address: memory, role: AccountRole.WRITABLE },
      { address: source, role: AccountRole.READONLY },
    ],
    // MemoryWrite { memory_id 0, bump, write_offset 0, WriteType::AccountInfoField(Lamports) }
    data: new Uint8Array([0, 0, 255, 0, 1, 1]),
  };
}
