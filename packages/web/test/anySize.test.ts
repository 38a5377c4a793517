/**
 * A 0-SOL wallet of 1,000 empty accounts (700 SPL Token, 300 Token-2022), in real Chromium against
 * the embedded chain with a fee sponsor (./harness.ts), as a person meets it:
 * - the chain confirms as a cluster does (validator timing: a sent transaction executes a moment
 *   later and is confirmed a slot after), so the page really waits for the sponsored landing;
 * - the service has a deployment's default rate limits (those of a service given an RPC URL), so
 *   the page's requests for a wallet of this size must fit them.
 * One approval signs every transaction; the sponsor pays only the first (repaid in it), the owner
 * pays the rest from the rent the first returned. The chain's record of each transaction says who
 * paid (its first account key) and what (`meta.fee`); balances are checked to the lamport.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { deploymentLimits, getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { sol } from '../src/format.ts';
import { browserSuite, look, needBrowser, newOwner, open, reclaimAndWait, WAIT, type Suite } from './harness.ts';
import { TEST_WALLET_NAME } from './testWallet.ts';

const suite: Suite = browserSuite('any-size', { timing: 'validator', config: deploymentLimits() });
const TOKEN_ACCOUNTS = 700;
const TOKEN_2022_ACCOUNTS = 300;
const ACCOUNTS = TOKEN_ACCOUNTS + TOKEN_2022_ACCOUNTS;
// Both programs' accounts without extensions are 165 bytes: the same rent-exempt minimum.
const RENT = 2_039_280n;

describe('a 0-SOL wallet of 1,000 empty accounts on the page, at a cluster\'s timing and default limits', () => {
  it('one approval; only the first transaction is sponsored, the rest the owner pays; everything closes; balances exact', { timeout: 900_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t, sponsor } = suite;
    const owner = await newOwner(t.chain, 0n);
    await writeEmptyTokenAccounts(t.chain, owner.address, TOKEN_ACCOUNTS, TOKEN_PROGRAM_ADDRESS);
    await writeEmptyTokenAccounts(t.chain, owner.address, TOKEN_2022_ACCOUNTS, TOKEN_2022_PROGRAM_ADDRESS);
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
    for (const programId of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) {
      const accounts = await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId }, { encoding: 'base64' }).send();
      assert.equal(accounts.value.length, 0, `every ${programId} account closed`);
    }
    assert.match(await s.page.locator('[data-result="summary"]').innerText(), new RegExp(`Closed ${ACCOUNTS.toLocaleString('en-US')} accounts; you received ${sol(net).replace('.', '\\.')}`));
    await s.check();
  });
});
