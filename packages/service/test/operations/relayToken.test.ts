/**
 * Relay tokens (src/operations/relayToken.ts): an HMAC over the identities of the prepared messages
 * (src/plan/messageIdentity.ts), so a message a wallet signed after adding its own guard
 * instructions is still covered, and nothing Cinder did not prepare is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getCloseAccountInstruction } from '@solana-program/token';
import { LIGHTHOUSE_PROGRAM_ADDRESS } from '../../src/plan/messageIdentity.ts';
import { checkRelayToken, issueRelayToken, MAX_RELAY_TOKEN_MESSAGES, verifyRelayToken } from '../../src/operations/relayToken.ts';

const SECRET = 'a-server-secret-of-at-least-32-characters';
const [owner, first, second] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
const lifetime = { blockhash: '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM' as Blockhash, lastValidBlockHeight: 100n };
const close = (account: typeof first) => getCloseAccountInstruction({ account: account.address, destination: owner.address, owner: createNoopSigner(owner.address) });
function messageOf(instructions: Instruction[]) {
  return compileTransaction(
    pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(createNoopSigner(owner.address), m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  ).messageBytes;
}
const a = messageOf([close(first)]);
const b = messageOf([close(second)]);
const future = () => Date.now() + 60_000;

describe('relay tokens', () => {
  it('verify for the exact messages they were issued for, and for any of them alone', () => {
    const token = issueRelayToken(SECRET, [a, b], future());
    assert.equal(verifyRelayToken(SECRET, token, [a, b]), true);
    assert.equal(verifyRelayToken(SECRET, token, [b, a]), true);
    assert.equal(verifyRelayToken(SECRET, token, [b]), true, 'the transactions of one prepare may be relayed in several requests');
  });

  it('verify for a covered message a wallet signed with a Lighthouse assertion and its own priority fee added', () => {
    const token = issueRelayToken(SECRET, [a], future());
    const guarded = messageOf([
      getSetComputeUnitPriceInstruction({ microLamports: 7n }),
      close(first),
      { programAddress: LIGHTHOUSE_PROGRAM_ADDRESS, accounts: [{ address: owner.address, role: AccountRole.READONLY }], data: new Uint8Array([1, 2]) },
    ]);
    assert.equal(verifyRelayToken(SECRET, token, [guarded]), true);
  });

  it('do not verify for a message changed in what Cinder prepared, a message not covered, bytes that are no message, another secret, or an empty list', () => {
    const token = issueRelayToken(SECRET, [a], future());
    const changed = new Uint8Array(a);
    changed[changed.length - 1]! ^= 1; // the CloseAccount's data
    assert.equal(verifyRelayToken(SECRET, token, [changed]), false);
    assert.equal(verifyRelayToken(SECRET, token, [new Uint8Array([1, 2, 3])]), false);
    assert.equal(verifyRelayToken(SECRET, token, [a, b]), false);
    assert.equal(verifyRelayToken(`${SECRET}!`, token, [a]), false);
    assert.equal(verifyRelayToken(SECRET, token, []), false);
  });

  it('expire: past expiresAt the answer is false (checkRelayToken says "expired", still authentic)', () => {
    const now = Date.now();
    const token = issueRelayToken(SECRET, [a], now + 1_000);
    assert.equal(checkRelayToken(SECRET, token, [a], now + 999), 'valid');
    assert.equal(checkRelayToken(SECRET, token, [a], now + 1_000), 'expired');
    assert.equal(verifyRelayToken(SECRET, issueRelayToken(SECRET, [a], now - 1), [a]), false);
    // The expiry is under the MAC: moving it forward breaks the token.
    const [version, , hashes, mac] = token.split('.');
    assert.equal(checkRelayToken(SECRET, [version, String(now + 10_000_000), hashes, mac].join('.'), [a], now + 2_000), 'invalid');
  });

  it('refuse every tampered or malformed token', () => {
    const token = issueRelayToken(SECRET, [a, b], future());
    const [version, expiry, hashes, mac] = token.split('.') as [string, string, string, string];
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    for (const bad of [
      '',
      'v2',
      `${version}.${expiry}.${hashes}`,
      `v1.${expiry}.${hashes}.${mac}`,
      `${version}.${expiry}.${flip(hashes)}.${mac}`,
      `${version}.${expiry}.${hashes}.${flip(mac)}`,
      `${version}.${expiry}.${hashes.slice(0, 43)}.${mac}`, // one hash dropped
      `${version}.0${expiry}.${hashes}.${mac}`,
      `${version}.${expiry}.${hashes}.${mac}=`,
      `${token}.x`,
    ]) {
      assert.equal(checkRelayToken(SECRET, bad, [a]), 'invalid', bad);
    }
  });

  it('cover 1 to MAX_RELAY_TOKEN_MESSAGES messages and a positive integer expiry', () => {
    assert.throws(() => issueRelayToken(SECRET, [], future()), RangeError);
    assert.throws(() => issueRelayToken(SECRET, Array(MAX_RELAY_TOKEN_MESSAGES + 1).fill(a), future()), RangeError);
    assert.throws(() => issueRelayToken(SECRET, [a], 1.5), RangeError);
    assert.throws(() => issueRelayToken(SECRET, [new Uint8Array([1, 2, 3])], future()), RangeError, 'bytes that are no message');
    assert.equal(verifyRelayToken(SECRET, issueRelayToken(SECRET, Array(MAX_RELAY_TOKEN_MESSAGES).fill(a), future()), [a]), true);
  });
});
