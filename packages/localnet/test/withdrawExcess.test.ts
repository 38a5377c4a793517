/**
 * What the token programs that LiteSVM (npm `litesvm` 1.5) loads on this chain do with
 * `WithdrawExcessLamports` (discriminator 38): both support it, for token accounts and mints.
 *
 * Sources relied on:
 * - Tokenkeg… is p-token (its program data holds a 100,312-byte ELF with the path
 *   `pinocchio/program/src/processor/…` and no `Instruction: …` log strings; classic SPL Token's
 *   134,080-byte ELF is also inside the .node but is not the one loaded). solana-program/token
 *   `p-token/src/processor/withdraw_excess_lamports.rs`: `let [source, destination, authority,
 *   remaining @ ..] = accounts`, then `match source_data.len() { Account::LEN (165) => native →
 *   NativeNotSupported, else validate_owner(owner); Mint::LEN (82) => validate_owner(mint_authority);
 *   Multisig::LEN => …; _ => Err(TokenError::InvalidState) }`, then moves `lamports −
 *   Rent::get()?.minimum_balance(len)` to the destination. No sysvar account is passed.
 * - Token-2022 (615,936-byte ELF with `Instruction: WithdrawExcessLamports`/`UnwrapLamports`).
 *   solana-program/token-2022 `program/src/processor.rs` `process_withdraw_excess_lamports`: same
 *   three accounts (source, destination, authority, then multisig signers), unpacks the source as
 *   an Account or a Mint with extensions, `validate_owner`, `Rent::get()?.minimum_balance(data_len)`.
 *   Newer versions call `check_program_account(source_info.owner)?` first → `IncorrectProgramId`
 *   when the source is not owned by Token-2022.
 *
 * Pitfall behind an earlier probe (classic → custom 0xd, Token-2022 → IncorrectProgramId): the
 * kit builders take `{ source, destination, authority }`. With other key names (e.g.
 * `sourceAccount`), the Codama-generated builder fills the missing accounts with the program's own
 * address, so the source is the 36-byte program account: p-token answers InvalidState (its length
 * is none of 165/82/355) and Token-2022 answers IncorrectProgramId (owner is the BPF loader).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getWithdrawExcessLamportsInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { getWithdrawExcessLamportsInstruction as getWithdrawExcessLamports2022 } from '@solana-program/token-2022';
import { Rent } from 'litesvm';
import { createAta, createFundedSigner, createTestMint, getLamports, sendInstructions, startTestChain, type TestChain } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS, wrapSol } from '@cinder/testkit';

const EXCESS = 1_000_000n;
const TOKEN_ACCOUNT_RENT = 2_039_280n; // 165 bytes
const TOKEN_2022_ATA_RENT = 2_074_080n; // 170 bytes (ImmutableOwner extension)
const MINT_RENT = 1_461_600n; // 82 bytes

let chain: TestChain;
let payer: KeyPairSigner;

before(async () => {
  chain = await startTestChain();
  ({ signer: payer } = await createFundedSigner(chain));
});
after(async () => {
  await chain.close();
});

const json = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as unknown;

async function simulate(instructions: Instruction[]): Promise<{ err: unknown; logs: readonly string[] }> {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  const { value } = await chain.rpc.simulateTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  return { err: json(value.err), logs: value.logs ?? [] };
}

function withdrawIx(program: Address, source: Address, destination: Address, authority: KeyPairSigner) {
  const build = program === TOKEN_PROGRAM_ADDRESS ? getWithdrawExcessLamportsInstruction : getWithdrawExcessLamports2022;
  return build({ source, destination, authority }, { programAddress: program });
}

/** A mint (authority = payer) and payer's ATA, each topped up with EXCESS lamports over rent. */
async function fixtures(program: Address): Promise<{ mint: Address; ata: Address; destination: Address }> {
  const mint = program === TOKEN_PROGRAM_ADDRESS ? await createTestMint(chain, payer) : await createMint2022(chain, payer);
  const ata = await createAta(chain, payer, payer.address, mint, program);
  await sendInstructions(chain, payer, [
    getTransferSolInstruction({ source: payer, destination: ata, amount: EXCESS }),
    getTransferSolInstruction({ source: payer, destination: mint, amount: EXCESS }),
  ]);
  const destination = (await generateKeyPairSigner()).address;
  await sendInstructions(chain, payer, [getTransferSolInstruction({ source: payer, destination, amount: 1_000_000_000n })]);
  return { mint, ata, destination };
}

test('the loaded binaries: Tokenkeg is p-token (100,312-byte ELF), Token-2022 is a 615,936-byte ELF', () => {
  const svm = chain.localnet.svm;
  const data = (a: Address) => {
    const account = svm.getAccount(a);
    assert.ok(account.exists);
    return account.data;
  };
  // Program account = UpgradeableLoaderState::Program { programdata }; ProgramData has a 45-byte header.
  const elf = (program: Address) => data(getAddressDecoder().decode(data(program).subarray(4, 36))).subarray(45);
  const token = Buffer.from(elf(TOKEN_PROGRAM_ADDRESS));
  const token2022 = Buffer.from(elf(TOKEN_2022_PROGRAM_ADDRESS));
  assert.equal(token.length, 100_312);
  assert.ok(token.includes('pinocchio/program/src/processor'));
  assert.ok(!token.includes('Instruction: Transfer'));
  assert.equal(token2022.length, 615_936);
  assert.ok(token2022.includes('Instruction: WithdrawExcessLamports'));
});

test('rent: 6960 lamports/byte-year, threshold 1, so 165 → 2,039,280 and 0 → 890,880', async () => {
  const rent = chain.localnet.svm.getRent();
  assert.deepEqual([rent.lamportsPerByteYear, rent.exemptionThreshold, rent.burnPercent], [6960n, 1, 50]);
  const min = async (n: bigint) => chain.rpc.getMinimumBalanceForRentExemption(n).send();
  assert.deepEqual([await min(165n), await min(0n), await min(82n), await min(170n)], [TOKEN_ACCOUNT_RENT, 890_880n, MINT_RENT, TOKEN_2022_ATA_RENT]);
});

for (const [name, program, ataRent, instructionLog] of [
  ['SPL Token (p-token)', TOKEN_PROGRAM_ADDRESS, TOKEN_ACCOUNT_RENT, undefined],
  ['Token-2022', TOKEN_2022_PROGRAM_ADDRESS, TOKEN_2022_ATA_RENT, 'Program log: Instruction: WithdrawExcessLamports'],
] as const) {
  test(`${name}: WithdrawExcessLamports [source(w), destination(w), authority(s)] moves the excess of a token account and a mint`, async () => {
    const { mint, ata, destination } = await fixtures(program);
    const ix = withdrawIx(program, ata, destination, payer);
    assert.deepEqual(Array.from(ix.data), [38]);
    const simulated = await simulate([ix]);
    assert.equal(simulated.err, null);
    assert.equal(simulated.logs.find((l) => l.startsWith('Program log: Instruction:')), instructionLog);

    const before = await getLamports(chain, destination);
    await sendInstructions(chain, payer, [ix, withdrawIx(program, mint, destination, payer)]);
    assert.equal(await getLamports(chain, ata), ataRent);
    assert.equal(await getLamports(chain, mint), MINT_RENT);
    assert.equal((await getLamports(chain, destination)) - before, 2n * EXCESS);

    // Nothing left to withdraw: succeeds and moves 0.
    await sendInstructions(chain, payer, [withdrawIx(program, ata, destination, payer)]);
    assert.equal(await getLamports(chain, ata), ataRent);
  });

  test(`${name}: a wrong authority is OwnerMismatch (custom 4)`, async () => {
    const { ata, destination } = await fixtures(program);
    const stranger = await generateKeyPairSigner();
    assert.deepEqual((await simulate([withdrawIx(program, ata, destination, stranger)])).err, { InstructionError: [0, { Custom: 4 }] });
  });
}

test('the earlier probe errors come from misnamed builder inputs (source = the program account itself)', async () => {
  const { ata, destination } = await fixtures(TOKEN_PROGRAM_ADDRESS);
  const misnamed = { sourceAccount: ata, destinationAccount: destination, authority: payer } as unknown as Parameters<typeof getWithdrawExcessLamportsInstruction>[0];
  const classic = getWithdrawExcessLamportsInstruction(misnamed);
  assert.deepEqual(classic.accounts.slice(0, 2).map((a) => a.address), [TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS]);
  const a = await simulate([classic]);
  assert.deepEqual(a.err, { InstructionError: [0, { Custom: 13 }] });
  assert.ok(a.logs.includes('Program log: Error: Invalid account state for operation'));
  const b = await simulate([getWithdrawExcessLamports2022(misnamed)]);
  assert.deepEqual(b.err, { InstructionError: [0, 'IncorrectProgramId'] });
  assert.ok(b.logs.includes('Program log: Instruction: WithdrawExcessLamports'));
});

test('SPL Token (p-token): wrapped SOL is refused with NativeNotSupported (custom 10)', async () => {
  const wsol = await wrapSol(chain, payer, 5_000_000n);
  const destination = (await generateKeyPairSigner()).address;
  assert.deepEqual((await simulate([withdrawIx(TOKEN_PROGRAM_ADDRESS, wsol, destination, payer)])).err, { InstructionError: [0, { Custom: 10 }] });
});

test('setRent (lower lamports per byte) is honoured by RPC and by both programs, so old accounts hold excess', async () => {
  const svm = chain.localnet.svm;
  const [classic, t22] = [await fixtures(TOKEN_PROGRAM_ADDRESS), await fixtures(TOKEN_2022_PROGRAM_ADDRESS)];
  const original = svm.getRent();
  svm.setRent(new Rent(3480n, 1, 50)); // half the per-byte rate
  try {
    assert.equal(await chain.rpc.getMinimumBalanceForRentExemption(165n).send(), TOKEN_ACCOUNT_RENT / 2n);
    await sendInstructions(chain, payer, [
      withdrawIx(TOKEN_PROGRAM_ADDRESS, classic.ata, classic.destination, payer),
      withdrawIx(TOKEN_2022_PROGRAM_ADDRESS, t22.ata, t22.destination, payer),
    ]);
    assert.equal(await getLamports(chain, classic.ata), TOKEN_ACCOUNT_RENT / 2n);
    assert.equal(await getLamports(chain, t22.ata), TOKEN_2022_ATA_RENT / 2n);
  } finally {
    svm.setRent(original);
  }
  assert.equal(await chain.rpc.getMinimumBalanceForRentExemption(165n).send(), TOKEN_ACCOUNT_RENT);
});
