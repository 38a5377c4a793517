/**
 * What the relay (POST /api/transactions) lands, read from a compiled message. Pure: no I/O.
 *
 * - Programs: only Compute Budget, System, SPL Token, Token-2022 and Associated Token, at the top
 *   level and, from the simulation's inner instructions, at any depth (PROGRAM_NOT_ALLOWED).
 * - Instructions (unless RELAY_ANY_TRANSACTION): only what Cinder itself prepares, i.e. what
 *   src/plan/pack.ts emits: compute budget; SPL Token / Token-2022 Burn, BurnChecked, CloseAccount
 *   (which is also the wSOL unwrap) and WithdrawExcessLamports, each paying out to its own
 *   authority (the owner's own accounts, as Cinder builds them); Token-2022
 *   HarvestWithheldTokensToMint (permissionless, moves withheld fees to the mint); and the System
 *   transfer that repays the fee sponsor, only in a transaction the sponsor pays for. Cinder
 *   prepares no Associated Token call and no withdraw-withheld (that needs the mint's withdraw
 *   authority, never the owner), so neither is relayed. Anything else is INSTRUCTION_NOT_ALLOWED:
 *   a plain SOL or token transfer must not go out through the operator's RPC and landing engine.
 * - The token accounts an instruction consumes (closes, burns from, withdraws from, transfers
 *   from), for the relay's overlap rule: two transactions of one request that consume the same
 *   account would fail one another after both passed their simulations on today's state.
 */
import type { Address, LegacyCompiledTransactionMessage, ReadonlyUint8Array, V0CompiledTransactionMessage, V1CompiledTransactionMessage } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { identifySystemInstruction, SYSTEM_PROGRAM_ADDRESS, SystemInstruction } from '@solana-program/system';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, identifyTokenInstruction, TOKEN_PROGRAM_ADDRESS, TokenInstruction } from '@solana-program/token';
import { identifyToken2022Instruction, TOKEN_2022_PROGRAM_ADDRESS, Token2022Instruction } from '@solana-program/token-2022';

/** The programs the relay lets a transaction run, at any depth; anything else is PROGRAM_NOT_ALLOWED. */
export const RELAY_ALLOWED_PROGRAMS: ReadonlyMap<Address, string> = new Map<Address, string>([
  [COMPUTE_BUDGET_PROGRAM_ADDRESS, 'Compute Budget'],
  [SYSTEM_PROGRAM_ADDRESS, 'System'],
  [TOKEN_PROGRAM_ADDRESS, 'SPL Token'],
  [TOKEN_2022_PROGRAM_ADDRESS, 'Token-2022'],
  [ASSOCIATED_TOKEN_PROGRAM_ADDRESS, 'Associated Token'],
]);

/** The message versions the relay accepts: v1 (SIMD-0385) is read by the same rules, its compute budget from its config. */
export type RelayableMessage = LegacyCompiledTransactionMessage | V0CompiledTransactionMessage | V1CompiledTransactionMessage;

/** One instruction of a message with its addresses resolved (null: loaded from an address lookup table). */
export interface MessageInstruction {
  index: number;
  program: Address | null;
  accounts: (Address | null)[];
  data: ReadonlyUint8Array;
}

/** One compiled instruction by its account indexes, whatever the version (v1 keeps them as headers and payloads). */
export interface IndexedInstruction {
  programAddressIndex: number;
  accountIndices: readonly number[];
  data: ReadonlyUint8Array;
}

export function indexedInstructions(message: RelayableMessage): IndexedInstruction[] {
  if (message.version === 1) {
    return message.instructionHeaders.map((header, i) => ({
      programAddressIndex: header.programAccountIndex,
      accountIndices: message.instructionPayloads[i]?.instructionAccountIndices ?? [],
      data: message.instructionPayloads[i]?.instructionData ?? new Uint8Array(),
    }));
  }
  return message.instructions.map((instruction) => ({
    programAddressIndex: instruction.programAddressIndex,
    accountIndices: instruction.accountIndices ?? [],
    data: instruction.data ?? new Uint8Array(),
  }));
}

/** Every message's instructions in one shape, legacy, v0 and v1 alike. */
export function messageInstructions(message: RelayableMessage): MessageInstruction[] {
  const at = (i: number): Address | null => message.staticAccounts[i] ?? null;
  return indexedInstructions(message).map((instruction, index) => ({
    index,
    program: at(instruction.programAddressIndex),
    accounts: instruction.accountIndices.map(at),
    data: instruction.data,
  }));
}

/** The accounts a message may write (static keys only: the header says which are writable). */
export function writableStaticAccounts(message: RelayableMessage): Address[] {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const count = message.staticAccounts.length;
  return message.staticAccounts.filter(
    (_, i) => (i < numSignerAccounts && i < numSignerAccounts - numReadonlySignerAccounts) || (i >= numSignerAccounts && i < count - numReadonlyNonSignerAccounts),
  );
}

/** kit's identify* helpers throw on a discriminator they do not know: that is simply "none of theirs". */
function kindOf<T>(identify: (data: ReadonlyUint8Array) => T, data: ReadonlyUint8Array): T | null {
  try {
    return data.length > 0 ? identify(data) : null;
  } catch {
    return null;
  }
}

type TokenKind = 'Burn' | 'BurnChecked' | 'CloseAccount' | 'WithdrawExcessLamports' | 'HarvestWithheldTokensToMint' | 'Transfer' | 'TransferChecked' | 'TransferCheckedWithFee' | 'UnwrapLamports' | 'other';

/** The token instruction, by name, for either token program (their enums number instructions differently). */
function tokenKind(instruction: MessageInstruction): { kind: TokenKind; name: string } | null {
  if (instruction.program === TOKEN_PROGRAM_ADDRESS) {
    const kind = kindOf(identifyTokenInstruction, instruction.data);
    const name = kind === null ? 'unknown' : TokenInstruction[kind];
    return { kind: (['Burn', 'BurnChecked', 'CloseAccount', 'WithdrawExcessLamports', 'Transfer', 'TransferChecked', 'UnwrapLamports'].includes(name) ? name : 'other') as TokenKind, name };
  }
  if (instruction.program === TOKEN_2022_PROGRAM_ADDRESS) {
    const kind = kindOf(identifyToken2022Instruction, instruction.data);
    const name = kind === null ? 'unknown' : Token2022Instruction[kind];
    const known = ['Burn', 'BurnChecked', 'CloseAccount', 'WithdrawExcessLamports', 'HarvestWithheldTokensToMint', 'Transfer', 'TransferChecked', 'TransferCheckedWithFee', 'UnwrapLamports'];
    return { kind: (known.includes(name) ? name : 'other') as TokenKind, name };
  }
  return null;
}

/** "SPL Token Transfer", "System TransferSol", "Memo…": how a refusal names an instruction. */
export function instructionName(instruction: MessageInstruction): string {
  const program = instruction.program === null ? 'a program loaded from an address lookup table' : (RELAY_ALLOWED_PROGRAMS.get(instruction.program) ?? instruction.program);
  const token = tokenKind(instruction);
  if (token) return `${program} ${token.name}`;
  if (instruction.program === SYSTEM_PROGRAM_ADDRESS) {
    const kind = kindOf(identifySystemInstruction, instruction.data);
    return `${program} ${kind === null ? 'unknown' : SystemInstruction[kind]}`;
  }
  return program;
}

/** The token account an instruction takes from (closes, burns from, withdraws from, transfers from), if any. */
export function consumedTokenAccount(instruction: MessageInstruction): Address | null {
  const kind = tokenKind(instruction)?.kind;
  if (!kind || kind === 'other' || kind === 'HarvestWithheldTokensToMint') return null;
  return instruction.accounts[0] ?? null;
}

/** A System TransferSol's parties and amount (12 bytes: u32 tag 2, u64 lamports), or null. */
export function transferSolOf(instruction: MessageInstruction): { from: Address; to: Address; lamports: bigint } | null {
  const { data, accounts } = instruction;
  if (instruction.program !== SYSTEM_PROGRAM_ADDRESS || data.length !== 12 || accounts.length !== 2) return null;
  if (kindOf(identifySystemInstruction, data) !== SystemInstruction.TransferSol) return null;
  const [from, to] = accounts;
  if (!from || !to) return null;
  return { from, to, lamports: new DataView(data.buffer, data.byteOffset + 4, 8).getBigUint64(0, true) };
}

/**
 * Why Cinder would never have prepared this instruction, or null when it might have. `sponsor`:
 * the fee sponsor when it pays this transaction (only then is a System transfer, to it, allowed).
 * `preparedHere`: a relay token proves this service prepared this very message (a reclaim of many
 * wallets, whose closes pay their rent to one destination: docs/many-wallets.md); only then may a
 * close pay out to an account other than its authority. Without that proof such a close is a
 * drainer's favourite instruction (an owner's wrapped SOL sent elsewhere) and is never relayed.
 */
export function notCinderInstruction(instruction: MessageInstruction, sponsor: Address | null, preparedHere = false): string | null {
  if (instruction.program === COMPUTE_BUDGET_PROGRAM_ADDRESS) return null;
  if (instruction.accounts.includes(null) || instruction.program === null) return 'uses an address lookup table (Cinder prepares legacy messages)';
  const token = tokenKind(instruction);
  if (token) {
    const [, second, third] = instruction.accounts;
    switch (token.kind) {
      case 'Burn':
      case 'BurnChecked':
      case 'HarvestWithheldTokensToMint':
        return null;
      case 'CloseAccount':
      case 'WithdrawExcessLamports':
        // account, destination, authority: Cinder pays an owner's rent to the owner, never elsewhere.
        return second === third || (preparedHere && token.kind === 'CloseAccount')
          ? null
          : 'pays out to an account other than its own authority, and no relayToken shows this service prepared it';
      default:
        return 'is not a burn, close, excess-rent withdrawal or withheld-fee harvest';
    }
  }
  const transfer = transferSolOf(instruction);
  if (transfer && sponsor !== null && transfer.to === sponsor && transfer.from !== sponsor) return null;
  if (instruction.program === SYSTEM_PROGRAM_ADDRESS) return 'is not the repayment of a fee sponsor';
  return 'is not an instruction Cinder prepares';
}

/** The first program of a simulation's inner instructions outside the allow-list (by name or address), or null. */
export function innerProgramNotAllowed(innerPrograms: readonly (Address | null)[]): string | null {
  for (const program of innerPrograms) {
    if (program === null) return 'a program the node did not name';
    if (!RELAY_ALLOWED_PROGRAMS.has(program)) return program;
  }
  return null;
}
