import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { getAddressDecoder, type Address } from '@solana/kit';
import {
  getBurnCheckedInstructionDataDecoder,
  getCloseAccountDiscriminatorBytes,
  getBurnCheckedDiscriminatorBytes,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { planBurn, TRANSACTION_SIZE_LIMIT } from '../../src/burn/planBurn.ts';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState } from '../../src/burn/tokenState.ts';
import { isCinderError, type CinderErrorCode } from '../../src/errors.ts';

const randomAddress = (): Address => getAddressDecoder().decode(randomBytes(32));
const owner = randomAddress();

function mintOf(overrides: Partial<MintState> = {}): MintState {
  return {
    address: randomAddress(),
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
    decimals: 6,
    supply: 1_000_000_000n,
    isNative: false,
    nonTransferable: false,
    permanentDelegate: null,
    ...overrides,
  };
}

function accountOf(mint: MintState, overrides: Partial<TokenAccountState> = {}): TokenAccountState {
  return {
    address: randomAddress(),
    lamports: 2_039_280n,
    mint: mint.address,
    owner,
    amount: 1_234_500_000n,
    frozen: false,
    isNative: false,
    closeAuthority: null,
    withheldAmount: 0n,
    hasConfidentialBalance: false,
    ...overrides,
  };
}

const kind = (data: Uint8Array | undefined) =>
  data?.[0] === getBurnCheckedDiscriminatorBytes()[0] ? 'burn' : data?.[0] === getCloseAccountDiscriminatorBytes()[0] ? 'close' : data?.[0] === 26 ? 'harvest' : '?';

function assertRejects(run: () => unknown, code: CinderErrorCode, detail: RegExp) {
  assert.throws(run, (e: unknown) => isCinderError(e, code) && detail.test(e.message));
}

describe('planBurn', () => {
  it('burns the whole balance with BurnChecked, then closes the account to the owner', () => {
    const mint = mintOf();
    const account = accountOf(mint);
    const plan = planBurn({ owner, mint, accounts: [account] });
    assert.equal(plan.transactions.length, 1);
    const [burn, close] = plan.transactions[0]!.instructions;
    assert.deepEqual(plan.transactions[0]!.instructions.map((i) => kind(i.data as Uint8Array)), ['burn', 'close']);
    const data = getBurnCheckedInstructionDataDecoder().decode(burn!.data!);
    assert.equal(data.amount, 1_234_500_000n);
    assert.equal(data.decimals, 6);
    assert.deepEqual(burn!.accounts!.map((a) => a.address), [account.address, mint.address, owner]);
    assert.deepEqual(close!.accounts!.map((a) => a.address), [account.address, owner, owner]);
    assert.equal(burn!.programAddress, TOKEN_PROGRAM_ADDRESS);
    assert.equal(plan.burnedAmount, 1_234_500_000n);
    assert.equal(plan.reclaimedLamports, 2_039_280n);
    assert.deepEqual(plan.closedAccounts, [account.address]);
    assert.equal(plan.unwrapsSol, false);
  });

  it('only closes an account with a zero balance', () => {
    const mint = mintOf();
    const plan = planBurn({ owner, mint, accounts: [accountOf(mint, { amount: 0n })] });
    assert.deepEqual(plan.transactions[0]!.instructions.map((i) => kind(i.data as Uint8Array)), ['close']);
    assert.equal(plan.burnedAmount, 0n);
  });

  it('never burns wrapped SOL: it closes (unwraps) the account and reclaims all its lamports', () => {
    const mint = mintOf({ address: NATIVE_MINT, decimals: 9, isNative: true });
    const account = accountOf(mint, { amount: 500_000_000n, lamports: 502_039_280n, isNative: true });
    const plan = planBurn({ owner, mint, accounts: [account] });
    assert.deepEqual(plan.transactions[0]!.instructions.map((i) => kind(i.data as Uint8Array)), ['close']);
    assert.equal(plan.burnedAmount, 0n);
    assert.equal(plan.reclaimedLamports, 502_039_280n);
    assert.equal(plan.unwrapsSol, true);
  });

  it('uses the Token-2022 program for Token-2022 mints and harvests withheld fees before burning', () => {
    const mint = mintOf({ tokenProgram: TOKEN_2022_PROGRAM_ADDRESS });
    const withheld = accountOf(mint, { withheldAmount: 50n, lamports: 2_074_080n });
    const plain = accountOf(mint, { amount: 1n });
    const plan = planBurn({ owner, mint, accounts: [withheld, plain] });
    const [tx] = plan.transactions;
    assert.deepEqual(tx!.instructions.map((i) => kind(i.data as Uint8Array)), ['harvest', 'burn', 'close', 'burn', 'close']);
    assert.ok(tx!.instructions.every((i) => i.programAddress === TOKEN_2022_PROGRAM_ADDRESS));
    assert.deepEqual(tx!.instructions[0]!.accounts!.map((a) => a.address), [mint.address, withheld.address]);
    assert.deepEqual(plan.harvestedAccounts, [withheld.address]);
    assert.equal(plan.reclaimedLamports, 2_074_080n + 2_039_280n);
  });

  it('rejects a frozen account, naming it', () => {
    const mint = mintOf();
    const frozen = accountOf(mint, { frozen: true });
    assertRejects(() => planBurn({ owner, mint, accounts: [accountOf(mint), frozen] }), 'ACCOUNT_FROZEN', new RegExp(frozen.address));
  });

  it('rejects an account whose close authority is someone else, and accepts the owner as close authority', () => {
    const mint = mintOf();
    const other = randomAddress();
    const foreign = accountOf(mint, { closeAuthority: other });
    assertRejects(() => planBurn({ owner, mint, accounts: [foreign] }), 'CLOSE_AUTHORITY_NOT_OWNER', new RegExp(`${foreign.address}.*${other}`));
    assert.equal(planBurn({ owner, mint, accounts: [accountOf(mint, { closeAuthority: owner })] }).closedAccounts.length, 1);
  });

  it('rejects a Token-2022 account with a confidential balance', () => {
    const mint = mintOf({ tokenProgram: TOKEN_2022_PROGRAM_ADDRESS });
    assertRejects(
      () => planBurn({ owner, mint, accounts: [accountOf(mint, { hasConfidentialBalance: true })] }),
      'CONFIDENTIAL_BALANCE_NOT_EMPTY',
      /confidential-transfer balance/,
    );
  });

  it('answers NO_TOKEN_ACCOUNT when the owner has no account of the mint', () => {
    const mint = mintOf();
    assertRejects(() => planBurn({ owner, mint, accounts: [] }), 'NO_TOKEN_ACCOUNT', new RegExp(`${owner} has no token account of mint ${mint.address}`));
    assertRejects(() => planBurn({ owner, mint, accounts: [accountOf(mint, { owner: randomAddress() })] }), 'NO_TOKEN_ACCOUNT', /no token account/);
  });

  for (const tokenProgram of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) {
    it(`splits many accounts into as few transactions as fit (${tokenProgram.slice(0, 8)})`, () => {
      const mint = mintOf({ tokenProgram });
      const accounts = Array.from({ length: 60 }, (_, i) => accountOf(mint, { amount: BigInt(i) }));
      const plan = planBurn({ owner, mint, accounts });
      assert.ok(plan.transactions.length > 1 && plan.transactions.length <= 5, `${plan.transactions.length} transactions`);
      assert.deepEqual([...plan.closedAccounts].sort(), accounts.map((a) => a.address).sort());
      assert.equal(plan.burnedAmount, accounts.reduce((s, a) => s + a.amount, 0n));
      // every transaction but the last is full: one more account would not have fit
      for (const tx of plan.transactions) assert.ok(tx.closedAccounts.length > 0);
      assert.ok(TRANSACTION_SIZE_LIMIT === 1232);
    });
  }
});
