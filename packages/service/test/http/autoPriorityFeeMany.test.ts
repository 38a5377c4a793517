/**
 * `priorityFee: "auto"` on the many-owner doors (preview with owners, prepare with owners, keyed
 * with userPrivateKeys), on the real app and the embedded chain under its busyCluster fault: the
 * field's forms, one getRecentPrioritizationFees per request (counted at a proxy in front of the
 * chain), the preview's resolved number and a prepare with it giving the same fees and net to the
 * lamport, a keyed reclaim that lands with the fee payer paying exactly the fees stated, the money
 * rule of the whole job (and of the owners that remain when one is left out), and the operator's cap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import type { Config } from '../../src/config.ts';
import type { RpcProxy } from '../chain/rpcProxy.ts';
import { MEDIAN, startBusyClusterFixture, type BusyClusterFixture } from './busyClusterFixture.ts';
import { createFundedSigner, createTestApp, createTestMint, getLamports, mintTokens, type TestApp, type TestChain } from '@cinder/testkit';
import { balancesOf, createEmptyWallets, sum, type ManyWallet } from './manyFixture.ts';

/** The packer's compute-unit bound of one empty SPL Token account's close (src/plan/pack.ts). */
const CLOSE_COMPUTE_UNITS = 12_000;

let fixture: BusyClusterFixture;
let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let payer: KeyPairSigner;
let apps: BusyClusterFixture['apps'];
let mints: { mint: Address }[];

before(async () => {
  fixture = await startBusyClusterFixture();
  ({ chain, proxy, t, payer, apps } = fixture);
  mints = [{ mint: await createTestMint(chain, payer, { decimals: 0 }) }, { mint: await createTestMint(chain, payer, { decimals: 0 }) }];
});
after(() => fixture.close());

const busy = (median?: number) => fixture.busy(median);
const idle = () => fixture.idle();
const post = (app: TestApp, url: string, payload: Record<string, unknown>) =>
  app.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
const exists = async (address: Address) => (await chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value !== null;

/** `count` wallets with no SOL and an empty account of each test mint (made while the cluster is idle). */
const wallets = (count: number, of = mints) => createEmptyWallets(chain, payer, count, of);
const ownersOf = (list: readonly ManyWallet[]) => list.map((w) => w.signer.address);

interface ManyFees {
  transactions: number | unknown[];
  signatures?: number;
  feeLamports: string;
  netLamports: string;
  priorityFeeLamports: string;
  totalReclaimableLamports?: string;
  reclaimLamports?: string;
}

describe('priorityFee on the many-owner doors: the field', () => {
  it('takes "auto" on the preview, the prepare with owners and the keyed door; any other string is a 400 naming priorityFee', async () => {
    const [wallet] = await wallets(1);
    const feePayerKey = getBase58Decoder().decode((await createFundedSigner(chain, 1_000_000_000n)).secretKey);
    const destination = (await generateKeyPairSigner()).address;
    const bodies: [string, Record<string, unknown>][] = [
      ['/api/reclaim_rent/preview', { owners: [wallet!.signer.address] }],
      ['/api/reclaim_rent/prepare', { owners: [wallet!.signer.address], feePayer: payer.address, destination }],
      ['/api/reclaim_rent', { userPrivateKeys: [wallet!.key.base58SecretKey], feePayerPrivateKey: feePayerKey, destination }],
    ];
    for (const [url, body] of bodies) {
      for (const fee of ['fast', 'AUTO', '0.001', '']) {
        const response = await post(t, url, { ...body, priorityFee: fee });
        assert.equal(response.statusCode, 400, `${url} ${fee}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_PRIORITY_FEE', url);
        assert.deepEqual(response.json().errors.map((e: { field: string }) => e.field), ['priorityFee'], url);
      }
    }
    // "auto" on an idle cluster: no recent fees, so 0; the preview and the prepare say so.
    const preview = await post(t, '/api/reclaim_rent/preview', { owners: [wallet!.signer.address], priorityFee: 'auto' });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.equal(preview.json().priorityFeeLamports, '0');
    const prepared = await post(t, '/api/reclaim_rent/prepare', { owners: [wallet!.signer.address], feePayer: payer.address, destination, priorityFee: 'auto' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    assert.equal(prepared.json().priorityFeeLamports, '0');
    // A number is stated as it was asked.
    const numbered = await post(t, '/api/reclaim_rent/preview', { owners: [wallet!.signer.address], priorityFee: 0.000001234 });
    assert.equal(numbered.json().priorityFeeLamports, '1234');
  });
});

describe('priorityFee: "auto" on the many-owner doors, on a busy cluster', () => {
  it('the preview states the number it resolved to, in one getRecentPrioritizationFees; a prepare with that number plans the same fees and net', async () => {
    const fleet = await wallets(3);
    const feePayer = await createFundedSigner(chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    await busy();
    try {
      proxy.reset();
      const preview = await post(t, '/api/reclaim_rent/preview', { owners: ownersOf(fleet), priorityFee: 'auto', transactionVersions: ['legacy', 0] });
      assert.equal(preview.statusCode, 200, preview.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 1, 'one read of the recent fees per request');
      const stated = preview.json() as ManyFees;
      const lamports = BigInt(stated.priorityFeeLamports);
      // The 75th percentile of fees spread from half to one and a half times the median, over the job's compute-unit bounds (6 closes).
      const computeUnits = 6 * CLOSE_COMPUTE_UNITS;
      assert.ok(lamports >= BigInt(Math.ceil((MEDIAN * computeUnits) / 1e6)), `resolved ${lamports}`);
      assert.ok(lamports <= BigInt(Math.ceil((1.5 * MEDIAN * computeUnits) / 1e6)), `resolved ${lamports}`);
      assert.equal(BigInt(stated.feeLamports), 5_000n * BigInt(stated.signatures!) + lamports);
      assert.equal(BigInt(stated.netLamports), BigInt(stated.totalReclaimableLamports!) - BigInt(stated.feeLamports));

      proxy.reset();
      const prepared = await post(t, '/api/reclaim_rent/prepare', {
        owners: ownersOf(fleet),
        feePayer: feePayer.signer.address,
        destination,
        priorityFee: Number(lamports) / 1e9,
      });
      assert.equal(prepared.statusCode, 200, prepared.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 0, 'a number is taken as it is: nothing read');
      const planned = prepared.json() as ManyFees;
      assert.equal(planned.priorityFeeLamports, stated.priorityFeeLamports);
      assert.equal(planned.feeLamports, stated.feeLamports);
      assert.equal(planned.netLamports, stated.netLamports);
      assert.equal((planned.transactions as unknown[]).length, stated.transactions);

      // The prepare asked for "auto" itself resolves with the fee payer and the destination too: one read, a number stated.
      proxy.reset();
      const auto = await post(t, '/api/reclaim_rent/prepare', { owners: ownersOf(fleet), feePayer: feePayer.signer.address, destination, priorityFee: 'auto' });
      assert.equal(auto.statusCode, 200, auto.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 1);
      const autoPlan = auto.json() as ManyFees;
      assert.ok(BigInt(autoPlan.priorityFeeLamports) >= BigInt(Math.ceil((MEDIAN * computeUnits) / 1e6)), autoPlan.priorityFeeLamports);
      const perTransaction = sum((autoPlan.transactions as { feeLamports: string }[]).map((tx) => BigInt(tx.feeLamports)));
      assert.equal(perTransaction.toString(), autoPlan.feeLamports);
    } finally {
      await idle();
    }
  });

  it('a keyed reclaim with "auto" lands: the fee payer pays exactly the fees stated, the destination receives exactly the rents', async () => {
    const fleet = await wallets(3);
    const feePayer = await createFundedSigner(chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const closable = fleet.flatMap((w) => w.accounts);
    const rents = sum(await balancesOf(chain, closable));
    const feePayerBefore = await getLamports(chain, feePayer.signer.address);
    await busy();
    try {
      proxy.reset();
      const response = await post(t, '/api/reclaim_rent', {
        userPrivateKeys: fleet.map((w) => w.key.base58SecretKey),
        feePayerPrivateKey: getBase58Decoder().decode(feePayer.secretKey),
        destination,
        priorityFee: 'auto',
      });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.status, 'success', body.message);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 1);
      const details = body.details as ManyFees & { transactions: { feeLamports: string; owners: string[] }[]; reclaimedLamports: string };
      const priority = BigInt(details.priorityFeeLamports);
      assert.ok(priority >= BigInt(Math.ceil((MEDIAN * 6 * CLOSE_COMPUTE_UNITS) / 1e6)), `resolved ${priority}`);
      for (const account of closable) assert.equal(await exists(account), false, `${account} closed`);
      const fees = sum(details.transactions.map((tx) => BigInt(tx.feeLamports)));
      const baseFees = sum(details.transactions.map((tx) => 5_000n * BigInt(1 + tx.owners.length)));
      // Each transaction pays its share of the priority fee, at most: never more than the total stated.
      assert.ok(fees > baseFees && fees <= baseFees + priority, `fees ${fees}, base ${baseFees}, priority ${priority}`);
      assert.equal(details.feeLamports, fees.toString());
      assert.equal(await getLamports(chain, feePayer.signer.address), feePayerBefore - fees, 'fee payer exact to the lamport');
      assert.equal(await getLamports(chain, destination), rents, 'destination exact to the lamport');
      assert.equal(details.reclaimedLamports, rents.toString());
      assert.equal(details.netLamports, (rents - fees).toString());
    } finally {
      await idle();
    }
  });

  it('"auto" never makes the job net-negative (the money rule over the whole job) unless allowNetLoss, and stays within MAX_PRIORITY_FEE_SOL', async () => {
    // One close of about 0.002 SOL, on a cluster so busy that its fee at the recent price would be
    // about 5 times what it returns; the operator's bounds far enough not to stop it first, but for
    // MAX_PRIORITY_FEE_SOL, which bounds the loss a caller accepts.
    const loose = await createTestApp({ autoPriorityFeeMaxMicroLamports: 10n ** 12n, maxPriorityFeeLamports: 5_000_000n } as Partial<Config>, { chain });
    apps.push(loose);
    const [wallet] = await wallets(1, mints.slice(0, 1));
    const feePayer = await createFundedSigner(chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const rent = sum(await balancesOf(chain, wallet!.accounts));
    await busy(1_000_000_000);
    try {
      const preview = await post(loose, '/api/reclaim_rent/preview', { owners: [wallet!.signer.address], priorityFee: 'auto' });
      assert.equal(preview.statusCode, 200, preview.body);
      const stated = preview.json() as ManyFees;
      // One transaction, two signatures (the fee payer's and the owner's): the fee takes all the rest.
      assert.equal(stated.signatures, 2);
      assert.equal(stated.priorityFeeLamports, (rent - 10_000n).toString());
      assert.equal(stated.netLamports, '0');
      const prepared = await post(loose, '/api/reclaim_rent/prepare', { owners: [wallet!.signer.address], feePayer: feePayer.signer.address, destination, priorityFee: 'auto' });
      assert.equal(prepared.statusCode, 200, prepared.body);
      assert.equal((prepared.json() as ManyFees).priorityFeeLamports, (rent - 10_000n).toString());
      assert.ok(BigInt((prepared.json() as ManyFees).netLamports) >= 0n, (prepared.json() as ManyFees).netLamports);
      // A caller who accepts a loss: the operator's MAX_PRIORITY_FEE_SOL is the bound.
      const lossy = await post(loose, '/api/reclaim_rent/prepare', {
        owners: [wallet!.signer.address],
        feePayer: feePayer.signer.address,
        destination,
        priorityFee: 'auto',
        allowNetLoss: true,
      });
      assert.equal(lossy.statusCode, 200, lossy.body);
      assert.equal((lossy.json() as ManyFees).priorityFeeLamports, '5000000');
    } finally {
      await idle();
    }
  });

  it('an owner left out (its account changed before the simulation): "auto" is priced again for the owners that remain, within what they return', async () => {
    const loose = await createTestApp({ autoPriorityFeeMaxMicroLamports: 10n ** 12n, maxPriorityFeeLamports: 5_000_000n } as Partial<Config>, {
      chain,
      chainAdapter: { rpcUrl: proxy.url },
    });
    apps.push(loose);
    const [changing, steady] = await wallets(2, mints.slice(0, 1));
    const feePayer = await createFundedSigner(chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const rent = sum(await balancesOf(chain, steady!.accounts));
    await busy(1_000_000_000);
    // The recent fees are read before the first simulation: then the cluster calms and a token
    // arrives in the account of `changing`, which the service read as empty.
    let happened = false;
    proxy.beforeForward(async (methods) => {
      if (!happened && methods.includes('simulateTransaction')) {
        happened = true;
        await idle();
        await mintTokens(chain, payer, mints[0]!.mint, changing!.accounts[0]!, 1n);
      }
    });
    try {
      const prepared = await post(loose, '/api/reclaim_rent/prepare', {
        owners: ownersOf([changing!, steady!]),
        feePayer: feePayer.signer.address,
        destination,
        priorityFee: 'auto',
      });
      assert.equal(prepared.statusCode, 200, prepared.body);
      assert.equal(happened, true);
      const body = prepared.json() as ManyFees & { transactions: { owners: string[] }[]; skippedAccounts: { address: string; code: string }[] };
      assert.deepEqual(body.skippedAccounts.map((a) => [a.address, a.code]), [[changing!.accounts[0], 'TRANSACTION_REJECTED']]);
      assert.deepEqual(body.transactions.map((tx) => tx.owners), [[steady!.signer.address]]);
      // The money rule of the owner that remains (one transaction, two signatures), not of both (three signatures, two rents).
      assert.equal(body.priorityFeeLamports, (rent - 10_000n).toString());
      assert.equal(body.netLamports, '0');
    } finally {
      proxy.beforeForward(null);
      await idle();
    }
  });

  it('AUTO_PRIORITY_FEE_MAX_MICROLAMPORTS bounds the price "auto" pays for many owners', async () => {
    const capped = await createTestApp({ autoPriorityFeeMaxMicroLamports: 1_000n } as Partial<Config>, { chain });
    apps.push(capped);
    const fleet = await wallets(3);
    await busy();
    try {
      const response = await post(capped, '/api/reclaim_rent/preview', { owners: ownersOf(fleet), priorityFee: 'auto' });
      assert.equal(response.statusCode, 200, response.body);
      // Every reported fee (at least half the median) is over the cap: the cap's price over the job's compute units, rounded up.
      assert.equal((response.json() as ManyFees).priorityFeeLamports, String(Math.ceil((1_000 * 6 * CLOSE_COMPUTE_UNITS) / 1e6)));
    } finally {
      await idle();
    }
  });
});
