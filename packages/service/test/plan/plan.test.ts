/**
 * The pure planner, without a network: each account case → its action and reason, the packing of
 * actions into legacy transactions at the 1,232-byte limit, and the money rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { address, blockhash, compileTransaction, createNoopSigner, generateKeyPairSigner, getTransactionEncoder, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState } from '../../src/plan/tokenState.ts';
import { planAccountActions, type AccountAction, type WalletState } from '../../src/plan/actions.ts';
import { assertFeeWithinReclaim, assertOwnerCanPay, canRepaySponsor, formatNetSol, leavesValidBalance, missingForFees } from '../../src/plan/money.ts';
import {
  legacyTransactionSize,
  MAX_COMPUTE_UNIT_LIMIT,
  packTransactions,
  TRANSACTION_SIZE_LIMIT,
  transactionInstructions,
  transactionMessage,
  transactionSize,
  withComputeBudget,
} from '../../src/plan/pack.ts';
import { WALLET_GUARD_ROOM } from '../../src/plan/walletAdditions.ts';
import { DEFAULT_RENT, decodeRent, rentExemptMinimum } from '../../src/plan/rent.ts';
import { isCinderError } from '../../src/errors.ts';

const randomAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;

function mintState(addr: Address, over: Partial<MintState> = {}): MintState {
  return {
    address: addr,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
    decimals: 6,
    supply: 1_000_000n,
    isNative: addr === NATIVE_MINT,
    nonTransferable: false,
    permanentDelegate: null,
    paused: false,
    permissionedBurn: false,
    ...over,
  };
}

function tokenAccount(owner: Address, mint: Address, addr: Address, over: Partial<TokenAccountState> = {}): TokenAccountState {
  return {
    address: addr,
    lamports: 2_039_280n,
    space: 165,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
    mint,
    owner,
    amount: 0n,
    frozen: false,
    isNative: false,
    closeAuthority: null,
    withheldAmount: 0n,
    hasConfidentialBalance: false,
    ...over,
  };
}

function wallet(owner: Address, accounts: TokenAccountState[], mints: MintState[]): WalletState {
  return { owner, ownerLamports: 1_000_000_000n, accounts, mints: new Map(mints.map((m) => [m.address, m])), rent: DEFAULT_RENT };
}

const only = (actions: AccountAction[]) => {
  assert.equal(actions.length, 1);
  return actions[0]!;
};

describe('rent: the rent-exempt minimum from the Rent sysvar', () => {
  it('is 2,039,280 lamports for a 165-byte account and 890,880 for 0 bytes under both sysvar formats', () => {
    // (128 + 165) × 3480 × 2 = (128 + 165) × 6960 × 1: the SIMD-0194 format doubles the rate and sets the threshold to 1.
    assert.equal(rentExemptMinimum(DEFAULT_RENT, 165), 2_039_280n);
    assert.equal(rentExemptMinimum({ lamportsPerByte: 6960n, exemptionThreshold: 1 }, 165), 2_039_280n);
    assert.equal(rentExemptMinimum(DEFAULT_RENT, 0), 890_880n);
    // SIMD-0437's second step, 5,080 lamports per byte: a token account needs 1,488,440.
    assert.equal(rentExemptMinimum({ lamportsPerByte: 5080n, exemptionThreshold: 1 }, 165), 1_488_440n);
  });

  it('decodes the sysvar layout (u64 lamports per byte, f64 threshold, u8 burn percent)', () => {
    const data = new Uint8Array(17);
    const view = new DataView(data.buffer);
    view.setBigUint64(0, 5080n, true);
    view.setFloat64(8, 1, true);
    data[16] = 50;
    assert.deepEqual(decodeRent(data), { lamportsPerByte: 5080n, exemptionThreshold: 1 });
    assert.equal(decodeRent(new Uint8Array(8)), null);
  });
});

describe('planAccountActions: one action per account, with its reason', () => {
  it('closes empty accounts, keeps balances, burns listed mints, unwraps wrapped SOL only when empty or listed', async () => {
    const owner = await randomAddress();
    const [m1, m2] = [await randomAddress(), await randomAddress()];
    const empty = tokenAccount(owner, m1, await randomAddress());
    const held = tokenAccount(owner, m2, await randomAddress(), { amount: 5n });
    const wsolEmpty = tokenAccount(owner, NATIVE_MINT, await randomAddress(), { isNative: true });
    const wsolFull = tokenAccount(owner, NATIVE_MINT, await randomAddress(), { isNative: true, amount: 10n, lamports: 2_039_290n });
    const state = wallet(owner, [empty, held, wsolEmpty, wsolFull], [mintState(m1), mintState(m2), mintState(NATIVE_MINT)]);

    const byAddress = (actions: AccountAction[]) => new Map(actions.map((a) => [a.account.address, a]));
    const plain = byAddress(await planAccountActions(state, { burnMints: new Set(), withdrawExcess: false }));
    assert.equal(plain.get(empty.address)!.action, 'close');
    assert.equal(plain.get(empty.address)!.returnsLamports, 2_039_280n);
    assert.equal(plain.get(held.address)!.action, 'keep');
    assert.equal(plain.get(held.address)!.returnsLamports, 0n);
    assert.equal(plain.get(wsolEmpty.address)!.action, 'unwrap');
    assert.equal(plain.get(wsolFull.address)!.action, 'keep');

    const listed = byAddress(await planAccountActions(state, { burnMints: new Set([m2, NATIVE_MINT]), withdrawExcess: false }));
    assert.equal(listed.get(held.address)!.action, 'burn_and_close');
    assert.equal(listed.get(held.address)!.burnAmount, 5n);
    // Listing the native mint unwraps (SOL cannot be burned); all its lamports come back.
    assert.equal(listed.get(wsolFull.address)!.action, 'unwrap');
    assert.equal(listed.get(wsolFull.address)!.burnAmount, 0n);
    assert.equal(listed.get(wsolFull.address)!.returnsLamports, 2_039_290n);
  });

  it('skips with the money rules\' codes what cannot be done, and only that', async () => {
    const owner = await randomAddress();
    const other = await randomAddress();
    const cases: [string, Partial<TokenAccountState>, Partial<MintState>, string | null][] = [
      ['frozen', { frozen: true }, {}, 'ACCOUNT_FROZEN'],
      ['close authority elsewhere', { closeAuthority: other }, {}, 'CLOSE_AUTHORITY_NOT_OWNER'],
      ['close authority is the owner', { closeAuthority: owner }, {}, null],
      ['confidential balance', { hasConfidentialBalance: true }, {}, 'CONFIDENTIAL_BALANCE_NOT_EMPTY'],
      ['paused mint, balance', { amount: 3n }, { paused: true }, 'MINT_PAUSED'],
      ['paused mint, empty', {}, { paused: true }, null],
      ['permissioned burn, balance', { amount: 3n }, { permissionedBurn: true }, 'BURN_NOT_PERMITTED'],
      ['permissioned burn, empty', {}, { permissionedBurn: true }, null],
    ];
    for (const [name, accountOver, mintOver, code] of cases) {
      const mint = await randomAddress();
      const account = tokenAccount(owner, mint, await randomAddress(), accountOver);
      const action = only(await planAccountActions(wallet(owner, [account], [mintState(mint, mintOver)]), { burnMints: new Set([mint]), withdrawExcess: false }));
      assert.equal(action.code, code, name);
      assert.equal(action.action === 'skip', code !== null, name);
    }
  });

  it('harvests withheld Token-2022 fees before closing, and needs the mint for that', async () => {
    const owner = await randomAddress();
    const mint = await randomAddress();
    const account = tokenAccount(owner, mint, await randomAddress(), { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS, withheldAmount: 7n, space: 178 });
    const withMint = only(await planAccountActions(wallet(owner, [account], [mintState(mint, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })]), { burnMints: new Set(), withdrawExcess: false }));
    assert.equal(withMint.action, 'close');
    assert.equal(withMint.harvest, true);
    const noMint = only(await planAccountActions(wallet(owner, [account], []), { burnMints: new Set(), withdrawExcess: false }));
    assert.deepEqual([noMint.action, noMint.code], ['skip', 'MINT_NOT_FOUND']);
  });

  it('withdraws the excess of kept accounts only when asked, and never from wrapped SOL or a frozen account', async () => {
    const owner = await randomAddress();
    const mint = await randomAddress();
    const rich = tokenAccount(owner, mint, await randomAddress(), { amount: 1n, lamports: 2_039_280n + 500n });
    const frozen = tokenAccount(owner, mint, await randomAddress(), { amount: 1n, lamports: 2_039_280n + 500n, frozen: true });
    const wsol = tokenAccount(owner, NATIVE_MINT, await randomAddress(), { isNative: true, amount: 500n, lamports: 2_039_780n });
    const state = wallet(owner, [rich, frozen, wsol], [mintState(mint), mintState(NATIVE_MINT)]);
    const asked = new Map((await planAccountActions(state, { burnMints: new Set(), withdrawExcess: true })).map((a) => [a.account.address, a]));
    assert.deepEqual([asked.get(rich.address)!.action, asked.get(rich.address)!.returnsLamports, asked.get(rich.address)!.excessLamports], ['withdraw_excess', 500n, 500n]);
    assert.equal(asked.get(frozen.address)!.action, 'keep');
    assert.deepEqual([asked.get(wsol.address)!.action, asked.get(wsol.address)!.excessLamports], ['keep', 0n]);
    const notAsked = await planAccountActions(state, { burnMints: new Set(), withdrawExcess: false });
    assert.ok(notAsked.every((a) => a.action === 'keep'));
  });

  it('ignores accounts of another owner', async () => {
    const owner = await randomAddress();
    const mint = await randomAddress();
    const foreign = tokenAccount(await randomAddress(), mint, await randomAddress());
    assert.deepEqual(await planAccountActions(wallet(owner, [foreign], [mintState(mint)]), { burnMints: new Set(), withdrawExcess: false }), []);
  });
});

describe('packTransactions: as many closes per legacy transaction as 1,232 bytes allow', () => {
  async function closes(count: number, program: Address) {
    const owner = await randomAddress();
    const accounts = await Promise.all(
      Array.from({ length: count }, async () => tokenAccount(owner, address('So11111111111111111111111111111111111111112'), await randomAddress(), { tokenProgram: program as TokenAccountState['tokenProgram'] })),
    );
    // Empty accounts of many mints: the mint does not appear in a close, so it costs no bytes.
    const mints = await Promise.all(accounts.map(async () => await randomAddress()));
    const withMints = accounts.map((a, i) => ({ ...a, mint: mints[i]!, isNative: false }));
    const state = wallet(owner, withMints, mints.map((m) => mintState(m, { tokenProgram: program as MintState['tokenProgram'] })));
    return { owner, actions: await planAccountActions(state, { burnMints: new Set(), withdrawExcess: false }) };
  }

  for (const [name, program] of [['SPL Token', TOKEN_PROGRAM_ADDRESS], ['Token-2022', TOKEN_2022_PROGRAM_ADDRESS]] as const) {
    it(`${name}: fills each transaction to the size limit, more than the 20 closes other tools use`, async () => {
      const { owner, actions } = await closes(60, program);
      const signer = createNoopSigner(owner);
      const parties = { owner: signer, feePayer: signer };
      const transactions = await packTransactions(actions, parties);
      const sizes = transactions.map((t) => t.actions.length);
      assert.equal(sizes.reduce((a, b) => a + b, 0), 60);
      assert.ok(sizes[0]! > 20, `closes per transaction: ${sizes.join(', ')}`);
      for (const t of transactions) assert.ok(transactionSize(t.actions, parties) <= TRANSACTION_SIZE_LIMIT);
      // Full: one more account would not fit.
      assert.ok(transactionSize([...transactions[0]!.actions, transactions[1]!.actions[0]!], parties) > TRANSACTION_SIZE_LIMIT);
    });
  }

  it('for a browser wallet, each transaction leaves the room of Phantom\'s four guards (160 bytes), and is otherwise full', async () => {
    const { owner, actions } = await closes(60, TOKEN_PROGRAM_ADDRESS);
    const signer = createNoopSigner(owner);
    const parties = { owner: signer, feePayer: createNoopSigner(await randomAddress()) };
    const full = await packTransactions(actions, parties);
    const roomy = await packTransactions(actions, parties, WALLET_GUARD_ROOM);
    assert.equal(roomy.reduce((sum, t) => sum + t.actions.length, 0), 60);
    assert.ok(roomy[0]!.actions.length < full[0]!.actions.length, `closes per transaction: ${roomy[0]!.actions.length} with room, ${full[0]!.actions.length} without`);
    for (const t of roomy) assert.ok(transactionSize(t.actions, parties) + WALLET_GUARD_ROOM.bytes <= TRANSACTION_SIZE_LIMIT);
    // Otherwise full: one more account would eat into the room.
    assert.ok(transactionSize([...roomy[0]!.actions, roomy[1]!.actions[0]!], parties) + WALLET_GUARD_ROOM.bytes > TRANSACTION_SIZE_LIMIT);
  });

  it('computes the exact wire size kit encodes, for plain, burning, harvesting and sponsored transactions', async () => {
    const owner = await randomAddress();
    const ownerSigner = createNoopSigner(owner);
    const mint = await randomAddress();
    const accounts = await Promise.all(
      [0n, 5n, 0n].map(async (amount, i) =>
        tokenAccount(owner, mint, await randomAddress(), { amount, withheldAmount: i === 2 ? 3n : 0n, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS, space: 178 }),
      ),
    );
    const actions = await planAccountActions(wallet(owner, accounts, [mintState(mint, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })]), {
      burnMints: new Set([mint]),
      withdrawExcess: false,
    });
    const lifetime = { blockhash: blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 0n };
    for (const feePayer of [ownerSigner, createNoopSigner(await randomAddress())]) {
      for (const run of [actions.slice(0, 1), actions]) {
        const parties = { owner: ownerSigner, feePayer };
        const instructions = withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, 2n ** 64n - 1n, transactionInstructions(run, parties, 2n ** 64n - 1n));
        const encoded = getTransactionEncoder().encode(compileTransaction(transactionMessage(feePayer, lifetime, instructions)));
        assert.equal(legacyTransactionSize(feePayer.address, instructions), encoded.length);
        assert.equal(transactionSize(run, parties), encoded.length);
      }
    }
  });

  it('computes the exact wire size of harvests that gather several sources of several mints', async () => {
    const owner = await randomAddress();
    const ownerSigner = createNoopSigner(owner);
    const mints = [await randomAddress(), await randomAddress()];
    const accounts = await Promise.all(
      [0, 1, 0, 1, 0].map(async (m) =>
        tokenAccount(owner, mints[m]!, await randomAddress(), { withheldAmount: 2n, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS, space: 178 }),
      ),
    );
    const state = wallet(owner, accounts, mints.map((m) => mintState(m, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })));
    const actions = await planAccountActions(state, { burnMints: new Set(), withdrawExcess: false });
    const lifetime = { blockhash: blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 0n };
    for (const feePayer of [ownerSigner, createNoopSigner(await randomAddress())]) {
      const parties = { owner: ownerSigner, feePayer };
      for (let count = 1; count <= actions.length; count++) {
        const run = actions.slice(0, count);
        const instructions = withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, 2n ** 64n - 1n, transactionInstructions(run, parties, 2n ** 64n - 1n));
        const encoded = getTransactionEncoder().encode(compileTransaction(transactionMessage(feePayer, lifetime, instructions)));
        assert.equal(transactionSize(run, parties), encoded.length, `${count} accounts`);
      }
    }
  });

  it('gives the event loop turns while planning and packing thousands of accounts', async () => {
    const owner = await randomAddress();
    const mint = await randomAddress();
    // Distinct addresses are not needed to plan and pack: a close costs the same bytes for any.
    const addresses = await Promise.all(Array.from({ length: 64 }, randomAddress));
    const accounts = Array.from({ length: 3000 }, (_, i) => tokenAccount(owner, mint, addresses[i % 64]!));
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const actions = await planAccountActions(wallet(owner, accounts, [mintState(mint)]), { burnMints: new Set(), withdrawExcess: false });
    const planned = turns;
    const signer = createNoopSigner(owner);
    await packTransactions(actions, { owner: signer, feePayer: signer });
    counting = false;
    assert.ok(planned >= 3000 / 128 - 1, `planning gave ${planned} turns`);
    assert.ok(turns - planned >= 3000 / 128 - 1, `packing gave ${turns - planned} turns`);
  });

  it('a sponsored transaction reserves room for the repayment and the sponsor\'s signature', async () => {
    const { owner, actions } = await closes(60, TOKEN_PROGRAM_ADDRESS);
    const ownerSigner = createNoopSigner(owner);
    const own = await packTransactions(actions, { owner: ownerSigner, feePayer: ownerSigner });
    const sponsored = await packTransactions(actions, { owner: ownerSigner, feePayer: createNoopSigner(await randomAddress()) });
    assert.ok(sponsored[0]!.actions.length < own[0]!.actions.length);
  });
});

describe('money rules', () => {
  const reserve = 890_880n;
  it('a fee payer ends at 0 or at least the rent-exempt minimum', () => {
    assert.equal(leavesValidBalance(5_000n, 5_000n, reserve), true);
    assert.equal(leavesValidBalance(reserve + 5_000n, 5_000n, reserve), true);
    assert.equal(leavesValidBalance(reserve + 4_999n, 5_000n, reserve), false);
    assert.equal(leavesValidBalance(4_999n, 5_000n, reserve), false);
    // The case: 0.0015 SOL and a 0.001 SOL priority fee leave 495,000 lamports.
    assert.equal(missingForFees(1_500_000n, [1_005_000n], reserve), 1_005_000n + reserve - 1_500_000n);
  });

  it('INSUFFICIENT_SOL_FOR_FEE says how much is missing', async () => {
    const owner = await randomAddress();
    assert.throws(
      () => assertOwnerCanPay(owner, 1_500_000n, [1_005_000n], reserve),
      (e: unknown) => isCinderError(e, 'INSUFFICIENT_SOL_FOR_FEE') && e.extensions.missingLamports === '395880' && /0\.00039588 SOL more/.test(e.message),
    );
    assert.doesNotThrow(() => assertOwnerCanPay(owner, 1_895_880n, [1_005_000n], reserve));
  });

  it('FEE_EXCEEDS_RECLAIM unless the caller accepts the loss', () => {
    assert.doesNotThrow(() => assertFeeWithinReclaim(2_039_280n, 2_039_280n, false));
    assert.throws(() => assertFeeWithinReclaim(2_039_280n, 2_039_281n, false), (e: unknown) => isCinderError(e, 'FEE_EXCEEDS_RECLAIM') && e.extensions.netLamports === '-1');
    assert.doesNotThrow(() => assertFeeWithinReclaim(2_039_280n, 10_005_000n, true));
    assert.equal(formatNetSol(-7_965_720n), '−0.00796572');
    assert.equal(formatNetSol(1_034_280n), '+0.00103428');
  });

  it('a sponsored transaction must repay in full and leave the owner a valid balance', () => {
    assert.equal(canRepaySponsor(0n, 2_039_280n, 10_000n, reserve), true);
    assert.equal(canRepaySponsor(0n, 9_999n, 10_000n, reserve), false);
    // Repays, but leaves the owner with 900 lamports: the runtime would refuse it.
    assert.equal(canRepaySponsor(0n, 10_900n, 10_000n, reserve), false);
  });
});
