/**
 * A fleet: `cinder reclaim --keys-file F --fee-payer K --destination A --yes` with 1,000 wallets of
 * 0 SOL, each holding one empty SPL Token account and one empty Token-2022 account. The real binary
 * against the real app and the embedded chain, the app with the default limits of a deployment (a
 * service given an RPC URL), which refuse none of the job's requests: the preview states what comes
 * back and what it costs; the job prepares the wallets in parts (src/commands/fleetParts.ts), one
 * prepare request per part, and the parts together state the same rent; all 2,000 accounts close,
 * the destination receives exactly what was stated, the fee payer pays exactly the stated fees of
 * the transactions that landed, and every wallet ends at 0. The relay groups go out together; with
 * both cores busy some may meet an expired blockhash, and are prepared again
 * (reclaimFleetExpiry.test.ts forces that): what did nothing is then unknown to the chain and cost
 * nothing. How long it takes is a benchmark's business (npm run bench:any-size), not this test's.
 *
 * Relied on (checked against the chain): an empty account of either program holds 2,039,280
 * lamports (165 bytes, rent-exempt); each transaction costs 5,000 lamports per signature.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createTestKey, deploymentLimits, getLamports, metricValue, writeEmptyTokenAccounts, type TestKey } from '@cinder/testkit';
import { PART_OWNERS } from '../../src/commands/fleetParts.ts';
import { cinder, dir, t, url, useCliApp, writeFleetFiles } from './cliFixture.ts';

useCliApp('cinder-reclaim-fleet-', { timeoutMs: 1_200_000, appConfig: deploymentLimits() });

const WALLETS = 1_000;
const RENT = 2_039_280n;
const FEE_PER_SIGNATURE = 5_000n;

/** "0.00203928" SOL in lamports, exactly. */
function lamportsOfSol(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'));
}

/** Runs `work` over `items`, `width` at a time (the chain's RPC answers one request at a time anyway). */
async function eachInBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

/** The token accounts `owner` still has, of both programs. */
async function accountsLeft(owner: Address): Promise<number> {
  let left = 0;
  for (const programId of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) {
    left += (await t.chain.rpc.getTokenAccountsByOwner(owner, { programId }, { encoding: 'base64' }).send()).value.length;
  }
  return left;
}

describe('a fleet of 1,000 wallets with 0 SOL', () => {
  it('cinder reclaim --keys-file --fee-payer --destination --yes closes all 2,000 accounts, the destination and the fee payer exact to the lamport', async (test) => {
    const owners: TestKey[] = await Promise.all(Array.from({ length: WALLETS }, () => createTestKey()));
    await eachInBatches(owners, 25, async (owner) => {
      await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
      await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_2022_PROGRAM_ADDRESS);
    });
    const { feePayer, destination } = await writeFleetFiles('fleet', owners, 10_000_000_000n);
    // Checked on the chain, not assumed: both programs' empty accounts hold the same rent.
    assert.equal(await accountsLeft(owners[0]!.address), 2);
    const payerBefore = await getLamports(t.chain, feePayer.address);

    const args = ['reclaim', '--keys-file', 'fleet.keys', '--fee-payer', 'fleet.payer.json', '--destination', destination];
    const preview = await cinder(args, { url });
    assert.equal(preview.code, 0, preview.stderr.slice(-2000));
    const stated = /^1000 wallets: (\S+) SOL to \S+ in (\d+) transactions; fees (\S+) SOL paid by/m.exec(preview.stdout);
    assert.ok(stated, preview.stdout.slice(-1000));
    const [reclaimSol, plannedTransactions, feeSol] = [stated[1]!, stated[2]!, stated[3]!];
    assert.equal(lamportsOfSol(reclaimSol), 2n * BigInt(WALLETS) * RENT, 'the preview states every rent');

    const preparesBefore = await metricValue(t, 'cinder_http_requests_total', 'route="/api/reclaim_rent/prepare",status="200"');
    const requestsBefore = await metricValue(t, 'cinder_http_requests_total', 'route="/api/');
    const run = await cinder([...args, '--yes'], { url });
    const requests = (await metricValue(t, 'cinder_http_requests_total', 'route="/api/')) - requestsBefore;
    assert.equal(run.code, 0, run.stdout.slice(-2000) + run.stderr.slice(-2000));
    const state = JSON.parse(await readFile(join(dir, 'fleet.keys.reclaim-state.json'), 'utf8')) as {
      transactions: { signature: string; owners: string[]; closedAccounts: string[]; feeLamports: string; status: string }[];
    };

    // The first round: one line per part of PART_OWNERS wallets, in order.
    const parts = Math.ceil(WALLETS / PART_OWNERS);
    const partLines = [...run.stdout.matchAll(new RegExp(`^part (\\d+)/${parts}: (\\d+) wallets in (\\d+) transactions: (\\S+) SOL to ${destination}, fees (\\S+) SOL paid by`, 'gm'))];
    assert.deepEqual(
      partLines.map((m) => [Number(m[1]), Number(m[2])]),
      Array.from({ length: parts }, (_, i) => [i + 1, PART_OWNERS]),
      run.stdout.slice(0, 2000),
    );
    assert.equal(partLines.reduce((sum, m) => sum + lamportsOfSol(m[4]!), 0n), lamportsOfSol(reclaimSol), 'the parts state the rent the preview did');
    // The preview is made in the same parts: it states the transactions and fees the parts then sign.
    const partTransactions = partLines.reduce((sum, m) => sum + Number(m[3]), 0);
    assert.equal(partTransactions, Number(plannedTransactions), 'the parts sign the transactions the preview stated');
    const firstRound = state.transactions.slice(0, partTransactions);
    assert.equal(partLines.reduce((sum, m) => sum + lamportsOfSol(m[5]!), 0n), firstRound.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), 'each part states the fees of what it signed');
    assert.equal(partLines.reduce((sum, m) => sum + lamportsOfSol(m[5]!), 0n), lamportsOfSol(feeSol), 'the parts state the fees the preview did');
    const preparedAgain = [...run.stdout.matchAll(/^Prepared again \(/gm)].length;
    const prepares = (await metricValue(t, 'cinder_http_requests_total', 'route="/api/reclaim_rent/prepare",status="200"')) - preparesBefore;
    assert.equal(prepares, parts + preparedAgain, 'one prepare request per part');
    assert.equal(await metricValue(t, 'cinder_rate_limit_rejections_total'), 0, 'no request refused by a rate limit');
    assert.doesNotMatch(run.stderr, /rate limited/);

    const landed = state.transactions.filter((tx) => tx.status === 'success');
    const dropped = state.transactions.filter((tx) => tx.status === 'dropped');
    assert.equal(landed.length + dropped.length, state.transactions.length, 'every transaction landed or did nothing');
    const closed = landed.flatMap((tx) => tx.closedAccounts);
    assert.equal(closed.length, 2 * WALLETS);
    assert.equal(new Set(closed).size, 2 * WALLETS, 'each account closed once');
    for (let i = 0; i < dropped.length; i += 256) {
      const statuses = await t.chain.rpc.getSignatureStatuses(dropped.slice(i, i + 256).map((tx) => tx.signature as Signature), { searchTransactionHistory: true }).send();
      assert.ok(statuses.value.every((s) => s === null), 'what did nothing is unknown to the chain');
    }
    let left = 0;
    await eachInBatches(owners, 25, async (owner) => {
      left += await accountsLeft(owner.address);
    });
    assert.equal(left, 0, 'no account left open');
    assert.equal(await getLamports(t.chain, destination), 2n * BigInt(WALLETS) * RENT, 'every rent at the destination');
    const fees = landed.reduce((sum, tx) => sum + FEE_PER_SIGNATURE * BigInt(1 + tx.owners.length), 0n);
    assert.equal(landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), fees, 'the prepares stated the fees of what landed');
    assert.equal(payerBefore - (await getLamports(t.chain, feePayer.address)), fees, 'the fee payer paid exactly the stated fees of what landed');
    let owned = 0n;
    await eachInBatches(owners, 25, async (owner) => {
      owned += await getLamports(t.chain, owner.address);
    });
    assert.equal(owned, 0n, 'every wallet ends at 0');
    assert.match(run.stdout, new RegExp(`^${landed.length} transactions? landed in all \\(2000 accounts closed`, 'm'));
    test.diagnostic(
      `1,000 wallets, 2,000 accounts: ${prepares} prepare requests of ${requests} requests in all, ${landed.length} transactions landed (${dropped.length} did nothing and were prepared again), ${fees} lamports of fees (previewed ${lamportsOfSol(feeSol)})`,
    );
  });
});
