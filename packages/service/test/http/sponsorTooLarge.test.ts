/**
 * A sponsored prepare too large for one relay token (more than 256 transactions: a 0-SOL wallet of
 * some 5,700 empty accounts) is a 400 that says what to do, not a 500; nothing is signed, the
 * sponsor's turn for the wallet is not taken (an owner-paid prepare right after is prepared), and
 * the sponsor is not charged. Accounts are written straight into the chain (`localnet_setAccount`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { MAX_RELAY_TOKEN_MESSAGES } from '../../src/operations/relayToken.ts';
import type { TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { createSponsoredTestApp, type SponsoredTestApp } from '@cinder/testkit';

/** 22 closes fit a sponsored transaction: 5,700 accounts need 260 of them, more than a token covers. */
const ACCOUNTS = 5_700;

let t: TestApp;
let sponsored: SponsoredTestApp;
let owner: Address;
let sponsorAddress: Address;

before(async () => {
  sponsored = await createSponsoredTestApp(1_000_000_000n);
  t = sponsored.t;
  sponsorAddress = sponsored.sponsor.signer.address;
  owner = (await createTestKey()).address;
  await writeEmptyTokenAccounts(t.chain, owner, ACCOUNTS);
});
after(() => sponsored.close());

describe('a sponsored prepare too large for one relay token', () => {
  it('is a 400 SPONSORED_OPERATION_TOO_LARGE saying what to do; nothing is signed and the wallet can prepare for itself', { timeout: 300_000 }, async () => {
    assert.equal(await getLamports(t.chain, owner), 0n);
    const sponsorBefore = await getLamports(t.chain, sponsorAddress);
    const refused = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner, priorityFee: 0, feePayer: 'sponsor' } });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.headers['content-type'], 'application/problem+json; charset=utf-8');
    const problem = refused.json();
    assert.equal(problem.code, 'SPONSORED_OPERATION_TOO_LARGE');
    assert.match(problem.detail, new RegExp(`at most ${MAX_RELAY_TOKEN_MESSAGES} transactions; this one needs 2\\d\\d \\(5,700 accounts\\)`));
    assert.match(problem.detail, /Send the wallet 0\.\d+ SOL or more for its fees and prepare again with feePayer "owner"/);
    assert.deepEqual(problem.errors, [{ field: 'feePayer', message: `sponsored operations hold at most ${MAX_RELAY_TOKEN_MESSAGES} transactions` }]);
    assert.equal(await getLamports(t.chain, sponsorAddress), sponsorBefore);
    // The refusal took no sponsored turn: the owner-paid prepare of the same wallet is answered
    // (400 INSUFFICIENT_SOL_FOR_FEE for a 0-SOL owner), not 409 SPONSORED_OPERATION_IN_PROGRESS.
    const ownerPays = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner, priorityFee: 0, feePayer: 'owner' } });
    assert.equal(ownerPays.json().code, 'INSUFFICIENT_SOL_FOR_FEE', ownerPays.body);
  });
});
