/**
 * `cinder reclaim --keys-file F --fee-payer K --destination A --priority-fee auto` on a busy
 * cluster (the embedded chain's busyCluster fault: a transaction paying less than the recent median
 * waits far past its blockhash's lifetime). The preview states what "auto" resolves to; with --yes
 * each part's prepare asks for "auto" and states the number it resolved to before anything is
 * signed. Checked on the chain: every account closed, the destination holding every rent, the fee
 * payer charged exactly the stated fees of what landed, a priority fee paid and never more than
 * the parts stated in total.
 *
 * Relied on (checked against the chain): an empty SPL Token account holds 2,039,280 lamports; each
 * transaction's base fee is 5,000 lamports per signature.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createTestKey, getLamports, rpcResult, writeEmptyTokenAccounts } from '@cinder/testkit';
import { cinder, dir, t, url, useCliApp, writeFleetFiles } from './cliFixture.ts';

useCliApp('cinder-reclaim-fleet-auto-', {
  timeoutMs: 300_000,
  // A full window of recent slots, as a real cluster always has (see the service's autoPriorityFee.test.ts).
  setUp: async () => {
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_warpSlots', [200]);
  },
});

const RENT = 2_039_280n;
const FEE_PER_SIGNATURE = 5_000n;
const MEDIAN = 50_000;
/** The packer's compute-unit bound of one empty SPL Token account's close (the service's src/plan/pack.ts). */
const CLOSE_COMPUTE_UNITS = 12_000;

/** "0.00012" SOL as lamports, exactly. */
function lamportsOf(solText: string): bigint {
  const [whole = '0', fraction = ''] = solText.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'));
}

interface StateFile {
  transactions: { signature: string; owners: string[]; closedAccounts: string[]; feeLamports: string; status: string }[];
}

describe('cinder reclaim --keys-file --priority-fee auto', () => {
  it('on a busy cluster: each part resolves "auto" and states it, the job lands, the fee payer pays exactly the stated fees', async () => {
    const PART = 2;
    const WALLETS = 2 * PART;
    const owners = await Promise.all(Array.from({ length: WALLETS }, () => createTestKey()));
    for (const owner of owners) await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
    const { feePayer, destination } = await writeFleetFiles('auto', owners, 1_000_000_000n);
    const args = ['reclaim', '--keys-file', 'auto.keys', '--fee-payer', 'auto.payer.json', '--destination', destination, '--priority-fee', 'auto'];
    const env = { CINDER_FLEET_PART_OWNERS: String(PART) };

    const refused = await cinder([...args.slice(0, -1), 'fast'], { url, env });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--priority-fee must be an amount of SOL .*or auto/);

    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setFaults', [{ busyCluster: { medianMicroLamports: MEDIAN, waitSlots: 1_000 } }]);
    try {
      const preview = await cinder([...args, '--json'], { url, env });
      assert.equal(preview.code, 0, preview.stderr);
      const stated = JSON.parse(preview.stdout) as { signatures: number; feeLamports: string; priorityFeeLamports: string };
      // Each part's "auto", at least the busy median over its compute-unit bounds (two closes).
      assert.ok(BigInt(stated.priorityFeeLamports) >= 2n * BigInt(Math.ceil((MEDIAN * 2 * CLOSE_COMPUTE_UNITS) / 1e6)), stated.priorityFeeLamports);
      assert.equal(BigInt(stated.feeLamports), FEE_PER_SIGNATURE * BigInt(stated.signatures) + BigInt(stated.priorityFeeLamports));
      const text = await cinder(args, { url, env });
      assert.match(text.stdout, /^priority fee \S+ SOL \(auto: /m);

      const payerBefore = await getLamports(t.chain, feePayer.address);
      const run = await cinder([...args, '--yes'], { url, env });
      assert.equal(run.code, 0, run.stdout.slice(-2000) + run.stderr.slice(-2000));
      const partLines = [...run.stdout.matchAll(/^(?:Prepared again .*?: )?(?:part \d+\/\d+: )?\d+ wallets? in \d+ transactions?: .* \(priority fee (\S+) SOL, auto\)$/gm)];
      assert.ok(partLines.length >= 2, run.stdout);
      const statedPriority = partLines.reduce((sum, m) => sum + lamportsOf(m[1]!), 0n);

      const { transactions } = JSON.parse(await readFile(join(dir, 'auto.keys.reclaim-state.json'), 'utf8')) as StateFile;
      const landed = transactions.filter((tx) => tx.status === 'success');
      const closed = landed.flatMap((tx) => tx.closedAccounts);
      assert.equal(new Set(closed).size, WALLETS, 'every account closed once');
      assert.equal(await getLamports(t.chain, destination), BigInt(WALLETS) * RENT, 'every rent at the destination');
      const paid = payerBefore - (await getLamports(t.chain, feePayer.address));
      assert.equal(paid, landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), 'the fee payer paid exactly the stated fees of what landed');
      const baseFees = landed.reduce((sum, tx) => sum + FEE_PER_SIGNATURE * BigInt(1 + tx.owners.length), 0n);
      assert.ok(paid - baseFees > 0n, 'a priority fee was paid');
      assert.ok(paid - baseFees <= statedPriority, `priority fees paid ${paid - baseFees}, at most the ${statedPriority} the parts stated`);
    } finally {
      await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults');
    }
  });
});
