/**
 * The identity of a prepared message (src/plan/messageIdentity.ts), pure: a wallet's Lighthouse
 * assertions, a Memo and a changed compute budget leave it unchanged; any change to what Cinder
 * prepared (its fee payer, its blockhash, its own instructions, their order, accounts or flags)
 * changes it.
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
  getCompiledTransactionMessageDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction } from '@solana-program/token';
import { LIGHTHOUSE_PROGRAM_ADDRESS, MEMO_PROGRAM_ADDRESSES, preparedIdentityOfBytes, preparedMessageIdentity } from '../../src/plan/messageIdentity.ts';
import { messageInstructions, type RelayableMessage } from '../../src/plan/relayRules.ts';

const BLOCKHASH = { blockhash: '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM' as Blockhash, lastValidBlockHeight: 100n };
const OTHER_BLOCKHASH = { blockhash: 'EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k' as Blockhash, lastValidBlockHeight: 100n };

async function parties() {
  const [sponsor, owner, account, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
  return { sponsor: sponsor.address, owner: owner.address, account: account.address, other: other.address };
}
type Parties = Awaited<ReturnType<typeof parties>>;

/** What Cinder prepares for a sponsored reclaim: compute budget, a close to the owner, the sponsor's repayment. */
function cinderInstructions(p: Parties, account = p.account): Instruction[] {
  return [
    getCloseAccountInstruction({ account, destination: p.owner, owner: createNoopSigner(p.owner) }),
    getTransferSolInstruction({ source: createNoopSigner(p.owner), destination: p.sponsor, amount: 10_000n }),
  ];
}

function compiled(feePayer: Address, instructions: Instruction[], lifetime = BLOCKHASH): RelayableMessage {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(createNoopSigner(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const decoded = getCompiledTransactionMessageDecoder().decode(compileTransaction(message).messageBytes);
  assert.ok(decoded.version === 0 || decoded.version === 'legacy');
  return decoded;
}

/** A Lighthouse assertion as Phantom adds one: it reads the owner's and the sponsor's accounts. */
const lighthouse = (p: Parties, data: number[]): Instruction => ({
  programAddress: LIGHTHOUSE_PROGRAM_ADDRESS,
  accounts: [
    { address: p.owner, role: AccountRole.READONLY },
    { address: p.sponsor, role: AccountRole.READONLY },
  ],
  data: new Uint8Array(data),
});
const memo = (program: Address, text: string): Instruction => ({ programAddress: program, accounts: [], data: new TextEncoder().encode(text) });

describe('preparedMessageIdentity', () => {
  it('is unchanged by inserted Lighthouse instructions, a Memo (either program) and a changed compute budget', async () => {
    const p = await parties();
    const [close, repay] = cinderInstructions(p);
    const prepared = compiled(p.sponsor, [getSetComputeUnitLimitInstruction({ units: 6_000 }), getSetComputeUnitPriceInstruction({ microLamports: 1_000n }), close!, repay!]);
    const [memoV2, memoV1] = [...MEMO_PROGRAM_ADDRESSES];
    const signedByWallet = compiled(p.sponsor, [
      getSetComputeUnitLimitInstruction({ units: 9_000 }),
      getSetComputeUnitPriceInstruction({ microLamports: 2_500n }),
      lighthouse(p, [4, 1, 0, 0]),
      close!,
      memo(memoV2!, 'reclaimed with Cinder'),
      repay!,
      lighthouse(p, [9, 2, 7]),
    ]);
    const withoutBudget = compiled(p.sponsor, [close!, memo(memoV1!, 'hi'), repay!]);
    assert.notDeepEqual(messageInstructions(prepared).length, messageInstructions(signedByWallet).length, 'the wallet did add instructions');
    const identity = preparedMessageIdentity(prepared);
    assert.match(identity, /^[A-Za-z0-9_-]{43}$/, 'a SHA-256 in base64url');
    assert.equal(preparedMessageIdentity(signedByWallet), identity);
    assert.equal(preparedMessageIdentity(withoutBudget), identity);
  });

  it('changes with the fee payer, the blockhash, an instruction of Cinder\'s (data, account, flags), their order, or one more of them', async () => {
    const p = await parties();
    const [close, repay] = cinderInstructions(p);
    const identity = preparedMessageIdentity(compiled(p.sponsor, [close!, repay!]));
    const [, otherRepay] = cinderInstructions(p);
    const moreRepaid = getTransferSolInstruction({ source: createNoopSigner(p.owner), destination: p.sponsor, amount: 10_001n });
    const readonlyClose: Instruction = { ...close!, accounts: close!.accounts!.map((a, i) => (i === 0 ? { ...a, role: AccountRole.READONLY } : a)) };
    const variants: [string, RelayableMessage][] = [
      ['another fee payer', compiled(p.owner, [close!, repay!])],
      ['another blockhash', compiled(p.sponsor, [close!, repay!], OTHER_BLOCKHASH)],
      ['another amount', compiled(p.sponsor, [close!, moreRepaid])],
      ['another account', compiled(p.sponsor, [cinderInstructions(p, p.other)[0]!, otherRepay!])],
      ['another order', compiled(p.sponsor, [repay!, close!])],
      ['a flag changed', compiled(p.sponsor, [readonlyClose, repay!])],
      ['one instruction more', compiled(p.sponsor, [close!, cinderInstructions(p, p.other)[0]!, repay!])],
      ['one instruction fewer', compiled(p.sponsor, [close!])],
    ];
    const seen = new Set([identity]);
    for (const [what, message] of variants) {
      const other = preparedMessageIdentity(message);
      assert.notEqual(other, identity, what);
      seen.add(other);
    }
    assert.equal(seen.size, variants.length + 1, 'every variant has an identity of its own');
  });

  it('of message bytes: the same as of the decoded message; null for bytes that are no message', async () => {
    const p = await parties();
    const message = pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(createNoopSigner(p.sponsor), m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(BLOCKHASH, m),
      (m) => appendTransactionMessageInstructions(cinderInstructions(p), m),
    );
    const bytes = compileTransaction(message).messageBytes;
    const decoded = getCompiledTransactionMessageDecoder().decode(bytes);
    assert.ok(decoded.version === 'legacy');
    assert.equal(preparedIdentityOfBytes(bytes), preparedMessageIdentity(decoded));
    assert.equal(preparedIdentityOfBytes(new Uint8Array([1, 2, 3])), null);
  });
});
