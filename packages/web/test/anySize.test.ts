/**
 * A 0-SOL wallet of hundreds of accounts, in real Chromium against the embedded chain with a fee
 * sponsor (./harness.ts): one approval signs every transaction; the sponsor pays only the first
 * (repaid in it), the owner pays the rest from the rent the first returned. The chain's record of
 * each transaction says who paid (its first account key) and what (`meta.fee`); balances are
 * checked to the lamport.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Signature } from '@solana/kit';
import { getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { sol } from '../src/format.ts';
import { browserSuite, look, needBrowser, newOwner, open, reclaimAndWait, WAIT, type Suite } from './harness.ts';
import { TEST_WALLET_NAME } from './testWallet.ts';

const suite: Suite = browserSuite('any-size');
const ACCOUNTS = 300;
const RENT = 2_039_280n;

describe('a 0-SOL wallet of 300 empty accounts on the page', () => {
  it('one approval; only the first transaction is sponsored, the rest the owner pays; everything closes; balances exact', { timeout: 900_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t, sponsor } = suite;
    const owner = await newOwner(t.chain, 0n);
    await writeEmptyTokenAccounts(t.chain, owner.address, ACCOUNTS);
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);

    const s = await open(suite, owner);
    await s.page.getByRole('button', { name: `Connect ${TEST_WALLET_NAME}` }).click();
    await s.page.locator('[data-note="sponsored"]').waitFor(WAIT);
    const signatures = await reclaimAndWait(s.page);
    await look(suite, s.page, 'any-size-done');
    assert.equal(s.wallet.calls.length, 1, 'one approval');
    assert.ok(signatures.length >= 3, `${signatures.length} transactions`);

    const landed = [];
    for (const signature of signatures) {
      const transaction = await t.chain.rpc.getTransaction(signature as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
      assert.ok(transaction?.meta, `transaction ${signature} is on the chain`);
      assert.equal(transaction.meta.err, null);
      landed.push({ feePayer: transaction.transaction.message.accountKeys[0]!, fee: transaction.meta.fee });
    }
    // The page lists the transactions in the prepared order: the sponsored one first.
    assert.deepEqual(
      landed.map((l) => l.feePayer),
      [sponsor.signer.address, ...signatures.slice(1).map(() => owner.address)],
      'the sponsor paid only the first transaction',
    );
    const fees = landed.reduce((sum, l) => sum + l.fee, 0n);
    assert.equal(fees, 10_000n + 5_000n * BigInt(signatures.length - 1));
    const net = RENT * BigInt(ACCOUNTS) - fees;
    assert.equal(await getLamports(t.chain, owner.address), net, 'owner: rents − fees');
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore, 'the sponsor ends where it began');
    const accounts = await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as never }, { encoding: 'base64' }).send();
    assert.equal(accounts.value.length, 0, 'every account closed');
    assert.match(await s.page.locator('[data-result="summary"]').innerText(), new RegExp(`Closed ${ACCOUNTS} accounts; you received ${sol(net).replace('.', '\\.')}`));
    await s.check();
  });
});
