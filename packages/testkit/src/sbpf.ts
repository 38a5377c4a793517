/**
 * Tiny sBPF programs the tests build themselves, for LiteSVM's addProgram: no Rust toolchain
 * exists here, and no binary built elsewhere is committed. Two stand-ins for Lighthouse (the
 * assertion program wallets insert into what they sign):
 *
 * - noopProgram(): `mov64 r0, 0; exit`, which accepts any instruction;
 * - lamportsAssertionProgram(): asserts as Lighthouse's AssertAccountInfo { Lamports } does. Data
 *   [5, log level, 0, value u64 LE, operator u8] (Lighthouse's borsh layout); it reads the lamports
 *   of its one account and compares them with the value under the operator (== != > < >= <=,
 *   Lighthouse's IntegerOperator numbering); a mismatch returns Lighthouse's AssertionFailed
 *   (custom error 6001), other data InvalidInstructionData (6000), another number of accounts
 *   NotEnoughAccounts (6002). One account only: the input buffer places the instruction data
 *   after every account, and one account keeps the stand-in a straight line of code.
 *
 * The ELF is the one solana-sbpf's lenient loader accepts for SBPF v0 (e_flags 0): a 64-bit
 * little-endian ET_DYN for EM_BPF, a null section, exactly one .text (its address equal to its
 * file offset, which the loader demands of deployed programs), a section-name string table, the
 * entry point at the start of .text, no program headers, no relocations (the code makes no calls).
 */

/** One 8-byte instruction: opcode, dst | src << 4, offset (i16), immediate (i32). */
interface Insn {
  op: number;
  dst?: number;
  src?: number;
  off?: number | string;
  imm?: number;
}

const OP = {
  MOV64_IMM: 0xb7,
  EXIT: 0x95,
  LDXDW: 0x79,
  LDXB: 0x71,
  ADD64_IMM: 0x07,
  ADD64_REG: 0x0f,
  AND64_IMM: 0x57,
  JA: 0x05,
  JEQ_IMM: 0x15,
  JNE_IMM: 0x55,
  JEQ_REG: 0x1d,
  JNE_REG: 0x5d,
  JGT_REG: 0x2d,
  JGE_REG: 0x3d,
  JLT_REG: 0xad,
  JLE_REG: 0xbd,
} as const;

/** Assembles instructions; a string `off` is a label, resolved to pc-relative (target - pc - 1). */
function assemble(program: (Insn | string)[]): Uint8Array {
  const labels = new Map<string, number>();
  const insns: Insn[] = [];
  for (const item of program) {
    if (typeof item === 'string') labels.set(item, insns.length);
    else insns.push(item);
  }
  const out = new Uint8Array(insns.length * 8);
  const view = new DataView(out.buffer);
  insns.forEach((insn, pc) => {
    let off = insn.off ?? 0;
    if (typeof off === 'string') {
      const target = labels.get(off);
      if (target === undefined) throw new Error(`sbpf: unknown label ${off}`);
      off = target - pc - 1;
    }
    view.setUint8(pc * 8, insn.op);
    view.setUint8(pc * 8 + 1, ((insn.src ?? 0) << 4) | (insn.dst ?? 0));
    view.setInt16(pc * 8 + 2, off, true);
    view.setInt32(pc * 8 + 4, insn.imm ?? 0, true);
  });
  return out;
}

const EM_BPF = 247;
const ET_DYN = 3;
const SHT_PROGBITS = 1;
const SHT_STRTAB = 3;
const SHF_ALLOC = 2;
const SHF_EXECINSTR = 4;
const EHDR_SIZE = 64;
const SHDR_SIZE = 64;
const PHDR_SIZE = 56;

/** Wraps sBPF code in the smallest ELF solana-sbpf loads as an SBPF v0 program. */
export function sbpfElf(text: Uint8Array): Uint8Array {
  if (text.length === 0 || text.length % 8 !== 0) throw new RangeError('sbpf: code must be whole 8-byte instructions');
  const names = new TextEncoder().encode('\0.text\0.shstrtab\0');
  const textOffset = EHDR_SIZE;
  const namesOffset = textOffset + text.length;
  const shoff = Math.ceil((namesOffset + names.length) / 8) * 8;
  const elf = new Uint8Array(shoff + 3 * SHDR_SIZE);
  const view = new DataView(elf.buffer);
  elf.set([0x7f, 0x45, 0x4c, 0x46, 2 /* 64-bit */, 1 /* little-endian */, 1 /* EV_CURRENT */, 0 /* System V ABI */]);
  view.setUint16(16, ET_DYN, true);
  view.setUint16(18, EM_BPF, true);
  view.setUint32(20, 1, true); // e_version
  view.setBigUint64(24, BigInt(textOffset), true); // e_entry: the first instruction (address = offset)
  view.setBigUint64(32, BigInt(EHDR_SIZE), true); // e_phoff (no program headers follow)
  view.setBigUint64(40, BigInt(shoff), true);
  view.setUint32(48, 0, true); // e_flags: SBPF v0
  view.setUint16(52, EHDR_SIZE, true);
  view.setUint16(54, PHDR_SIZE, true);
  view.setUint16(56, 0, true); // e_phnum
  view.setUint16(58, SHDR_SIZE, true);
  view.setUint16(60, 3, true); // e_shnum: null, .text, .shstrtab
  view.setUint16(62, 2, true); // e_shstrndx
  elf.set(text, textOffset);
  elf.set(names, namesOffset);
  const section = (index: number, name: number, type: number, flags: number, addr: number, offset: number, size: number, align: number) => {
    const at = shoff + index * SHDR_SIZE;
    view.setUint32(at, name, true);
    view.setUint32(at + 4, type, true);
    view.setBigUint64(at + 8, BigInt(flags), true);
    view.setBigUint64(at + 16, BigInt(addr), true);
    view.setBigUint64(at + 24, BigInt(offset), true);
    view.setBigUint64(at + 32, BigInt(size), true);
    view.setBigUint64(at + 48, BigInt(align), true);
  };
  section(1, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, textOffset, textOffset, text.length, 8);
  section(2, 7, SHT_STRTAB, 0, 0, namesOffset, names.length, 1);
  return elf;
}

/** Accepts every instruction. */
export function noopProgram(): Uint8Array {
  return sbpfElf(assemble([{ op: OP.MOV64_IMM, dst: 0, imm: 0 }, { op: OP.EXIT }]));
}

/** Lighthouse's error numbers (programs/lighthouse/src/error.rs). */
export const LIGHTHOUSE_ERRORS = { InvalidInstructionData: 6000, AssertionFailed: 6001, NotEnoughAccounts: 6002 } as const;

// The aligned input buffer (loaders v2/v3): u64 account count, then per account dup marker,
// is_signer, is_writable, executable, 4 bytes of padding, key, owner, u64 lamports, u64 data
// length, the data, 10,240 bytes of room to grow, padding to 8, u64 rent epoch; then the
// instruction data's u64 length and its bytes.
const FIRST_LAMPORTS = 8 + 8 + 32 + 32;
const FIRST_DATA_LEN = FIRST_LAMPORTS + 8;
const FIRST_DATA = FIRST_DATA_LEN + 8;
const MAX_PERMITTED_DATA_INCREASE = 10_240;

/** Asserts on its one account's lamports as Lighthouse's AssertAccountInfo { Lamports } does. */
export function lamportsAssertionProgram(): Uint8Array {
  const [r0, r1, r2, r3, r4, r5, r6, r7, r8] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const compare = (name: string, op: number): (Insn | string)[] => [name, { op, dst: r3, src: r7, off: 'ok' }, { op: OP.JA, off: 'fail' }];
  return sbpfElf(
    assemble([
      { op: OP.LDXDW, dst: r2, src: r1, off: 0 },
      { op: OP.JNE_IMM, dst: r2, imm: 1, off: 'accounts' },
      { op: OP.LDXDW, dst: r3, src: r1, off: FIRST_LAMPORTS },
      // r4 = the input plus the first account's data and its room, aligned to 8.
      { op: OP.LDXDW, dst: r4, src: r1, off: FIRST_DATA_LEN },
      { op: OP.ADD64_IMM, dst: r4, imm: MAX_PERMITTED_DATA_INCREASE + 7 },
      { op: OP.AND64_IMM, dst: r4, imm: -8 },
      { op: OP.ADD64_REG, dst: r4, src: r1 },
      // After the data: the rent epoch (8), the instruction data's length (8), its bytes.
      { op: OP.LDXDW, dst: r5, src: r4, off: FIRST_DATA + 8 },
      { op: OP.JNE_IMM, dst: r5, imm: 12, off: 'data' },
      { op: OP.LDXB, dst: r6, src: r4, off: FIRST_DATA + 16 },
      { op: OP.JNE_IMM, dst: r6, imm: 5, off: 'data' }, // AssertAccountInfo
      { op: OP.LDXB, dst: r6, src: r4, off: FIRST_DATA + 18 },
      { op: OP.JNE_IMM, dst: r6, imm: 0, off: 'data' }, // the Lamports variant
      { op: OP.LDXDW, dst: r7, src: r4, off: FIRST_DATA + 19 },
      { op: OP.LDXB, dst: r8, src: r4, off: FIRST_DATA + 27 },
      { op: OP.JEQ_IMM, dst: r8, imm: 0, off: 'eq' },
      { op: OP.JEQ_IMM, dst: r8, imm: 1, off: 'ne' },
      { op: OP.JEQ_IMM, dst: r8, imm: 2, off: 'gt' },
      { op: OP.JEQ_IMM, dst: r8, imm: 3, off: 'lt' },
      { op: OP.JEQ_IMM, dst: r8, imm: 4, off: 'ge' },
      { op: OP.JEQ_IMM, dst: r8, imm: 5, off: 'le' },
      { op: OP.JA, off: 'data' },
      ...compare('eq', OP.JEQ_REG),
      ...compare('ne', OP.JNE_REG),
      ...compare('gt', OP.JGT_REG),
      ...compare('lt', OP.JLT_REG),
      ...compare('ge', OP.JGE_REG),
      ...compare('le', OP.JLE_REG),
      'ok',
      { op: OP.MOV64_IMM, dst: r0, imm: 0 },
      { op: OP.EXIT },
      'fail',
      { op: OP.MOV64_IMM, dst: r0, imm: LIGHTHOUSE_ERRORS.AssertionFailed },
      { op: OP.EXIT },
      'data',
      { op: OP.MOV64_IMM, dst: r0, imm: LIGHTHOUSE_ERRORS.InvalidInstructionData },
      { op: OP.EXIT },
      'accounts',
      { op: OP.MOV64_IMM, dst: r0, imm: LIGHTHOUSE_ERRORS.NotEnoughAccounts },
      { op: OP.EXIT },
    ]),
  );
}
