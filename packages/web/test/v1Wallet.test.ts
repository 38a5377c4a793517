/**
 * The page negotiates the transaction version with the wallet (docs/transaction-versions.md): it
 * reads solana:signTransaction's `supportedTransactionVersions` at run time and asks for v1 only
 * when the wallet declares 1. In real Chromium against the embedded chain (gate active), checked on
 * chain: each transaction's version (getTransaction, maxSupportedTransactionVersion 1), its fee, and
 * the owner's balance to the lamport; the preview the page showed counts the transactions that landed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Signature } from '@solana/kit';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { getLamports, writeEmptyTokenAccounts } from '@cinder/testkit';
import { browserSuite, needBrowser, newOwner, open, reclaimAndWait, WAIT, type Suite } from './harness.ts';
import { TEST_WALLET_NAME } from './testWallet.ts';

const suite: Suite = browserSuite('v1-wallet');
const ACCOUNTS = 130;
const RENT = 2_039_280n;

async function reclaimWith(versions: readonly ('legacy' | 0 | 1)[]) {
  const { t } = suite;
  const owner = await newOwner(t.chain, 50_000_000n);
  await writeEmptyTokenAccounts(t.chain, owner.address, ACCOUNTS / 2);
  await writeEmptyTokenAccounts(t.chain, owner.address, ACCOUNTS / 2, TOKEN_2022_PROGRAM_ADDRESS);
  const before = await getLamports(t.chain, owner.address);
  const s = await open(suite, owner, suite.url, versions);
  const previewed = s.page.waitForResponse((r) => new URL(r.url()).pathname === '/api/reclaim_rent' && r.request().method() === 'GET', WAIT);
  await s.page.getByRole('button', { name: `Connect ${TEST_WALLET_NAME}` }).click();
  const preview = (await (await previewed).json()) as { summary: { transactions: number; netLamports: string } };
  const signatures = await reclaimAndWait(s.page);
  const landed = [];
  for (const signature of signatures) {
    const tx = await t.chain.rpc.getTransaction(signature as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 1, encoding: 'base64' }).send();
    assert.ok(tx?.meta, `transaction ${signature} is on the chain`);
    assert.equal(tx.meta.err, null);
    landed.push({ version: tx.version, fee: tx.meta.fee, bytes: Buffer.from(tx.transaction[0], 'base64').length });
  }
  const fees = landed.reduce((sum, l) => sum + l.fee, 0n);
  assert.equal(fees, 5_000n * BigInt(landed.length), 'one signature each, no priority fee');
  assert.equal(await getLamports(t.chain, owner.address), before + RENT * BigInt(ACCOUNTS) - fees, 'owner: + rents − fees, to the lamport');
  assert.equal(preview.summary.transactions, landed.length, 'the preview counted what landed');
  assert.equal(BigInt(preview.summary.netLamports), RENT * BigInt(ACCOUNTS) - fees, "the preview's net is what came back");
  await s.check();
  return landed;
}

describe('the page and the wallet agree on the transaction version', () => {
  it('a wallet that declares 1 signs v1 transactions: fewer, each over the legacy packet and within 4,096 bytes', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const landed = await reclaimWith(['legacy', 0, 1]);
    assert.ok(landed.length <= 3, `${landed.length} transactions`);
    for (const l of landed) {
      assert.equal(l.version, 1);
      assert.ok(l.bytes <= 4096, `${l.bytes} bytes`);
    }
    assert.ok(landed.some((l) => l.bytes > 1232), 'at least one is larger than a legacy transaction can be');
  });

  it('a wallet that does not declare 1 gets legacy transactions within 1,232 bytes, as before v1', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const landed = await reclaimWith(['legacy', 0]);
    assert.ok(landed.length >= 5, `${landed.length} transactions`);
    for (const l of landed) {
      assert.equal(l.version, 'legacy');
      assert.ok(l.bytes <= 1232, `${l.bytes} bytes`);
    }
  });
});
