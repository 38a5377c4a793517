/**
 * Every kind of token account a real wallet holds, burned over HTTP against the real SPL Token
 * and Token-2022 programs on the embedded chain, with the chain checked to the lamport after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import { fetchMint as fetchMint2022, getCloseAccountInstruction } from '@solana-program/token-2022';
import { fetchMint, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { NATIVE_MINT } from '../../src/plan/tokenState.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import {
  createAta,
  createAuxTokenAccount,
  createFundedSigner,
  createTestMint,
  getLamports,
  mintTokens,
  sendInstructions,
  setCloseAuthority,
} from '@cinder/testkit';
import {
  approveDelegate,
  createMint2022,
  defaultFrozenExtension,
  giveConfidentialExtension,
  nonTransferableExtension,
  permanentDelegateExtension,
  TOKEN_2022_PROGRAM_ADDRESS,
  transferFeeExtension,
  transferWithFee,
  wrapSol,
} from '@cinder/testkit';

const CLASSIC: Address = TOKEN_PROGRAM_ADDRESS;

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

interface Owner {
  signer: KeyPairSigner;
  key: string;
}

async function createOwner(): Promise<Owner> {
  const { signer, secretKey } = await createFundedSigner(t.chain);
  return { signer, key: getBase58Decoder().decode(secretKey) };
}

async function burn(owner: Owner, mint: Address, priorityFee = 0) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/burn_tokens',
    headers: { 'content-type': 'application/json' },
    payload: { mint, priorityFee, userPrivateKey: owner.key },
  });
  return response;
}

/** Burns and checks the chain: every account gone, owner up by exactly the reclaimed lamports − fee. */
async function burnAndCheck(owner: Owner, mint: Address, accounts: Address[]) {
  const lamportsBefore = await Promise.all(accounts.map((a) => getLamports(t.chain, a)));
  const ownerBefore = await getLamports(t.chain, owner.signer.address);
  const response = await burn(owner, mint);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.status, 'success', body.message);
  const reclaimed = lamportsBefore.reduce((a, b) => a + b, 0n);
  assert.equal(body.details.reclaimedLamports, reclaimed.toString(), 'reclaimed = the accounts\' real lamports');
  assert.deepEqual([...body.details.closedAccounts].sort(), [...accounts].sort());
  for (const account of accounts) assert.equal(await getLamports(t.chain, account), 0n, `${account} closed`);
  assert.equal(await getLamports(t.chain, owner.signer.address), ownerBefore + reclaimed - BigInt(body.details.feeLamports));
  return body;
}

async function assertRefused(owner: Owner, mint: Address, account: Address, code: string, detail: RegExp) {
  const [ownerBefore, accountBefore] = [await getLamports(t.chain, owner.signer.address), await getLamports(t.chain, account)];
  const response = await burn(owner, mint);
  assert.equal(response.statusCode, 400, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  const body = response.json();
  assert.equal(body.code, code);
  assert.match(body.detail, detail);
  assert.deepEqual(body.accounts, [account]);
  assert.equal(await getLamports(t.chain, owner.signer.address), ownerBefore, 'nothing was sent');
  assert.equal(await getLamports(t.chain, account), accountBefore);
}

describe('Token-2022', () => {
  it('burns and closes a Token-2022 account with the Token-2022 program', async () => {
    const owner = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer);
    const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, owner.signer, mint, ata, 7_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    const body = await burnAndCheck(owner, mint, [ata]);
    assert.equal(body.details.tokenProgram, TOKEN_2022_PROGRAM_ADDRESS);
    assert.equal(body.message.startsWith(`Burned 7 of ${mint} and closed 1 account; reclaimed `), true);
    assert.equal((await fetchMint2022(t.chain.rpc, mint)).data.supply, 0n);
  });

  it('harvests withheld transfer fees to the mint, then burns and closes (no AccountHasWithheldTransferFees)', async () => {
    const owner = await createOwner();
    const sender = await createOwner();
    const mint = await createMint2022(t.chain, sender.signer, { extensions: [transferFeeExtension(sender.signer.address, 100)] });
    const senderAta = await createAta(t.chain, sender.signer, sender.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    const ownerAta = await createAta(t.chain, sender.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, sender.signer, mint, senderAta, 100_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    // 1 % fee on 10 tokens: 0.1 token stays withheld in the owner's account.
    await transferWithFee(t.chain, sender.signer, mint, senderAta, ownerAta, 10_000_000n, 100_000n);

    // The real program refuses to close an account that holds withheld fees.
    await assert.rejects(
      sendInstructions(t.chain, owner.signer, [
        getCloseAccountInstruction({ account: ownerAta, destination: owner.signer.address, owner: owner.signer }),
      ]),
    );

    const withheldBefore = (await fetchMint2022(t.chain.rpc, mint)).data.extensions;
    assert.ok(withheldBefore.__option === 'Some');
    const body = await burnAndCheck(owner, mint, [ownerAta]);
    assert.equal(body.details.burnedAmount, '9900000');
    const mintAfter = (await fetchMint2022(t.chain.rpc, mint)).data;
    const feeConfig = mintAfter.extensions.__option === 'Some' ? mintAfter.extensions.value.find((e) => e.__kind === 'TransferFeeConfig') : undefined;
    assert.equal(feeConfig?.__kind === 'TransferFeeConfig' ? feeConfig.withheldAmount : -1n, 100_000n, 'the withheld fee moved to the mint');
    assert.equal(mintAfter.supply, 100_000_000n - 9_900_000n);
  });

  it('refuses an account frozen by the default-account-state extension (ACCOUNT_FROZEN)', async () => {
    const owner = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer, { extensions: [defaultFrozenExtension()], freezeAuthority: owner.signer.address });
    const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await assertRefused(owner, mint, ata, 'ACCOUNT_FROZEN', /is frozen by the mint's freeze authority/);
  });

  it('refuses a Token-2022 account whose close authority is another key (CLOSE_AUTHORITY_NOT_OWNER)', async () => {
    const owner = await createOwner();
    const other = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer);
    const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await setCloseAuthority(t.chain, owner.signer, ata, other.signer.address, TOKEN_2022_PROGRAM_ADDRESS);
    await assertRefused(owner, mint, ata, 'CLOSE_AUTHORITY_NOT_OWNER', new RegExp(`close authority ${other.signer.address}`));
  });

  it('refuses an account with a non-zero confidential balance (CONFIDENTIAL_BALANCE_NOT_EMPTY), as the program does', async () => {
    const owner = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer);
    const account = await createAuxTokenAccount(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    // Written directly (test-only localnet_setAccount): a confidential balance needs ZK proofs.
    await giveConfidentialExtension(t.chain, account, true);
    await assert.rejects(
      sendInstructions(t.chain, owner.signer, [getCloseAccountInstruction({ account, destination: owner.signer.address, owner: owner.signer })]),
      'the real program refuses to close it',
    );
    await assertRefused(owner, mint, account, 'CONFIDENTIAL_BALANCE_NOT_EMPTY', /confidential-transfer balance/);
  });

  it('closes an account whose confidential-transfer extension holds no balance', async () => {
    const owner = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer);
    const account = await createAuxTokenAccount(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, owner.signer, mint, account, 1_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    await giveConfidentialExtension(t.chain, account, false);
    await burnAndCheck(owner, mint, [account]);
  });

  it('burns and closes a non-transferable token', async () => {
    const owner = await createOwner();
    const mint = await createMint2022(t.chain, owner.signer, { extensions: [nonTransferableExtension()] });
    const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, owner.signer, mint, ata, 1_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    await burnAndCheck(owner, mint, [ata]);
  });

  it('burns and closes a token with a permanent delegate (the owner can still burn)', async () => {
    const owner = await createOwner();
    const issuer = await createOwner();
    const mint = await createMint2022(t.chain, issuer.signer, { extensions: [permanentDelegateExtension(issuer.signer.address)] });
    const ata = await createAta(t.chain, issuer.signer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, issuer.signer, mint, ata, 3_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    await burnAndCheck(owner, mint, [ata]);
  });
});

describe('wrapped SOL', () => {
  it('never burns: closes the account, which unwraps the SOL and returns it with the rent', async () => {
    const owner = await createOwner();
    const ata = await wrapSol(t.chain, owner.signer, 500_000_000n);
    assert.equal(await getLamports(t.chain, ata), 502_039_280n);
    const supplyBefore = (await fetchMint(t.chain.rpc, NATIVE_MINT)).data.supply;
    const body = await burnAndCheck(owner, NATIVE_MINT, [ata]);
    assert.equal(body.message, `Unwrapped SOL and closed 1 account of ${NATIVE_MINT}; reclaimed 0.50203928 SOL, fees 0.000005 SOL, net +0.50203428 SOL.`);
    assert.equal(body.details.burnedAmount, '0');
    assert.equal(body.details.tokenProgram, CLASSIC);
    assert.equal((await fetchMint(t.chain.rpc, NATIVE_MINT)).data.supply, supplyBefore);
  });
});

describe('accounts an owner can still burn', () => {
  it("the mint authority's own account", async () => {
    const owner = await createOwner();
    const mint = await createTestMint(t.chain, owner.signer, { decimals: 2 });
    const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint);
    await mintTokens(t.chain, owner.signer, mint, ata, 12_345n);
    const body = await burnAndCheck(owner, mint, [ata]);
    assert.equal(body.message, `Burned 123.45 of ${mint} and closed 1 account; reclaimed 0.00203928 SOL, fees 0.000005 SOL, net +0.00203428 SOL.`);
  });

  for (const tokenProgram of [CLASSIC, TOKEN_2022_PROGRAM_ADDRESS] as Address[]) {
    it(`an account with a delegate and a delegated amount (${tokenProgram.slice(0, 8)})`, async () => {
      const owner = await createOwner();
      const delegate = await createOwner();
      const mint = tokenProgram === CLASSIC ? await createTestMint(t.chain, owner.signer, { decimals: 6 }) : await createMint2022(t.chain, owner.signer);
      const ata = await createAta(t.chain, owner.signer, owner.signer.address, mint, tokenProgram);
      await mintTokens(t.chain, owner.signer, mint, ata, 5_000_000n, tokenProgram);
      await approveDelegate(t.chain, owner.signer, ata, delegate.signer.address, 2_000_000n, tokenProgram);
      const body = await burnAndCheck(owner, mint, [ata]);
      assert.equal(body.details.burnedAmount, '5000000');
    });
  }
});

describe('many accounts of one mint', () => {
  for (const [tokenProgram, count] of [[CLASSIC, 24], [TOKEN_2022_PROGRAM_ADDRESS, 24]] as [Address, number][]) {
    it(`closes all ${count} accounts (${tokenProgram.slice(0, 8)}), in as few transactions as fit, reporting every signature`, async () => {
      const owner = await createOwner();
      const mint = tokenProgram === CLASSIC ? await createTestMint(t.chain, owner.signer, { decimals: 0 }) : await createMint2022(t.chain, owner.signer, { decimals: 0 });
      const accounts = [await createAta(t.chain, owner.signer, owner.signer.address, mint, tokenProgram)];
      for (let i = 1; i < count; i++) accounts.push(await createAuxTokenAccount(t.chain, owner.signer, owner.signer.address, mint, tokenProgram));
      for (const [i, account] of accounts.entries()) if (i % 2 === 0) await mintTokens(t.chain, owner.signer, mint, account, BigInt(i + 1), tokenProgram);

      const body = await burnAndCheck(owner, mint, accounts);
      const { signatures, transactions } = body.details;
      assert.ok(signatures.length >= 2, `${count} accounts need more than one transaction`);
      assert.ok(signatures.length <= 3, `${signatures.length} transactions is more than needed`);
      assert.equal(body.transactionId, signatures[0]);
      assert.deepEqual(transactions.map((tx: { signature: string }) => tx.signature), signatures);
      for (const signature of signatures) {
        const { value } = await t.chain.rpc.getSignatureStatuses([signature]).send();
        assert.equal(value[0]?.err, null, `${signature} landed`);
      }
      const expectedBurn = accounts.reduce((sum, _a, i) => sum + (i % 2 === 0 ? i + 1 : 0), 0);
      assert.equal(body.details.burnedAmount, String(expectedBurn));
      assert.match(body.message, new RegExp(`^Burned ${expectedBurn} of ${mint} and closed ${count} accounts; reclaimed `));
      assert.equal(
        BigInt(body.details.feeLamports),
        transactions.reduce((sum: bigint, tx: { feeLamports: string }) => sum + BigInt(tx.feeLamports), 0n),
      );
    });
  }
});
