/** What a browser wallet may add to a prepared message (plan/walletAdditions.ts), decided on compiled messages. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  getCompiledTransactionMessageEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction } from '@solana-program/token';
import { lamportsGuard, LighthouseOperator, memoryWriteGuard, phantomLikeGuards, solflareLikeGuards } from '@cinder/testkit';
import type { RelayableMessage } from '../../src/plan/relayRules.ts';
import {
  checkWalletAdditions,
  MAX_WALLET_GUARDS,
  sponsorFeeRepaid,
  sponsorFloorHolds,
  WALLET_GUARD_ROOM,
  type WalletAdditionsVerdict,
} from '../../src/plan/walletAdditions.ts';

const BLOCKHASH = { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 100n };
const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

const owner = (await generateKeyPairSigner()).address;
const sponsor = (await generateKeyPairSigner()).address;
const stranger = (await generateKeyPairSigner()).address;
const [accountA, accountB] = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address];

const signer = (address: Address) => ({ address, role: AccountRole.READONLY_SIGNER }) as never;
const close = (account: Address) => getCloseAccountInstruction({ account, destination: owner, owner: signer(owner) });
const limit = (units: number) => getSetComputeUnitLimitInstruction({ units });
const price = (microLamports: bigint) => getSetComputeUnitPriceInstruction({ microLamports });
const repay = (amount: bigint) => getTransferSolInstruction({ source: signer(owner), destination: sponsor, amount });
const memo = (text: string | Uint8Array, accounts: Address[] = []): Instruction => ({
  programAddress: MEMO,
  accounts: accounts.map((address) => ({ address, role: AccountRole.READONLY_SIGNER })),
  data: typeof text === 'string' ? new TextEncoder().encode(text) : text,
});

function compile(feePayer: Address, instructions: Instruction[], extraSigners: Address[] = []): RelayableMessage {
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(BLOCKHASH, m),
    (m) => appendTransactionMessageInstructions([...instructions, ...extraSigners.map((s) => memo('signer', [s]))], m),
  );
  return compileTransactionMessage(message) as RelayableMessage;
}

/** Cinder's prepared reclaim: budget, then two closes. */
const PREPARED = [limit(20_000), price(0n), close(accountA), close(accountB)];
const prepared = compile(owner, PREPARED);

const accepted = (verdict: WalletAdditionsVerdict) => {
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.reason);
  return verdict.additions;
};
const refused = (verdict: WalletAdditionsVerdict, pattern: RegExp, index?: number | null) => {
  assert.equal(verdict.ok, false, 'expected a refusal');
  if (verdict.ok) return;
  assert.match(verdict.reason, pattern);
  if (index !== undefined) assert.equal(verdict.index, index);
};

test('the message as prepared is accepted with no additions', () => {
  const additions = accepted(checkWalletAdditions(prepared, prepared, null));
  assert.deepEqual([additions.lighthouse, additions.memo, additions.computeBudget.changed, additions.sponsorFloor], [0, false, false, null]);
  assert.equal(additions.computeBudget.computeUnitLimit, 20_000);
});

test("Phantom's four guards around Cinder's instructions are accepted, the compute budget as prepared", () => {
  const guards = phantomLikeGuards(owner, 1_000n);
  const signed = compile(owner, [limit(20_000), price(0n), ...guards.before, close(accountA), close(accountB), ...guards.after]);
  const additions = accepted(checkWalletAdditions(prepared, signed, null));
  assert.equal(additions.lighthouse, 4);
  assert.deepEqual(
    additions.guards.map((g) => [g.index, g.name, g.dataBytes]),
    [
      [2, 'AssertAccountInfoMulti', 17],
      [3, 'AssertAccountInfoMulti', 52],
      [4, 'AssertAccountInfoMulti', 16],
      [7, 'AssertAccountInfoMulti', 27],
    ],
  );
  assert.deepEqual(additions.guards.flatMap((g) => g.breakable), [], 'lower bounds and fixed properties only');
  assert.equal(additions.computeBudget.changed, false);
});

test('Solflare-like guards and a raised limit are accepted, and the signed limit is returned', () => {
  const signed = compile(owner, [limit(28_000), price(0n), close(accountA), close(accountB), ...solflareLikeGuards(owner, 1n)]);
  const additions = accepted(checkWalletAdditions(prepared, signed, null));
  assert.equal(additions.lighthouse, 2);
  assert.deepEqual([additions.computeBudget.changed, additions.computeBudget.computeUnitLimit, additions.computeBudget.chargedUnitLimit], [true, 28_000, 28_000]);
});

test('a Seeker-like Memo and a replaced unit price are accepted where the owner pays', () => {
  const signed = compile(owner, [price(5_000n), limit(20_000), memo('Seeker', [owner]), close(accountA), close(accountB)]);
  const additions = accepted(checkWalletAdditions(prepared, signed, null));
  assert.equal(additions.memo, true);
  assert.equal(additions.computeBudget.computeUnitPriceMicroLamports, 5_000n);
});

test('a removed limit is charged at the runtime default of 200,000 units an instruction', () => {
  const signed = compile(owner, [close(accountA), close(accountB)]);
  const additions = accepted(checkWalletAdditions(prepared, signed, null));
  assert.deepEqual([additions.computeBudget.computeUnitLimit, additions.computeBudget.chargedUnitLimit], [null, 400_000]);
});

test("Cinder's own instructions must all be there, unchanged and in order", () => {
  refused(checkWalletAdditions(prepared, compile(owner, [limit(20_000), price(0n), close(accountB), close(accountA)]), null), /instruction 2 \(SPL Token CloseAccount\) is not what Cinder prepared/, 2);
  refused(checkWalletAdditions(prepared, compile(owner, [limit(20_000), price(0n), close(accountA)]), null), /Cinder's instruction 3 \(SPL Token CloseAccount\) is missing/, null);
  refused(
    checkWalletAdditions(prepared, compile(owner, [...PREPARED, getTransferSolInstruction({ source: signer(owner), destination: stranger, amount: 1n })]), null),
    /instruction 4 \(System TransferSol\) was added after Cinder's instructions/,
    4,
  );
});

test('a hostile System transfer out of the fee payer is refused, naming it', () => {
  const drain = getTransferSolInstruction({ source: signer(sponsor), destination: stranger, amount: 1_000_000n });
  const preparedSponsored = compile(sponsor, [limit(20_000), price(0n), close(accountA), repay(10_000n)]);
  const signed = compile(sponsor, [limit(20_000), price(0n), drain, close(accountA), repay(10_000n)]);
  refused(checkWalletAdditions(preparedSponsored, signed, sponsor), /instruction 2 \(System TransferSol\) is not what Cinder prepared there/, 2);
});

test('Lighthouse memory-write is refused; an unknown discriminator too', () => {
  const signed = compile(owner, [...PREPARED, memoryWriteGuard(owner, stranger, owner)]);
  refused(checkWalletAdditions(prepared, signed, null), /instruction 4 is Lighthouse MemoryWrite, which pays for a memory account/, 4);
  const unknown: Instruction = { ...lamportsGuard(owner, 4, 0n), data: new Uint8Array([42, 0]) };
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, unknown]), null), /Lighthouse instruction Cinder does not know \(discriminator 42\)/, 4);
});

test('more than four guards, or a guard over the byte bound, is refused', () => {
  const five = Array.from({ length: MAX_WALLET_GUARDS + 1 }, (_, i) => lamportsGuard(owner, LighthouseOperator.GreaterThan, BigInt(i)));
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, ...five]), null), /beyond the 4 a wallet adds/, 8);
  const big: Instruction = { ...lamportsGuard(owner, 4, 0n), data: new Uint8Array([5, ...new Array<number>(64).fill(0)]) };
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, big]), null), /65 bytes of data, more than the 64/, 4);
});

test('a second Memo, an oversized one and one that is not UTF-8 are refused', () => {
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, memo('a'), memo('b')]), null), /instruction 5 is a second Memo/, 5);
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, memo('x'.repeat(257))]), null), /Memo of 257 bytes, more than 256/, 4);
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED, memo(new Uint8Array([0xff, 0xfe]))]), null), /not valid UTF-8/, 4);
});

test('a compute budget that would fail on chain is refused', () => {
  refused(checkWalletAdditions(prepared, compile(owner, [limit(20_000), limit(30_000), close(accountA), close(accountB)]), null), /would fail on chain: instruction 1 repeats a compute-budget instruction/);
});

test('the wallet may not change the fee payer or the signers', () => {
  refused(checkWalletAdditions(prepared, compile(stranger, PREPARED), null), /changed who pays the fee/);
  refused(checkWalletAdditions(prepared, compile(owner, [...PREPARED], [stranger]), null), /changed who signs/);
});

// A sponsored message: the sponsor pays the fee, the owner signs and repays it.
const SPONSORED = [limit(20_000), price(0n), close(accountA), close(accountB), repay(10_000n)];
const preparedSponsored = compile(sponsor, SPONSORED);
const sponsoredWith = (before: Instruction[], after: Instruction[] = [], budget = SPONSORED.slice(0, 2)) =>
  compile(sponsor, [...budget, ...before, ...SPONSORED.slice(2), ...after]);

test("sponsored: guards asserting a lower bound on the sponsor's lamports are accepted, and their floor is returned", () => {
  const guards = phantomLikeGuards(sponsor, 5_000_000n);
  const additions = accepted(checkWalletAdditions(preparedSponsored, sponsoredWith(guards.before, guards.after), sponsor));
  assert.equal(additions.lighthouse, 4);
  assert.equal(additions.sponsorFloor, 5_000_001n);
  assert.equal(sponsorFloorHolds(additions.sponsorFloor, 5_010_001n, 10_000n), true);
  assert.equal(sponsorFloorHolds(additions.sponsorFloor, 5_010_000n, 10_000n), false);
  assert.equal(sponsorFloorHolds(null, 0n, 10_000n), true);
});

test("sponsored: an exact, upper-bound or not-equal assertion on the sponsor's lamports is refused, since any deposit breaks it", () => {
  for (const [operator, words] of [
    [LighthouseOperator.Equal, /asserts an exact lamport balance on the fee sponsor's account, which anyone can break by sending the sponsor lamports/],
    [LighthouseOperator.LessThanOrEqual, /asserts an upper bound on the lamport balance on the fee sponsor's account/],
    [LighthouseOperator.LessThan, /upper bound/],
    [LighthouseOperator.NotEqual, /differs from a value/],
  ] as const) {
    refused(checkWalletAdditions(preparedSponsored, sponsoredWith([lamportsGuard(sponsor, operator, 5_000_000n)]), sponsor), words, 2);
  }
  // The same exact assertion on the owner's account is the owner's business: accepted, and reported as breakable.
  const additions = accepted(checkWalletAdditions(preparedSponsored, sponsoredWith([lamportsGuard(owner, LighthouseOperator.Equal, 5n)]), sponsor));
  assert.deepEqual(additions.guards[0]!.breakable, [{ account: owner, comparison: 'exact' }]);
});

test('sponsored: the sponsor is never an account of an added Memo, a memory write, or an undecoded assertion', () => {
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([], [memo('hi', [sponsor])]), sponsor), /Memo naming the fee sponsor/);
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([memoryWriteGuard(sponsor, stranger, sponsor)]), sponsor), /MemoryWrite/);
  const dataAssertion: Instruction = { ...lamportsGuard(sponsor, 4, 0n), data: new Uint8Array([2, 0, 0, 7, ...new Array<number>(8).fill(0), 4]) };
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([dataAssertion]), sponsor), /AssertAccountData naming the fee sponsor other than as the one account an AssertAccountInfo reads/);
});

test('sponsored: the fee the signed budget implies must still be repaid', () => {
  // Limit raised by the guards' room at price 0: costs nothing.
  const raised = accepted(checkWalletAdditions(preparedSponsored, sponsoredWith([], [], [limit(20_000 + WALLET_GUARD_ROOM.computeUnits), price(0n)]), sponsor));
  assert.deepEqual(sponsorFeeRepaid(2, raised.computeBudget, 10_000n), { ok: true, feeLamports: 10_000n });
  // A raised price: 28,000 units at 1,000,000 micro-lamports is 28,000 lamports on top of 10,000 in signatures.
  const priced = accepted(checkWalletAdditions(preparedSponsored, sponsoredWith([], [], [limit(28_000), price(1_000_000n)]), sponsor));
  const check = sponsorFeeRepaid(2, priced.computeBudget, 10_000n);
  assert.equal(check.ok, false);
  assert.equal(check.feeLamports, 38_000n);
  assert.match(check.ok ? '' : check.reason, /fee becomes 38000 lamports, more than the 10000 this transaction repays/);
  assert.equal(sponsorFeeRepaid(2, priced.computeBudget, 38_000n).ok, true);
});

test("the room left for Phantom's guards: 160 bytes, one key, 8,000 compute units", () => {
  assert.deepEqual(WALLET_GUARD_ROOM, { bytes: 160, accountKeys: 1, computeUnits: 8_000 });
  // Measured: the guards add exactly that many bytes to a compiled legacy message that already names the fee payer.
  const guards = phantomLikeGuards(owner, 0n);
  const size = (m: RelayableMessage) => getCompiledTransactionMessageEncoder().encode(m).length;
  assert.equal(size(compile(owner, [...guards.before, ...PREPARED, ...guards.after])) - size(prepared), WALLET_GUARD_ROOM.bytes);
});

test('sponsored: a lamports assertion that is not well formed is read as undecoded and refused', () => {
  const trailing: Instruction = { ...lamportsGuard(sponsor, LighthouseOperator.GreaterThanOrEqual, 1n), data: new Uint8Array([...(lamportsGuard(sponsor, 4, 1n).data ?? []), 0]) };
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([trailing]), sponsor), /asserts something Cinder does not decode on the fee sponsor's account/, 2);
  const emptyMulti: Instruction = { ...lamportsGuard(sponsor, 4, 1n), data: new Uint8Array([6, 0, 0]) };
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([emptyMulti]), sponsor), /does not decode/, 2);
  const bitTest: Instruction = lamportsGuard(sponsor, 6 /* Contains */, 1n);
  refused(checkWalletAdditions(preparedSponsored, sponsoredWith([bitTest]), sponsor), /does not decode/, 2);
  // The same well-formed lower bound is accepted.
  accepted(checkWalletAdditions(preparedSponsored, sponsoredWith([lamportsGuard(sponsor, LighthouseOperator.GreaterThan, 1n)]), sponsor));
});

test('without a copy of the prepared message (its identity proven by a relay token), only the additions are judged', () => {
  const guards = phantomLikeGuards(sponsor, 1n);
  const additions = accepted(checkWalletAdditions(null, sponsoredWith(guards.before, [...guards.after, memo('note', [owner])]), sponsor));
  assert.deepEqual([additions.lighthouse, additions.memo, additions.computeBudget.changed], [4, true, null]);
  refused(checkWalletAdditions(null, sponsoredWith([lamportsGuard(sponsor, LighthouseOperator.Equal, 1n)]), sponsor), /exact lamport balance/, 2);
  refused(checkWalletAdditions(null, sponsoredWith([memoryWriteGuard(owner, stranger, owner)]), sponsor), /MemoryWrite/, 2);
});
