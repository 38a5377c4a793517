/**
 * A reclaim in two transactions of which only one lands (the local chain's `dropOneTransaction`
 * fault: a leader that never includes one of them, until its blockhash expires). The answer must
 * say what really happened, to the lamport: only the landed transaction's accounts are closed and
 * counted, only its fee is charged, the net is what the owner's balance really gained, and the
 * message says which transaction failed and what part landed. A second reclaim then finishes the
 * job, and nothing is counted twice.
 *
 * Chain facts relied on: a classic SPL Token account (165 bytes) holds 2,039,280 lamports of rent,
 * returned by CloseAccount; one signature and no priority fee cost 5,000 lamports; 30 closes do
 * not fit one legacy transaction (26 do, as test/plan/pack.test.ts measures).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, getLamports } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

const RENT_LAMPORTS = 2_039_280n;
const FEE_LAMPORTS = 5_000n;
const ACCOUNTS = 30;

let t: TestApp;
let owner: { signer: KeyPairSigner; secretKey: Uint8Array };
let key: string;
let accounts: Address[];

before(async () => {
  // Before the v1 gate: the wallet takes several legacy transactions, which the test needs.
  t = await createTestApp({ operationDeadlineMs: 10_000 }, { v1Transactions: false });
  const payer = (await createFundedSigner(t.chain, 10_000_000_000n)).signer;
  owner = await createFundedSigner(t.chain, 1_000_000_000n);
  key = getBase58Decoder().decode(owner.secretKey);
  const mints = await Promise.all(Array.from({ length: ACCOUNTS }, () => createTestMint(t.chain, payer, { decimals: 0 })));
  accounts = await Promise.all(mints.map((mint) => createAta(t.chain, payer, owner.signer.address, mint)));
});
after(() => t.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const faults = (settings: Record<string, unknown>) => rpcResult(t.chain.localnet.rpcUrl, 'localnet_setFaults', [settings]);
async function openAccounts(addresses: readonly Address[]): Promise<Address[]> {
  const { value } = await t.chain.rpc.getMultipleAccounts([...addresses], { encoding: 'base64' }).send();
  return addresses.filter((_, i) => value[i] !== null);
}

interface TransactionReport {
  signature: string;
  status: string;
  closedAccounts: Address[];
  feeLamports: string;
  error: string | null;
}

describe('a reclaim of which only one transaction lands', () => {
  it('answers failed, and counts, charges and closes exactly what landed', async () => {
    const ownerBefore = await getLamports(t.chain, owner.signer.address);
    await faults({ dropOneTransaction: true });
    const reclaiming = t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: key, priorityFee: 0 } });
    // Once the other transaction has landed and some accounts are closed, expire the dropped one.
    for (let i = 0; i < 100 && (await openAccounts(accounts)).length === ACCOUNTS; i++) await sleep(100);
    assert.ok((await openAccounts(accounts)).length < ACCOUNTS, 'one transaction landed');
    await sleep(1000);
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_warpSlots', [200]);
    const response = await reclaiming;
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults', []);

    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'failed');
    const transactions = body.details.transactions as TransactionReport[];
    assert.equal(transactions.length, 2, JSON.stringify(transactions));
    const landed = transactions.find((tx) => tx.status === 'success')!;
    const dropped = transactions.find((tx) => tx.status === 'failed')!;
    assert.ok(landed && dropped, JSON.stringify(transactions));
    assert.equal(dropped.error, 'its blockhash expired before it landed; it did nothing');
    assert.equal(dropped.feeLamports, '0', 'a transaction that never landed charged nothing');
    assert.equal(landed.feeLamports, FEE_LAMPORTS.toString());
    assert.deepEqual([...landed.closedAccounts, ...dropped.closedAccounts].sort(), [...accounts].sort(), 'the two transactions cover every account once');

    // What the answer counts is what landed, and the chain agrees to the lamport.
    assert.deepEqual(body.details.closedAccounts, landed.closedAccounts);
    assert.deepEqual((await openAccounts(accounts)).sort(), [...dropped.closedAccounts].sort(), 'the dropped transaction\'s accounts are still open');
    const reclaimed = RENT_LAMPORTS * BigInt(landed.closedAccounts.length);
    assert.equal(body.details.reclaimedLamports, reclaimed.toString());
    assert.equal(body.details.feeLamports, FEE_LAMPORTS.toString());
    assert.equal(body.details.netLamports, (reclaimed - FEE_LAMPORTS).toString());
    assert.equal(await getLamports(t.chain, owner.signer.address), ownerBefore + reclaimed - FEE_LAMPORTS);
    assert.equal(
      body.message,
      `It failed: transaction ${dropped.signature} failed: its blockhash expired before it landed; it did nothing. ` +
        `Only part of it landed: Closed ${landed.closedAccounts.length} accounts; reclaimed ${Number(reclaimed) / 1e9} SOL, fees 0.000005 SOL, net +${Number(reclaimed - FEE_LAMPORTS) / 1e9} SOL.`,
    );

    // GET /api/transactions agrees for each.
    for (const tx of transactions) {
      const status = await t.app.inject({ method: 'GET', url: `/api/transactions/${tx.signature}` });
      assert.equal(status.json().status, tx.status, status.body);
    }

    // The retry closes the rest, and only the rest.
    const retry = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: key, priorityFee: 0 } });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json().status, 'success');
    assert.deepEqual([...retry.json().details.closedAccounts].sort(), [...dropped.closedAccounts].sort());
    assert.deepEqual(await openAccounts(accounts), []);
    assert.equal(await getLamports(t.chain, owner.signer.address), ownerBefore + RENT_LAMPORTS * BigInt(ACCOUNTS) - 2n * FEE_LAMPORTS);
  });
});
