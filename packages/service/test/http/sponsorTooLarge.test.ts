/**
 * The relay token's size limit counts only what the sponsor pays. A 0-SOL wallet of thousands of
 * accounts is sponsored for its first transaction only (the rest the owner pays from the rent that
 * one returns), so its prepare fits one token however many transactions it holds: 5,700 empty
 * accounts (some 260 transactions, more than the token's MAX_RELAY_TOKEN_MESSAGES) are prepared,
 * nothing is signed and the sponsor is not charged. Only a plan whose sponsored transactions alone
 * exceed the limit is refused (SPONSORED_OPERATION_TOO_LARGE, shown on the pure check: no wallet of
 * empty accounts has such a prefix). Accounts are written straight into the chain (`localnet_setAccount`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { MAX_RELAY_TOKEN_MESSAGES } from '../../src/operations/relayToken.ts';
import { assertFitsOneRelayToken } from '../../src/operations/sponsoredMessage.ts';
import { CinderError } from '../../src/errors.ts';
import type { TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { createSponsoredTestApp, type SponsoredTestApp } from '@cinder/testkit';

/** About 22 closes fit a sponsored transaction and 25 an owner-paid one: 5,700 accounts need some 230–260 transactions. */
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

describe('the relay token limit counts sponsored transactions only', () => {
  it('a 0-SOL wallet of 5,700 accounts is prepared: one sponsored transaction, the rest owner-paid, one relay token; nothing signed or charged', { timeout: 600_000 }, async () => {
    assert.equal(await getLamports(t.chain, owner), 0n);
    const sponsorBefore = await getLamports(t.chain, sponsorAddress);
    const answer = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner, priorityFee: 0, feePayer: 'sponsor' } });
    assert.equal(answer.statusCode, 200, answer.body.slice(0, 500));
    const body = answer.json() as { transactions: string[]; sponsoredTransactions: number; dependsOn: number[][]; relayToken?: string; details: { summary: { closeCount?: number } } };
    assert.ok(body.transactions.length > MAX_RELAY_TOKEN_MESSAGES, `${body.transactions.length} transactions, more than one token could name`);
    assert.equal(body.sponsoredTransactions, 1);
    assert.equal(typeof body.relayToken, 'string');
    // Every owner-paid transaction waits for the sponsored one, which returns the rent it pays with.
    assert.deepEqual(body.dependsOn, body.transactions.map((_, i) => (i === 0 ? [] : [0])));
    assert.equal(await getLamports(t.chain, sponsorAddress), sponsorBefore, 'a prepare charges nobody');
  });

  it('a plan whose sponsored transactions alone exceed the limit is refused, saying what to do', () => {
    const transaction = (ownerPays: boolean) => ({ ownerPays, packed: { actions: Array.from({ length: 22 }, () => ({})) } });
    // At the limit of sponsored transactions, with any number owner-paid after them: fits.
    assert.doesNotThrow(() => assertFitsOneRelayToken([...Array.from({ length: MAX_RELAY_TOKEN_MESSAGES }, () => transaction(false)), ...Array.from({ length: 500 }, () => transaction(true))], 0n));
    const tooMany = [...Array.from({ length: MAX_RELAY_TOKEN_MESSAGES + 1 }, () => transaction(false)), transaction(true)];
    assert.throws(
      () => assertFitsOneRelayToken(tooMany, 1_300_000n),
      (error: unknown) => {
        assert.ok(error instanceof CinderError);
        assert.equal(error.code, 'SPONSORED_OPERATION_TOO_LARGE');
        assert.match(error.message, new RegExp(`at most ${MAX_RELAY_TOKEN_MESSAGES} transactions; this one needs ${MAX_RELAY_TOKEN_MESSAGES + 1} \\(5,676 accounts\\)`));
        assert.match(error.message, /Send the wallet 0\.0013 SOL or more for its fees and prepare again with feePayer "owner"/);
        return true;
      },
    );
  });
});
