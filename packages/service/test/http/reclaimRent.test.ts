/**
 * Whole-wallet rent reclaim on the embedded chain, to the lamport: a wallet with 28 accounts to
 * close across both token programs, wrapped SOL, withheld transfer fees, a balance kept and one
 * listed for burning, a frozen account and an account holding excess lamports. The preview says
 * what the reclaim then does, account by account, and its net is the reclaim's net.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { Rent } from 'litesvm';
import { NATIVE_MINT } from '../../src/plan/tokenState.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, freezeTokenAccount, getLamports, mintTokens, sendInstructions } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS, transferFeeExtension, transferWithFee } from '@cinder/testkit';

let t: TestApp;
let payer: KeyPairSigner;
let owner: { signer: KeyPairSigner; secretKey: Uint8Array };
let key: string;
const expected = new Map<Address, string>(); // account → the action the preview must show
let feeMint: Address;
let richAccount: Address;
let frozenAccount: Address;
let keptAccount: Address;

before(async () => {
  // Before the v1 gate: these few accounts take several legacy transactions, which the test needs.
  t = await createTestApp({}, { v1Transactions: false });
  payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
  owner = await createFundedSigner(t.chain, 1_000_000_000n);
  key = getBase58Decoder().decode(owner.secretKey);

  // 16 empty classic accounts and 10 empty Token-2022 accounts, each of its own mint.
  for (let i = 0; i < 16; i++) {
    const mint = await createTestMint(t.chain, payer, { decimals: 0 });
    expected.set(await createAta(t.chain, payer, owner.signer.address, mint), 'close');
  }
  for (let i = 0; i < 10; i++) {
    const mint = await createMint2022(t.chain, payer, { decimals: 0 });
    expected.set(await createAta(t.chain, payer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS), 'close');
  }
  // An empty wrapped-SOL account: unwrapped.
  expected.set(await createAta(t.chain, payer, owner.signer.address, NATIVE_MINT), 'unwrap');
  // A transfer-fee mint listed for burning: 99 tokens and 1 withheld, harvested then burned and closed.
  feeMint = await createMint2022(t.chain, payer, { decimals: 0, extensions: [transferFeeExtension(payer.address, 100)] });
  const source = await createAta(t.chain, payer, payer.address, feeMint, TOKEN_2022_PROGRAM_ADDRESS);
  await mintTokens(t.chain, payer, feeMint, source, 1_000n, TOKEN_2022_PROGRAM_ADDRESS);
  const feeAccount = await createAta(t.chain, payer, owner.signer.address, feeMint, TOKEN_2022_PROGRAM_ADDRESS);
  await transferWithFee(t.chain, payer, feeMint, source, feeAccount, 100n, 1n, 0);
  expected.set(feeAccount, 'burn_and_close');
  // A balance that is kept.
  const keptMint = await createTestMint(t.chain, payer, { decimals: 0 });
  keptAccount = await createAta(t.chain, payer, owner.signer.address, keptMint);
  await mintTokens(t.chain, payer, keptMint, keptAccount, 5n);
  expected.set(keptAccount, 'keep');
  // A kept balance with 12,345 lamports of excess: withdrawn, the account stays.
  const richMint = await createTestMint(t.chain, payer, { decimals: 0 });
  richAccount = await createAta(t.chain, payer, owner.signer.address, richMint);
  await mintTokens(t.chain, payer, richMint, richAccount, 5n);
  await sendInstructions(t.chain, payer, [getTransferSolInstruction({ source: payer, destination: richAccount, amount: 12_345n })]);
  expected.set(richAccount, 'withdraw_excess');
  // An empty but frozen account: skipped.
  const freezable = await createTestMint(t.chain, payer, { decimals: 0, freezeAuthority: payer.address });
  frozenAccount = await createAta(t.chain, payer, owner.signer.address, freezable);
  await freezeTokenAccount(t.chain, payer, frozenAccount, freezable);
  expected.set(frozenAccount, 'skip');
});
after(() => t.close());

const previewUrl = () => `/api/reclaim_rent?owner=${owner.signer.address}&burn=${feeMint}&withdrawExcess=true`;
const exists = async (address: Address) => (await t.chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value !== null;

describe('GET /api/reclaim_rent → POST /api/reclaim_rent', () => {
  let preview: {
    accounts: { address: Address; action: string; code: string | null; lamports: string; rentExemptLamports: string; excessLamports: string }[];
    summary: Record<string, unknown>;
  };

  it('previews every account with its action, real lamports and excess, and a summary, without a key', async () => {
    const response = await t.app.inject({ method: 'GET', url: previewUrl() });
    assert.equal(response.statusCode, 200, response.body);
    preview = response.json();
    assert.equal(preview.accounts.length, expected.size);
    for (const account of preview.accounts) assert.equal(account.action, expected.get(account.address), account.address);
    const frozen = preview.accounts.find((a) => a.address === frozenAccount)!;
    assert.equal(frozen.code, 'ACCOUNT_FROZEN');
    const rich = preview.accounts.find((a) => a.address === richAccount)!;
    assert.deepEqual([rich.lamports, rich.rentExemptLamports, rich.excessLamports], ['2051625', '2039280', '12345']);
    const { summary } = preview;
    assert.deepEqual(
      [summary.accounts, summary.close, summary.unwrap, summary.burn_and_close, summary.withdraw_excess, summary.keep, summary.skip],
      [expected.size, 26, 1, 1, 1, 1, 1],
    );
    assert.ok((summary.transactions as number) >= 2, `packed into ${String(summary.transactions)} transactions`);
    assert.equal(summary.excessLamports, '12345');
    assert.equal(summary.problem, null);
    assert.equal(BigInt(summary.netLamports as string), BigInt(summary.reclaimLamports as string) + 12_345n - BigInt(summary.feeLamports as string));
  });

  it('reclaims exactly what the preview showed: same net to the lamport, every account as previewed', async () => {
    const before = await getLamports(t.chain, owner.signer.address);
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/reclaim_rent',
      payload: { userPrivateKey: key, priorityFee: 0, burn: [feeMint], withdrawExcess: true },
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'success', body.message);
    assert.equal(body.tx_hash, body.transactionId);
    const { details } = body;
    assert.equal(details.netLamports, preview.summary.netLamports, 'preview net = reclaim net');
    assert.equal(details.feeLamports, preview.summary.feeLamports);
    assert.equal(details.transactions.length, preview.summary.transactions);
    assert.equal(details.excessWithdrawnLamports, '12345');
    assert.deepEqual(details.burned, [{ mint: feeMint, amount: '99', decimals: 0 }]);
    assert.deepEqual(details.skippedAccounts.map((s: { address: string; code: string }) => [s.address, s.code]), [[frozenAccount, 'ACCOUNT_FROZEN']]);
    // The first transaction is packed past the 20 closes other tools use, and it landed.
    assert.ok(details.transactions[0].closedAccounts.length > 20, `first transaction closed ${details.transactions[0].closedAccounts.length}`);
    assert.match(body.message, /^Closed 28 accounts, burned the balances of 1 mint, withdrew 0\.000012345 SOL of excess rent; reclaimed [0-9.]+ SOL, fees [0-9.]+ SOL, net \+/);

    // The chain: the owner is up by exactly the net; each account ended as the preview said.
    assert.equal(await getLamports(t.chain, owner.signer.address), before + BigInt(details.netLamports));
    for (const [address, action] of expected) {
      const gone = ['close', 'unwrap', 'burn_and_close'].includes(action);
      assert.equal(await exists(address), !gone, `${address} (${action})`);
    }
    assert.equal(await getLamports(t.chain, richAccount), 2_039_280n);
    assert.equal(await getLamports(t.chain, keptAccount), 2_039_280n);
  });

  it('a second reclaim finds nothing: 400 NOTHING_TO_RECLAIM, listing the skipped account, nothing sent', async () => {
    const before = await getLamports(t.chain, owner.signer.address);
    const response = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: key, priorityFee: 0 } });
    assert.equal(response.statusCode, 400);
    const body = response.json();
    assert.equal(body.code, 'NOTHING_TO_RECLAIM');
    assert.deepEqual(body.skippedAccounts.map((s: { address: string }) => s.address), [frozenAccount]);
    assert.equal(await getLamports(t.chain, owner.signer.address), before);
    // The preview answers 200 and says the same in summary.problem.
    const preview2 = (await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}` })).json();
    assert.equal(preview2.summary.problem.code, 'NOTHING_TO_RECLAIM');
    assert.equal(preview2.summary.transactions, 0);
  });

  it('accounts opened before a rent reduction (SIMD-0437) hold excess that withdrawExcess takes back', async () => {
    // Relied on: LiteSVM lets the Rent sysvar change; the token programs compute the minimum from it.
    const original = t.chain.localnet.svm.getRent();
    try {
      t.chain.localnet.svm.setRent(new Rent(5080n, 1, 50)); // SIMD-0437's second step
      const response = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}&withdrawExcess=true` });
      const body = response.json();
      const kept = body.accounts.find((a: { address: string }) => a.address === keptAccount);
      assert.deepEqual([kept.action, kept.rentExemptLamports, kept.excessLamports], ['withdraw_excess', '1488440', (2_039_280n - 1_488_440n).toString()]);
      const before = await getLamports(t.chain, keptAccount);
      const reclaim = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: key, priorityFee: 0, withdrawExcess: true } });
      assert.equal(reclaim.statusCode, 200, reclaim.body);
      assert.equal(reclaim.json().details.netLamports, body.summary.netLamports);
      assert.equal(await getLamports(t.chain, keptAccount), 1_488_440n);
      assert.ok(before > 1_488_440n);
    } finally {
      t.chain.localnet.svm.setRent(original);
    }
  });
});

describe('reclaim: bad input is 400 before anything is read or sent', () => {
  it('a bad owner is 400 INVALID_OWNER; a bad mint in the burn list is 400 INVALID_MINT', async () => {
    const badOwner = await t.app.inject({ method: 'GET', url: '/api/reclaim_rent?owner=not-an-address' });
    assert.equal(badOwner.statusCode, 400);
    assert.equal(badOwner.json().code, 'INVALID_OWNER');
    const badList = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}&burn=${feeMint},nope` });
    assert.equal(badList.statusCode, 400);
    assert.equal(badList.json().code, 'INVALID_MINT');
    assert.deepEqual(badList.json().errors, [{ field: 'burn[1]', message: 'is not a base58 address of 32 bytes' }]);
    const badBody = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: key, priorityFee: 0, burn: ['nope'] } });
    assert.equal(badBody.statusCode, 400);
    assert.equal(badBody.json().code, 'INVALID_MINT');
    const missingOwner = await t.app.inject({ method: 'GET', url: '/api/reclaim_rent' });
    assert.equal(missingOwner.statusCode, 400);
  });
});
