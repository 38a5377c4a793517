/**
 * The sentence of an operation's result, for the outcomes the chain rarely gives on demand: a
 * reclaim whose transactions partly landed, a pending one, a failure that cost fees. One owner's
 * sentence and many owners' say these the same way: only what landed is counted differently.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { describeManyOutcome, describeOutcome, formatTokenAmount } from '../../src/operations/describe.ts';
import type { ManyResult } from '../../src/operations/operationResult.ts';
import type { OperationResult, TransactionReport } from '../../src/operations/pipeline.ts';

const sig = (n: number) => `${n}`.padEnd(88, '1') as Signature;
const addr = (n: number) => `${n}`.padEnd(44, '1') as Address;

function report(n: number, status: TransactionReport['status'], closed: number, error: string | null = null): TransactionReport {
  return {
    signature: sig(n),
    status,
    slot: status === 'pending' ? null : 10n,
    closedAccounts: Array.from({ length: closed }, (_, i) => addr(n * 100 + i)),
    computeUnitLimit: 5000,
    computeUnitPriceMicroLamports: 0n,
    feeLamports: status === 'pending' ? 0n : 5000n,
    error,
  };
}

function result(transactions: TransactionReport[], over: Partial<OperationResult> = {}): Omit<OperationResult, 'message'> {
  const landed = transactions.filter((t) => t.status === 'success');
  const reclaimedLamports = BigInt(landed.reduce((s, t) => s + t.closedAccounts.length, 0)) * 2_039_280n;
  const feeLamports = transactions.reduce((s, t) => s + t.feeLamports, 0n);
  return {
    status: transactions.some((t) => t.status === 'failed') ? 'failed' : transactions.some((t) => t.status === 'pending') ? 'pending' : 'success',
    owner: addr(9),
    signatures: transactions.map((t) => t.signature),
    slot: 10n,
    sponsored: false,
    transactions,
    closedAccounts: landed.flatMap((t) => t.closedAccounts),
    burned: [],
    reclaimedLamports,
    excessWithdrawnLamports: 0n,
    feeLamports,
    netLamports: reclaimedLamports - feeLamports,
    skippedAccounts: [],
    ...over,
  };
}

const reclaimDoor = { kind: 'reclaim' as const, burn: [], withdrawExcess: false };

describe('describeOutcome', () => {
  it('a reclaim whose second transaction failed says what did land, and the net of that', () => {
    const message = describeOutcome(result([report(1, 'success', 2), report(2, 'failed', 3, 'instruction 2 failed: AccountFrozen')]), reclaimDoor, null);
    assert.equal(
      message,
      `It failed: transaction ${sig(2)} failed: instruction 2 failed: AccountFrozen. Only part of it landed: Closed 2 accounts; reclaimed 0.00407856 SOL, fees 0.00001 SOL, net +0.00406856 SOL.`,
    );
  });

  it('nothing landed but a failed transaction paid its fee: says so, with the fee', () => {
    const message = describeOutcome(result([report(1, 'failed', 2, 'x')]), reclaimDoor, null);
    assert.match(message, /Nothing was burned or closed; fees paid: 0\.000005 SOL\.$/);
  });

  it('pending says not to resend', () => {
    const message = describeOutcome(result([report(1, 'pending', 2)]), reclaimDoor, null);
    assert.match(message, /outcome is unknown: transaction \w+ is pending\. Check with GET \/api\/transactions\/\{signature\}; do not resend until it is final\.$/);
  });

  it('a burn names the amount in UI units, and a net loss with a true minus sign', () => {
    const mint = addr(5);
    const burned = result([report(1, 'success', 1)], { burned: [{ mint, amount: 1_234_500_000n, decimals: 6 }], feeLamports: 10_005_000n, netLamports: 2_039_280n - 10_005_000n });
    const message = describeOutcome(burned, { kind: 'burn', mint }, { address: mint, decimals: 6, isNative: false } as never);
    assert.equal(message, `Burned 1,234.5 of ${mint} and closed 1 account; reclaimed 0.00203928 SOL, fees 0.010005 SOL, net −0.00796572 SOL.`);
    assert.equal(formatTokenAmount(1_000_000_001n, 0), '1,000,000,001');
  });
});

describe('describeManyOutcome', () => {
  function many(transactions: TransactionReport[], owners: Address[][], skipped: ManyResult['skippedAccounts'] = []): Omit<ManyResult, 'message'> {
    const single = result(transactions);
    return {
      status: single.status,
      signatures: single.signatures,
      feePayer: addr(7),
      destination: addr(8),
      transactions: transactions.map((t, i) => ({ ...t, owners: owners[i]! })),
      reclaimedLamports: single.reclaimedLamports,
      feeLamports: single.feeLamports,
      netLamports: single.netLamports,
      skippedAccounts: skipped,
    };
  }

  it('counts owners and transactions; a failure says what did land, in the words of one owner\'s', () => {
    const message = describeManyOutcome(many([report(1, 'success', 2), report(2, 'failed', 3, 'instruction 2 failed: AccountFrozen')], [[addr(1)], [addr(2), addr(3)]]), 3);
    assert.equal(
      message,
      `It failed: transaction ${sig(2)} failed: instruction 2 failed: AccountFrozen. Only part of it landed: ` +
        `Closed 2 accounts of 3 owners in 1 of 2 transactions: 0.00407856 SOL of rent to ${addr(8)}, fees 0.00001 SOL paid by ${addr(7)}, net +0.00406856 SOL.`,
    );
  });

  it('nothing landed: the fee paid; pending: not to resend, as for one owner', () => {
    assert.match(describeManyOutcome(many([report(1, 'failed', 2, 'x')], [[addr(1)]]), 1), /Nothing was burned or closed; fees paid: 0\.000005 SOL\.$/);
    const pending = describeManyOutcome(many([report(1, 'pending', 2)], [[addr(1)]]), 1);
    assert.match(pending, /outcome is unknown: transaction \w+ is pending\. Check with GET \/api\/transactions\/\{signature\}; do not resend until it is final\.$/);
  });

  it('says each skipped reason once: an owner left out gives all its accounts one reason', () => {
    const why = `Closing the accounts of ${addr(4)} would fail on chain`;
    const skipped = [addr(41), addr(42)].map((address) => ({ address, code: 'TRANSACTION_REJECTED' as const, reason: why, owner: addr(4) }));
    const message = describeManyOutcome(many([report(1, 'success', 1)], [[addr(1)]], skipped), 2);
    assert.equal(message, `Closed 1 account of 2 owners in 1 of 1 transaction: 0.00203928 SOL of rent to ${addr(8)}, fees 0.000005 SOL paid by ${addr(7)}, net +0.00203428 SOL. Skipped 2 accounts: ${why}.`);
  });
});
