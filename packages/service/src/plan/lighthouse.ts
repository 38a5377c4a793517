/**
 * Lighthouse (program L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95), the assertion program Phantom
 * and Solflare insert into what they sign: its instructions by discriminator, and what an
 * assertion compares about the accounts it reads. Pure: no I/O. docs/wallet-additions.md says
 * where each fact comes from.
 *
 * The discriminator is the first data byte: Lighthouse's instruction enum is borsh-encoded, so the
 * byte is the variant's position in programs/lighthouse/src/instruction.rs (the generated clients
 * state the same numbers). An allow-list, not a deny-list: the program is upgradeable, and a
 * variant added later is refused until someone reads what it does.
 */
import type { Address, ReadonlyUint8Array } from '@solana/kit';
import type { MessageInstruction } from './relayRules.ts';

export const LIGHTHOUSE_PROGRAM_ADDRESS = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95' as Address;

/**
 * - assertion: reads accounts and aborts the transaction on a mismatch; moves no lamports.
 * - memory: MemoryWrite / MemoryClose name a signer that pays for (or is refunded) a memory
 *   account's rent: in a sponsored message that payer could be the sponsor, so they are refused.
 * - cpi: reads through a call into another program (account compression), which Cinder's
 *   transactions have no reason to carry and the relay's inner-program rule refuses anyway.
 */
export type LighthouseKind = 'assertion' | 'memory' | 'cpi';

export const LIGHTHOUSE_INSTRUCTIONS: ReadonlyMap<number, { name: string; kind: LighthouseKind }> = new Map([
  [0, { name: 'MemoryWrite', kind: 'memory' }],
  [1, { name: 'MemoryClose', kind: 'memory' }],
  [2, { name: 'AssertAccountData', kind: 'assertion' }],
  [3, { name: 'AssertAccountDataMulti', kind: 'assertion' }],
  [4, { name: 'AssertAccountDelta', kind: 'assertion' }],
  [5, { name: 'AssertAccountInfo', kind: 'assertion' }],
  [6, { name: 'AssertAccountInfoMulti', kind: 'assertion' }],
  [7, { name: 'AssertMintAccount', kind: 'assertion' }],
  [8, { name: 'AssertMintAccountMulti', kind: 'assertion' }],
  [9, { name: 'AssertTokenAccount', kind: 'assertion' }],
  [10, { name: 'AssertTokenAccountMulti', kind: 'assertion' }],
  [11, { name: 'AssertStakeAccount', kind: 'assertion' }],
  [12, { name: 'AssertStakeAccountMulti', kind: 'assertion' }],
  [13, { name: 'AssertUpgradeableLoaderAccount', kind: 'assertion' }],
  [14, { name: 'AssertUpgradeableLoaderAccountMulti', kind: 'assertion' }],
  [15, { name: 'AssertSysvarClock', kind: 'assertion' }],
  [16, { name: 'AssertMerkleTreeAccount', kind: 'cpi' }],
  [17, { name: 'AssertBubblegumTreeConfigAccount', kind: 'cpi' }],
] as const);

export const ASSERT_ACCOUNT_INFO = 5;
export const ASSERT_ACCOUNT_INFO_MULTI = 6;

/** Lighthouse's IntegerOperator, borsh u8 (programs/lighthouse/src/types/assert/operator.rs). */
export const IntegerOperator = { Equal: 0, NotEqual: 1, GreaterThan: 2, LessThan: 3, GreaterThanOrEqual: 4, LessThanOrEqual: 5, Contains: 6, DoesNotContain: 7 } as const;

/** Lighthouse's AssertionFailed (programs/lighthouse/src/error.rs); a Multi assertion's i-th failure is 6400 + i. */
export const LIGHTHOUSE_ASSERTION_FAILED = 6001;

/**
 * What a comparison on an account can be broken by:
 * - lower-bound: lamports > or >= a value. Only a debit of that account breaks it, and a system
 *   account is debited only by transactions it signs (a stranger can only add lamports).
 * - fixed-property: owner, data length, signer / writable / executable flags. A stranger cannot
 *   change them for an account it holds no key of.
 * - exact, upper-bound, not-equal: lamports ==, <, <=, !=: a deposit by anyone (or any other
 *   transaction that pays the account) can break it.
 * - other: anything not decoded here (data, token, stake, delta, clock assertions, bit tests,
 *   rent epoch): treated as breakable.
 */
export type GuardComparison = 'lower-bound' | 'fixed-property' | 'exact' | 'upper-bound' | 'not-equal' | 'other';

export interface GuardRead {
  account: Address | null;
  comparison: GuardComparison;
  /** The value a lamports comparison uses. */
  lamports?: bigint;
}

const lamportsComparison = (operator: number): GuardComparison => {
  switch (operator) {
    case IntegerOperator.Equal:
      return 'exact';
    case IntegerOperator.NotEqual:
      return 'not-equal';
    case IntegerOperator.GreaterThan:
    case IntegerOperator.GreaterThanOrEqual:
      return 'lower-bound';
    case IntegerOperator.LessThan:
    case IntegerOperator.LessThanOrEqual:
      return 'upper-bound';
    default:
      return 'other';
  }
};

const u64At = (data: ReadonlyUint8Array, at: number): bigint => new DataView(data.buffer, data.byteOffset + at, 8).getBigUint64(0, true);

/** A LEB128 length (Lighthouse's CompactU64), or null when it runs past the data. */
function leb128(data: ReadonlyUint8Array, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let shift = 0, i = at; i < data.length && shift < 35; shift += 7, i++) {
    const byte = data[i]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: i + 1 };
  }
  return null;
}

/**
 * One AccountInfoAssertion at `at` (programs/lighthouse/src/types/assert/account_info.rs: a u8
 * variant, then its fields): what it compares, and where the next one starts; null when the
 * bytes are not a well-formed assertion (the program itself would fail on them).
 */
function accountInfoAssertion(data: ReadonlyUint8Array, at: number): { comparison: GuardComparison; lamports?: bigint; next: number } | null {
  const variant = data[at];
  const left = data.length - at - 1;
  switch (variant) {
    case 0: // Lamports { value: u64, operator: IntegerOperator }
      return left >= 9 ? { comparison: lamportsComparison(data[at + 9]!), lamports: u64At(data, at + 1), next: at + 10 } : null;
    case 1: // DataLength { value: u64, operator }
      return left >= 9 ? { comparison: 'fixed-property', next: at + 10 } : null;
    case 2: // Owner { value: Pubkey, operator: EquatableOperator }
      return left >= 33 ? { comparison: 'fixed-property', next: at + 34 } : null;
    case 3: // KnownOwner { value: KnownProgram (u8), operator }
    case 5: // IsSigner { value: bool, operator }
    case 6: // IsWritable
    case 7: // Executable
      return left >= 2 ? { comparison: 'fixed-property', next: at + 3 } : null;
    case 4: // RentEpoch { value: u64, operator }
      return left >= 9 ? { comparison: 'other', next: at + 10 } : null;
    case 8: {
      // VerifyDatahash { expected_hash: [u8; 32], start: CompactU64, length: CompactU64 }
      if (left < 34) return null;
      const start = leb128(data, at + 33);
      const length = start && leb128(data, start.next);
      return length ? { comparison: 'other', next: length.next } : null;
    }
    default:
      return null;
  }
}

/**
 * What a Lighthouse assertion reads, account by account. AssertAccountInfo and
 * AssertAccountInfoMulti (log level, then one assertion or a LEB128-counted list, all on the
 * first account; the program never reads the accounts after it) are decoded exactly; their bytes
 * must be consumed in full, else the reads are 'other'. Every other assertion reads each of its
 * accounts in a way this module does not decode.
 */
export function guardReads(instruction: MessageInstruction): GuardRead[] {
  const { data, accounts } = instruction;
  const undecoded = (): GuardRead[] => accounts.map((account) => ({ account, comparison: 'other' }));
  const target = accounts[0] ?? null;
  if (data[0] === ASSERT_ACCOUNT_INFO) {
    const one = accountInfoAssertion(data, 2);
    if (!one || one.next !== data.length) return undecoded();
    return [{ account: target, comparison: one.comparison, ...(one.lamports !== undefined ? { lamports: one.lamports } : {}) }];
  }
  if (data[0] === ASSERT_ACCOUNT_INFO_MULTI) {
    const count = leb128(data, 2);
    if (!count || count.value === 0) return undecoded();
    const reads: GuardRead[] = [];
    let at = count.next;
    for (let i = 0; i < count.value; i++) {
      const one = accountInfoAssertion(data, at);
      if (!one) return undecoded();
      reads.push({ account: target, comparison: one.comparison, ...(one.lamports !== undefined ? { lamports: one.lamports } : {}) });
      at = one.next;
    }
    return at === data.length ? reads : undecoded();
  }
  return undecoded();
}

/** How a refusal names a comparison a stranger's deposit (or another transaction) can break. */
export function describeComparison(comparison: GuardComparison): string {
  switch (comparison) {
    case 'exact':
      return 'asserts an exact lamport balance';
    case 'upper-bound':
      return 'asserts an upper bound on the lamport balance';
    case 'not-equal':
      return 'asserts the lamport balance differs from a value';
    case 'other':
      return 'asserts something Cinder does not decode';
    case 'lower-bound':
      return 'asserts a lower bound on the lamport balance';
    case 'fixed-property':
      return 'asserts a property only the key holder can change';
  }
}
