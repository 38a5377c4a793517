/**
 * `priorityFee: "auto"` on the real app and the embedded chain under its busyCluster fault (a
 * transaction paying less than the recent median waits far past its blockhash's lifetime): the
 * field's forms, one getRecentPrioritizationFees per job (counted at a proxy in front of the
 * chain), the preview's resolved number and a prepare with it giving the same net to the lamport,
 * the operator's cap, the sponsor's fee bound, and a keyed reclaim that lands where a 0 fee expires.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import type { Config } from '../../src/config.ts';
import type { RpcProxy } from '../chain/rpcProxy.ts';
import { MEDIAN, startBusyClusterFixture, type BusyClusterFixture } from './busyClusterFixture.ts';
import {
  createAta,
  createFundedSigner,
  createMint2022,
  createSponsoredTestApp,
  createTestApp,
  createTestMint,
  getLamports,
  rpcResult,
  TOKEN_2022_PROGRAM_ADDRESS,
  type TestApp,
  type TestChain,
} from '@cinder/testkit';

/** The packer's compute-unit bounds of a wallet of 3 empty Token and 2 empty Token-2022 accounts (src/plan/pack.ts). */
const JOB_COMPUTE_UNITS = 3 * 12_000 + 2 * 30_000;
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';

let fixture: BusyClusterFixture;
let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let payer: KeyPairSigner;
let apps: BusyClusterFixture['apps'];

before(async () => {
  fixture = await startBusyClusterFixture();
  ({ chain, proxy, t, payer, apps } = fixture);
});
after(() => fixture.close());

const busy = (median?: number) => fixture.busy(median);
const idle = () => fixture.idle();

/** An owner (funded with `lamports`, none: no SOL at all) of 3 empty Token and 2 empty Token-2022 accounts. Made while the cluster is idle. */
async function walletOfFive(lamports: bigint | null) {
  const owner = lamports === null ? { signer: await generateKeyPairSigner(), secretKey: new Uint8Array() } : await createFundedSigner(chain, lamports);
  const accounts: Address[] = [];
  for (let i = 0; i < 3; i++) accounts.push(await createAta(chain, payer, owner.signer.address, await createTestMint(chain, payer, { decimals: 0 })));
  for (let i = 0; i < 2; i++) {
    const mint = await createMint2022(chain, payer, { decimals: 0 });
    accounts.push(await createAta(chain, payer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS));
  }
  return { ...owner, key: getBase58Decoder().decode(owner.secretKey), accounts };
}

const post = (app: TestApp, url: string, payload: Record<string, unknown>) =>
  app.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
const exists = async (address: Address) => (await chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value !== null;

/** The SetComputeUnitPrice of a prepared (base64, unsigned) legacy transaction. */
function computeUnitPriceOf(wire: string): bigint {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  // Prepared before the v1 gate: a legacy message, which lists its instructions.
  const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes) as unknown as {
    staticAccounts: readonly string[];
    instructions: readonly { programAddressIndex: number; data?: Uint8Array }[];
  };
  for (const instruction of message.instructions) {
    const data = instruction.data;
    if (message.staticAccounts[instruction.programAddressIndex] === COMPUTE_BUDGET && data?.[0] === 3) {
      return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true);
    }
  }
  return 0n;
}

interface Summary { priorityFee: number; priorityFeeLamports: string; feeLamports: string; netLamports: string; transactions: number; problem: unknown; sponsored: boolean }

describe('priorityFee: the field', () => {
  it('takes "auto" on every one-owner door; any other string is a 400 naming priorityFee', async () => {
    const owner = await walletOfFive(1_000_000_000n);
    const bodies: [string, Record<string, unknown>][] = [
      ['/api/reclaim_rent/prepare', { owner: owner.signer.address }],
      ['/api/burn_tokens/prepare', { owner: owner.signer.address, mint: payer.address }],
      ['/api/reclaim_rent', { userPrivateKey: owner.key }],
      ['/api/burn_tokens', { userPrivateKey: owner.key, mint: payer.address }],
    ];
    for (const [url, body] of bodies) {
      for (const fee of ['fast', 'AUTO', '0.001', '']) {
        const response = await post(t, url, { ...body, priorityFee: fee });
        assert.equal(response.statusCode, 400, `${url} ${fee}: ${response.body}`);
        assert.equal(response.json().code, 'INVALID_PRIORITY_FEE', url);
        assert.deepEqual(response.json().errors.map((e: { field: string }) => e.field), ['priorityFee'], url);
        assert.match(response.json().errors[0].message, /"auto"/);
      }
    }
    const query = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}&priorityFee=fast` });
    assert.equal(query.statusCode, 400, query.body);
    assert.deepEqual(query.json().errors.map((e: { field: string }) => e.field), ['priorityFee']);
    // "auto" itself is taken: the prepare plans (idle cluster: no recent fees, so 0).
    const prepared = await post(t, '/api/reclaim_rent/prepare', { owner: owner.signer.address, priorityFee: 'auto' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    assert.equal(prepared.json().details.summary.priorityFeeLamports, '0');
  });
});

describe('priorityFee: "auto" on a busy cluster', () => {
  it('the preview states the number it resolved to, in one getRecentPrioritizationFees; a prepare with that number gives the same net, every price at or over the median', async () => {
    const owner = await walletOfFive(1_000_000_000n);
    await busy();
    try {
      proxy.reset();
      const preview = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}&priorityFee=auto` });
      assert.equal(preview.statusCode, 200, preview.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 1, 'one read of the recent fees per job');
      const summary = preview.json().summary as Summary;
      assert.equal(summary.problem, null);
      const lamports = BigInt(summary.priorityFeeLamports);
      // The 75th percentile of fees spread from half to one and a half times the median, over the job's compute-unit bounds.
      assert.ok(lamports >= BigInt(Math.ceil((MEDIAN * JOB_COMPUTE_UNITS) / 1e6)), `resolved ${lamports}`);
      assert.ok(lamports <= BigInt(Math.ceil((1.5 * MEDIAN * JOB_COMPUTE_UNITS) / 1e6)), `resolved ${lamports}`);
      assert.equal(BigInt(Math.round(summary.priorityFee * 1e9)), lamports, 'priorityFee is the same number in SOL');
      assert.equal(BigInt(summary.feeLamports), 5_000n * BigInt(summary.transactions) + lamports);

      proxy.reset();
      const prepared = await post(t, '/api/reclaim_rent/prepare', { owner: owner.signer.address, priorityFee: summary.priorityFee });
      assert.equal(prepared.statusCode, 200, prepared.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 0, 'a number is taken as it is: nothing read');
      const details = prepared.json().details.summary as Summary;
      assert.equal(details.netLamports, summary.netLamports);
      assert.equal(details.feeLamports, summary.feeLamports);
      assert.equal(details.priorityFeeLamports, summary.priorityFeeLamports);
      assert.ok(prepared.json().transactions.length >= 1);
      for (const wire of prepared.json().transactions as string[]) {
        assert.ok(computeUnitPriceOf(wire) >= BigInt(MEDIAN), `price ${computeUnitPriceOf(wire)} clears the busy median`);
      }
    } finally {
      await idle();
    }
  });

  it('a keyed reclaim with "auto" lands; the same with 0 waits behind the busy cluster and expires, nothing spent', async () => {
    const paying = await walletOfFive(1_000_000_000n);
    const stingy = await walletOfFive(1_000_000_000n);
    await busy();
    try {
      const before = await getLamports(chain, paying.signer.address);
      proxy.reset();
      const landed = await post(t, '/api/reclaim_rent', { userPrivateKey: paying.key, priorityFee: 'auto' });
      assert.equal(landed.statusCode, 200, landed.body);
      assert.equal(landed.json().status, 'success', landed.body);
      assert.equal(proxy.count('getRecentPrioritizationFees'), 1);
      for (const account of paying.accounts) assert.equal(await exists(account), false, `${account} closed`);
      assert.equal(await getLamports(chain, paying.signer.address), before + BigInt(landed.json().details.netLamports), 'owner exact to the lamport');

      // A 0 fee waits 1,000 slots, past its blockhash's 150: slots are warped while the service waits for it.
      const stingyBefore = await getLamports(chain, stingy.signer.address);
      let done = false;
      const waiting = post(t, '/api/reclaim_rent', { userPrivateKey: stingy.key, priorityFee: 0 }).finally(() => (done = true));
      while (!done) {
        await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [20]);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const expired = await waiting;
      assert.equal(expired.json().status, 'failed', expired.body);
      for (const account of stingy.accounts) assert.equal(await exists(account), true, `${account} still open`);
      assert.equal(await getLamports(chain, stingy.signer.address), stingyBefore, 'nothing landed, nothing charged');
    } finally {
      await idle();
    }
  });

  it('the operator\'s cap bounds the price "auto" pays, and MAX_PRIORITY_FEE_SOL its total', async () => {
    const owner = await walletOfFive(1_000_000_000n);
    const capped = await createTestApp({ autoPriorityFeeMaxMicroLamports: 1_000n } as Partial<Config>, { chain });
    const tiny = await createTestApp({ maxPriorityFeeLamports: 50n } as Partial<Config>, { chain });
    apps.push(capped, tiny);
    await busy();
    try {
      const previewOn = async (app: TestApp) => {
        const response = await app.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.signer.address}&priorityFee=auto` });
        assert.equal(response.statusCode, 200, response.body);
        return response.json().summary as Summary;
      };
      // Every reported fee (at least half the median) is over the cap: the cap's price over the job's compute units, rounded up.
      assert.equal((await previewOn(capped)).priorityFeeLamports, String(Math.ceil((1_000 * JOB_COMPUTE_UNITS) / 1e6)));
      assert.equal((await previewOn(tiny)).priorityFeeLamports, '50');
    } finally {
      await idle();
    }
  });

  it('sponsored: "auto" stays within the sponsor\'s fee bound, so the sponsor pays instead of refusing', async () => {
    const { t: sponsored, close } = await createSponsoredTestApp(10_000_000_000n, {}, { chain });
    apps.push({ close });
    const owner = await walletOfFive(null);
    // A median so high that, unbounded, the job's fee would be 20 times the sponsor's bound.
    await busy(2_000_000);
    try {
      const prepared = await post(sponsored, '/api/reclaim_rent/prepare', { owner: owner.signer.address, priorityFee: 'auto', feePayer: 'sponsor' });
      assert.equal(prepared.statusCode, 200, prepared.body);
      const summary = prepared.json().details.summary as Summary;
      assert.equal(summary.sponsored, true);
      const bound = sponsored.config.sponsorPolicy.maxFeeLamports;
      // One transaction at most (5 accounts): the bound less two signatures, less a lamport per account for the share's remainder.
      assert.equal(BigInt(summary.priorityFeeLamports), bound - 10_000n - 5n);
      for (const wire of prepared.json().transactions as string[]) assert.ok(computeUnitPriceOf(wire) > 0n);
      assert.ok(BigInt(summary.feeLamports) <= bound * BigInt(summary.transactions));
      // Asked for explicitly, the same fee over the bound is refused naming the field.
      const over = await post(sponsored, '/api/reclaim_rent/prepare', { owner: owner.signer.address, priorityFee: 0.0001, feePayer: 'sponsor' });
      assert.equal(over.statusCode, 400, over.body);
      assert.equal(over.json().code, 'INVALID_PRIORITY_FEE');
    } finally {
      await idle();
    }
  });
});
