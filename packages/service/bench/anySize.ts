/**
 * A dust wallet of any size: `npm run bench:any-size` (a few minutes).
 *
 * A keyed reclaim (POST /api/reclaim_rent, Cinder signs) of one wallet of 100, 1,000 and 5,000
 * empty token accounts (half of each token program), on a service with a fee sponsor, through an
 * RPC with a real cluster's timing (test/chain/rpcProxy.ts: a sent transaction reads as unknown for
 * 0.4 s and as processed until 1.2 s after it was sent). For each size, in the same process:
 * - 0 SOL: only what the owner cannot pay is sponsored (its first transaction), the rest is
 *   owner-paid and sent together once that one landed;
 * - baseline: the same wallet holding 0.05 SOL, the owner paying everything, all sent together;
 * - busy cluster (the local chain's busyCluster fault: recent fees around BUSY_MEDIAN µL/CU, and a
 *   transaction paying less waits BUSY_WAIT_SLOTS slots): the 0-SOL wallet with priorityFee 0,
 *   then with "auto" (the fee the service reads from getRecentPrioritizationFees).
 * BENCH_SIZES=100,1000 runs only those sizes.
 * The time is from the request to its answer (every transaction landed and confirmed); the
 * difference is what waiting for the sponsored transaction costs.
 *
 * Then the fleet (./anySizeFleet.ts): `cinder reclaim --keys-file F --fee-payer K --destination A
 * --yes` with 1,000 wallets of 0 SOL and 2 empty accounts each, at the same timing, beside its
 * baseline (one prepare of all the wallets, then the relays), on a busy cluster with
 * `--priority-fee auto`, and with the chain in the service's process. `npm run bench:any-size -w @cinder/service -- wallet` or `-- fleet` runs one part
 * (the root `npm run bench:any-size` runs all of it, then the web page's part).
 */
import { rpcResult, createSponsoredTestApp, createTestKey, startTestChain, writeEmptyTokenAccounts } from '@cinder/testkit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { startRpcProxy } from '../test/chain/rpcProxy.ts';
import { FLEET_VARIANTS, runFleet } from './anySizeFleet.ts';

const SIZES = process.env.BENCH_SIZES ? process.env.BENCH_SIZES.split(',').map(Number) : [100, 1000, 5000];
const CLUSTER_TIMING = { unknownMs: 400, processedUntilMs: 1200 };
/** A congested cluster's median price and what paying less costs: 20 slots (8 s) of waiting. */
const BUSY_MEDIAN = 2_000;
const BUSY_WAIT_SLOTS = 20;

type Variant = 'sponsored' | 'baseline' | 'busy, fee 0' | 'busy, fee auto';

async function run(accounts: number, variant: Variant) {
  const funded = variant === 'baseline';
  const chain = await startTestChain();
  const proxy = await startRpcProxy(chain.localnet.rpcUrl, { confirmation: CLUSTER_TIMING });
  const s = await createSponsoredTestApp(10_000_000_000n, {}, { chain, chainAdapter: { rpcUrl: proxy.url } });
  try {
    const owner = await createTestKey();
    if (funded) await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
    for (const program of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) await writeEmptyTokenAccounts(chain, owner.address, accounts / 2, program);
    if (variant.startsWith('busy')) {
      await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ busyCluster: { medianMicroLamports: BUSY_MEDIAN, waitSlots: BUSY_WAIT_SLOTS } }]);
    }
    const priorityFee = variant === 'busy, fee auto' ? 'auto' : 0;
    const started = performance.now();
    const answer = await s.t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee } });
    const ms = performance.now() - started;
    const body = answer.json() as { status: string; message: string; details: { transactions: unknown[]; feeLamports: string; netLamports: string; closedAccounts: string[] } };
    if (body.status !== 'success') throw new Error(`reclaim of ${accounts}: ${answer.statusCode} ${answer.body.slice(0, 400)}`);
    return { transactions: body.details.transactions.length, closed: body.details.closedAccounts.length, fee: body.details.feeLamports, rpcCalls: proxy.requests.length, ms };
  } finally {
    await s.close();
    await proxy.close();
    await chain.close();
  }
}

const part = process.argv[2];
if (part !== undefined && part !== 'wallet' && part !== 'fleet') throw new Error('npm run bench:any-size [-- wallet | fleet]');

if (part !== 'fleet') {
  console.log('accounts  wallet                          transactions  closed  fee (lamports)  RPC calls  request to last close');
  const LABELS: Record<Variant, string> = {
    sponsored: '0 SOL, sponsored',
    baseline: 'baseline: owner pays',
    'busy, fee 0': '0 SOL, busy cluster, fee 0',
    'busy, fee auto': '0 SOL, busy cluster, "auto"',
  };
  for (const accounts of SIZES) {
    for (const variant of ['sponsored', 'baseline', 'busy, fee 0', 'busy, fee auto'] as const) {
      const r = await run(accounts, variant);
      console.log(`${String(accounts).padStart(8)}  ${LABELS[variant].padEnd(30)}  ${String(r.transactions).padStart(12)}  ${String(r.closed).padStart(6)}  ${r.fee.padStart(14)}  ${String(r.rpcCalls).padStart(9)}  ${(r.ms / 1000).toFixed(2)} s`);
    }
  }
}

if (part !== 'wallet') {
  const FLEET_WALLETS = 1000;
  const FLEET_WARM_UP_WALLETS = 50;
  console.log('\nfleet: cinder reclaim --keys-file (1,000 wallets of 0 SOL, 2 empty accounts each) --fee-payer --destination --yes');
  console.log('prepares                      wallets  transactions  did nothing  closed  fee (lamports)  command to last close');
  // Unmeasured, so that the first row does not alone pay for this process's first compilations.
  for (const variant of FLEET_VARIANTS) await runFleet(FLEET_WARM_UP_WALLETS, CLUSTER_TIMING, variant);
  for (const variant of FLEET_VARIANTS) {
    const r = await runFleet(FLEET_WALLETS, CLUSTER_TIMING, variant);
    console.log(
      `${variant.name.padEnd(28)}  ${String(r.wallets).padStart(7)}  ${String(r.landed).padStart(12)}  ${String(r.dropped).padStart(11)}  ${String(r.closed).padStart(6)}  ${String(r.feeLamports).padStart(14)}  ${(r.ms / 1000).toFixed(2)} s`,
    );
  }
}
