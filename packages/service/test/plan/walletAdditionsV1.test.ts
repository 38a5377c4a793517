/**
 * The relay's and the sponsor's rules on v1 messages (plan/walletAdditions.ts, plan/v1Config.ts,
 * operations/sponsoredMessage.ts), decided on compiled messages: the config is the compute budget,
 * read as the runtime reads it (SIMD-0385: priority fee a total in lamports, an unset limit 0).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
  type V1CompiledTransactionMessage,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction } from '@solana-program/token';
import { CinderError } from '../../src/errors.ts';
import { memoInstruction, phantomLikeGuards } from '@cinder/testkit';
import { sponsoredMessage } from '../../src/operations/sponsoredMessage.ts';
import { checkWalletAdditions, feeOfMessage, sponsorFeeRepaid, type WalletAdditionsVerdict } from '../../src/plan/walletAdditions.ts';
import { v1ConfigProblem } from '../../src/plan/v1Config.ts';

const BLOCKHASH = { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 100n };
const owner = (await generateKeyPairSigner()).address;
const sponsor = (await generateKeyPairSigner()).address;
const [accountA, accountB] = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address];
const signer = (address: Address) => ({ address, role: AccountRole.READONLY_SIGNER }) as never;
const close = (account: Address) => getCloseAccountInstruction({ account, destination: owner, owner: signer(owner) });
const repay = (amount: bigint) => getTransferSolInstruction({ source: signer(owner), destination: sponsor, amount });

type Config = Parameters<typeof setTransactionMessageConfig>[0];
const LIMITS: Config = { computeUnitLimit: 12_000, loadedAccountsDataSizeLimit: 256 * 1024, priorityFeeLamports: 0n };

function v1(feePayer: Address, instructions: Instruction[], config: Config): V1CompiledTransactionMessage {
  const message = pipe(
    createTransactionMessage({ version: 1 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(BLOCKHASH, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageConfig(config, m),
  );
  return compileTransactionMessage(message) as V1CompiledTransactionMessage;
}

const accepted = (verdict: WalletAdditionsVerdict) => {
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.reason);
  return verdict.additions;
};

test('a v1 message as prepared: its compute budget is its config, and its fee 5,000 per signature plus the stated priority fee', () => {
  const prepared = v1(owner, [close(accountA), close(accountB)], { ...LIMITS, priorityFeeLamports: 1_234n });
  const additions = accepted(checkWalletAdditions(prepared, prepared, null));
  assert.equal(additions.computeBudget.changed, false);
  assert.equal(additions.computeBudget.computeUnitLimit, 12_000);
  assert.equal(additions.computeBudget.loadedAccountsDataSizeLimit, 256 * 1024);
  assert.equal(additions.computeBudget.priorityFeeLamports, 1_234n);
  assert.equal(feeOfMessage(1, additions.computeBudget), 6_234n);
});

test('a wallet that raises the priority fee in the config is accepted as a changed compute budget, and charged what it states', () => {
  const prepared = v1(owner, [close(accountA)], LIMITS);
  const raised = v1(owner, [close(accountA)], { ...LIMITS, priorityFeeLamports: 50_000n });
  const additions = accepted(checkWalletAdditions(prepared, raised, null));
  assert.equal(additions.computeBudget.changed, true);
  assert.equal(feeOfMessage(1, additions.computeBudget), 55_000n);
});

test('a ComputeBudget instruction in a v1 message is refused, naming it: v1 budgets in its config', () => {
  const signed = v1(owner, [getSetComputeUnitPriceInstruction({ microLamports: 5n }), close(accountA)], LIMITS);
  const verdict = checkWalletAdditions(null, signed, null);
  assert.equal(verdict.ok, false);
  if (verdict.ok) return;
  assert.equal(verdict.index, 0);
  assert.match(verdict.reason, /compute-budget instruction in a v1 message/);
});

test('a config mask the runtime refuses: one priority-fee bit without the other, or a reserved bit', () => {
  const message = v1(owner, [close(accountA)], LIMITS);
  assert.equal(v1ConfigProblem(message), null);
  assert.match(v1ConfigProblem({ ...message, configMask: message.configMask & ~0b10 })!, /one of the two priority-fee bits/);
  assert.match(v1ConfigProblem({ ...message, configMask: message.configMask | 0b100000 })!, /reserved bits/);
  const verdict = checkWalletAdditions(null, { ...message, configMask: message.configMask & ~0b10 }, null);
  assert.equal(verdict.ok, false);
});

test('sponsored: repaid in full, the sponsor pays a v1 message; its fee is exact', () => {
  const message = v1(sponsor, [close(accountA), repay(10_000n)], LIMITS);
  // Two signers: the sponsor (fee payer) and the owner (the close's authority, the repayment's source).
  assert.deepEqual(sponsoredMessage(0, message, sponsor, 20_000n), { feeLamports: 10_000n, owner, sponsorFloor: null });
});

function refusedBySponsor(message: V1CompiledTransactionMessage, pattern: RegExp) {
  assert.throws(
    () => sponsoredMessage(0, message, sponsor, 20_000n),
    (error: unknown) => error instanceof CinderError && error.code === 'RELAY_TOKEN_INVALID' && pattern.test(error.message),
  );
}

test('sponsored: the policy refuses a v1 message whose limits are unset or implausible (it would fail on chain and be charged)', () => {
  refusedBySponsor(v1(sponsor, [close(accountA), repay(10_000n)], { priorityFeeLamports: 0n }), /leaves its compute-unit limit unset/);
  refusedBySponsor(v1(sponsor, [close(accountA), repay(10_000n)], { computeUnitLimit: 12_000, priorityFeeLamports: 0n }), /loaded-accounts-data limit unset/);
  refusedBySponsor(v1(sponsor, [close(accountA), repay(10_000n)], { ...LIMITS, loadedAccountsDataSizeLimit: 4_096 }), /allows 4096 bytes of loaded account data/);
  // A priority fee over what the sponsor's fee bound leaves after the two signatures.
  refusedBySponsor(v1(sponsor, [close(accountA), repay(40_000n)], { ...LIMITS, priorityFeeLamports: 30_000n }), /priority fee of 30000 lamports, over the bound of 10000/);
});

test('sponsored: a wallet that raised the v1 priority fee above the repayment is told what to do', () => {
  const message = v1(sponsor, [close(accountA), repay(10_000n)], { ...LIMITS, priorityFeeLamports: 5_000n });
  const verdict = accepted(checkWalletAdditions(null, message, sponsor));
  const check = sponsorFeeRepaid(2, verdict.computeBudget, 10_000n);
  assert.equal(check.ok, false);
  assert.equal(check.feeLamports, 15_000n);
  if (!check.ok) assert.match(check.reason, /priority fee of 5000 lamports in the v1 config/);
  refusedBySponsor(message, /repays the fee sponsor .* of its .* SOL fee: the wallet set a priority fee of 5000 lamports/);
});

test("a wallet's guards and one Memo on a v1 message are judged as on legacy: Phantom's set accepted, a foreign instruction refused", () => {
  const prepared = v1(owner, [close(accountA), close(accountB)], LIMITS);
  const guards = phantomLikeGuards(owner, 1_000n);
  const guarded = v1(owner, [...guards.before, close(accountA), close(accountB), ...guards.after, memoInstruction('reclaimed', owner)], LIMITS);
  const additions = accepted(checkWalletAdditions(prepared, guarded, null));
  assert.equal(additions.lighthouse, 4);
  assert.equal(additions.memo, true);
  assert.equal(additions.computeBudget.changed, false);
  const foreign = v1(owner, [close(accountA), close(accountB), getTransferSolInstruction({ source: signer(owner), destination: sponsor, amount: 1n })], LIMITS);
  const verdict = checkWalletAdditions(prepared, foreign, null);
  assert.equal(verdict.ok, false);
  if (!verdict.ok) assert.match(verdict.reason, /System TransferSol\) was added after Cinder's instructions/);
});
