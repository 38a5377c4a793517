import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { describeBurn, formatTokenAmount } from '../../src/burn/describeBurn.ts';
import type { BurnResult, BurnTransactionReport } from '../../src/burn/burnTokens.ts';
import type { BurnPlan } from '../../src/burn/planBurn.ts';

const a = (s: string) => s as Address;
const report = (signature: string, status: BurnTransactionReport['status'], closed: string[], error: string | null): BurnTransactionReport => ({
  signature: signature as Signature,
  status,
  slot: status === 'success' ? 10n : null,
  closedAccounts: closed.map(a),
  computeUnitLimit: 10_000,
  computeUnitPriceMicroLamports: 0n,
  feeLamports: status === 'pending' ? 0n : 5000n,
  error,
});

function result(transactions: BurnTransactionReport[], status: BurnResult['status'], closed: string[], burned: bigint): Omit<BurnResult, 'message'> {
  return {
    status,
    signatures: transactions.map((t) => t.signature),
    slot: 10n,
    owner: a('Owner1111111111111111111111111111111111111'),
    mint: a('Mint11111111111111111111111111111111111111'),
    tokenProgram: a('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'),
    decimals: 0,
    burnedAmount: burned,
    closedAccounts: closed.map(a),
    reclaimedLamports: 2_039_280n * BigInt(closed.length),
    feeLamports: 10_000n,
    computeUnitLimit: 10_000,
    computeUnitPriceMicroLamports: 0n,
    transactions,
    unwrapsSol: false,
  };
}

const plan = { closedAccounts: ['A1', 'A2', 'A3'].map(a) } as BurnPlan;

describe('describeBurn', () => {
  it('says exactly which accounts were closed when only part of a multi-transaction burn landed', () => {
    const txs = [report('Sig1', 'success', ['A1', 'A2'], null), report('Sig2', 'failed', ['A3'], 'instruction 2 failed: AccountFrozen (token program error 17, 0x11)')];
    assert.equal(
      describeBurn(result(txs, 'failed', ['A1', 'A2'], 7n), plan),
      'The burn failed: transaction Sig2 failed: instruction 2 failed: AccountFrozen (token program error 17, 0x11). ' +
        'Only part of the burn landed: Burned 7 of Mint11111111111111111111111111111111111111 and closed 2 accounts; reclaimed 0.00407856 SOL.',
    );
  });

  it('tells the caller not to resend while a transaction is pending', () => {
    const txs = [report('Sig1', 'pending', ['A1'], null)];
    assert.equal(
      describeBurn(result(txs, 'pending', [], 0n), plan),
      'The burn was sent but its confirmation could not be observed in time, so its outcome is unknown: transaction Sig1 is pending. ' +
        'Check it with GET /api/transactions/{signature}; do not resend the burn until it is final.',
    );
  });

  it('formats token amounts with separators and decimals', () => {
    assert.equal(formatTokenAmount(1_234_500_000n, 6), '1,234.5');
    assert.equal(formatTokenAmount(5n, 0), '5');
    assert.equal(formatTokenAmount(1n, 9), '0.000000001');
    assert.equal(formatTokenAmount(18_446_744_073_709_551_615n, 0), '18,446,744,073,709,551,615');
  });
});
