/**
 * `cinder reclaim` (the real binary) against the real app and the embedded chain, to the lamport
 * (the keyless commands are in keyless.test.ts):
 * - the preview table lists every account with its action and real lamports, and the sums; nothing
 *   is sent without --yes (the chain is unchanged);
 * - with the key and --yes the wallet is reclaimed in as many transactions as the preview said, one
 *   progress line each, and the owner gains exactly the printed net;
 * - --keys-file reclaims three wallets (a base58 key, a JSON array, a solana-keygen file) one after
 *   another and prints a summary table; a line that is not a key is named by number, never printed;
 * - --withdraw-excess takes a kept account's excess and leaves it open.
 *
 * Relied on (checked against the chain here): closing an account returns all its lamports to the
 * owner, and each transaction costs 5,000 lamports per signature (the owner's only) with no
 * priority fee.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Address } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { fetchMint } from '@solana-program/token';
import { createTestMint, getLamports, sendInstructions } from '@cinder/testkit';
import { emptyAccounts, lamportsOf, stillOpen, walletToReclaim } from '../sdk/reclaimFixture.ts';
import { cinder, dir, secrets, t, useCliApp } from './cliFixture.ts';

/** "0.00203928" (SOL) → 2039280n (lamports), signs kept. */
function lamports(solText: string): bigint {
  const match = /^([+-]?)(\d+)(?:\.(\d{1,9}))?$/.exec(solText);
  assert.ok(match, `an amount of SOL: ${solText}`);
  const value = BigInt(match[2]!) * 1_000_000_000n + BigInt((match[3] ?? '').padEnd(9, '0'));
  return match[1] === '-' ? -value : value;
}

function summaryValue(output: string, name: string): string {
  const match = new RegExp(`^${name}: (\\S+)`, 'm').exec(output);
  assert.ok(match, `a "${name}:" line in:\n${output}`);
  return match[1]!;
}

useCliApp('cinder-reclaim-cli-', { cinderUrl: true, timeoutMs: 120_000 });

describe('cinder reclaim', () => {
  it('--owner prints the preview table and the sums, and sends nothing', async () => {
    const w = await walletToReclaim(t.chain, { classic: 3 });
    secrets.push(w.key);
    const owner = w.signer.address;
    const ownerBefore = await getLamports(t.chain, owner);
    const run = await cinder(['reclaim', '--owner', owner]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.equal(lines[0], `Wallet ${owner}: ${w.closable.length + 2} token accounts`);
    assert.match(lines[1]!, /^ACCOUNT +MINT +ACTION +LAMPORTS +CODE$/);
    const row = (account: Address) => {
      const line = lines.find((l) => l.startsWith(`${account} `));
      assert.ok(line, `a row for ${account}`);
      return line.split(/ +/);
    };
    for (const account of w.closable) {
      const [, , action, held] = row(account);
      assert.ok(action === 'close' || action === 'unwrap', action);
      assert.equal(held, String(await getLamports(t.chain, account)), 'the account\'s real lamports');
    }
    assert.deepEqual(row(w.frozen!).slice(2), ['skip', String(await getLamports(t.chain, w.frozen!)), 'ACCOUNT_FROZEN']);
    assert.deepEqual(row(w.kept!.account).slice(2), ['keep', String(await getLamports(t.chain, w.kept!.account))]);

    const back = await lamportsOf(t.chain, w.closable);
    assert.equal(summaryValue(run.stdout, 'accounts'), String(w.closable.length + 2));
    assert.match(run.stdout, /^accounts: \d+ \(close \d+, unwrap 1, keep 1, skip 1\)$/m);
    assert.equal(summaryValue(run.stdout, 'transactions'), '1');
    assert.equal(lamports(summaryValue(run.stdout, 'reclaim')), back);
    assert.equal(lamports(summaryValue(run.stdout, 'fees')), 5000n);
    assert.equal(lamports(summaryValue(run.stdout, 'net')), back - 5000n);
    assert.match(run.stdout, /Nothing was sent\. To reclaim, run the same command with the key \(--key-file PATH or --key-env VAR\) and --yes\.\n$/);
    assert.deepEqual(await stillOpen(t.chain, w.closable), w.closable, 'nothing was closed');
    assert.equal(await getLamports(t.chain, owner), ownerBefore);

    // With the key but without --yes: the same preview, and still nothing sent.
    const keyed = await cinder(['reclaim', '--key-env', 'K'], { env: { K: w.key } });
    assert.equal(keyed.code, 0, keyed.stderr);
    assert.equal(lamports(summaryValue(keyed.stdout, 'net')), back - 5000n);
    assert.match(keyed.stdout, /Nothing was sent\. To reclaim this, run the same command with --yes\.\n$/);
    assert.deepEqual(await stillOpen(t.chain, w.closable), w.closable);
  });

  it('--yes reclaims in the transactions the preview announced, one progress line each, to the lamport', async () => {
    const w = await walletToReclaim(t.chain, { classic: 2 });
    secrets.push(w.key);
    // Enough empty accounts that they cannot fit one transaction, v1 included (about 60 closes each).
    const mint = await createTestMint(t.chain, w.signer, { decimals: 0 });
    const many = await emptyAccounts(t.chain, w.signer, w.signer.address, mint, 70);
    const closable = [...w.closable, ...many];
    await writeFile(join(dir, 'owner.json'), JSON.stringify([...w.secretKey]), { mode: 0o600 });
    const owner = w.signer.address;
    const back = await lamportsOf(t.chain, closable);
    const before = await getLamports(t.chain, owner);

    const run = await cinder(['reclaim', '--key-file', 'owner.json', '--yes']);
    assert.equal(run.code, 0, run.stderr);
    const planned = Number(summaryValue(run.stdout, 'transactions'));
    assert.ok(planned >= 2, `${closable.length} closes need more than one transaction, planned ${planned}`);
    const progress = run.stdout.split('\n').filter((l) => l.startsWith('transaction '));
    assert.equal(progress.length, planned, 'one progress line per transaction');
    progress.forEach((line, i) => assert.match(line, new RegExp(`^transaction ${i + 1}/${planned} [1-9A-HJ-NP-Za-km-z]{64,88}: success, closed \\d+ accounts, fee 0\\.000005 SOL$`)));
    const closedPerLine = progress.map((l) => Number(/closed (\d+) accounts/.exec(l)![1]));
    assert.equal(closedPerLine.reduce((a, b) => a + b, 0), closable.length);
    assert.match(run.stdout, /^status: success$/m);

    const fees = 5000n * BigInt(planned);
    const result = /^closed (\d+) accounts; reclaimed (\S+) SOL; fees (\S+) SOL; net (\S+) SOL$/m.exec(run.stdout);
    assert.ok(result, run.stdout);
    assert.equal(Number(result[1]), closable.length);
    assert.equal(lamports(result[2]!), back);
    assert.equal(lamports(result[3]!), fees);
    assert.equal(lamports(result[4]!), back - fees);
    assert.equal(lamports(summaryValue(run.stdout, 'net')), back - fees, 'the preview said the same');
    assert.equal((await getLamports(t.chain, owner)) - before, back - fees, 'the owner gained exactly the net');
    assert.deepEqual(await stillOpen(t.chain, closable), []);
    assert.deepEqual(await stillOpen(t.chain, [w.frozen!, w.kept!.account]), [w.frozen!, w.kept!.account]);

    // Once more: nothing left to do, and the key is not sent.
    const again = await cinder(['reclaim', '--key-file', 'owner.json', '--yes']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`Nothing to reclaim for ${owner}; nothing was sent\\.\\n$`));
  });

  it('--burn burns the listed mints too; --json prints the preview and the result', async () => {
    const w = await walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false });
    secrets.push(w.key);
    const before = await getLamports(t.chain, w.signer.address);
    const run = await cinder(['reclaim', '--key-env', 'K', '--burn', w.kept!.mint, '--yes', '--json'], { env: { K: w.key } });
    assert.equal(run.code, 0, run.stderr);
    const output = JSON.parse(run.stdout) as { preview: { summary: { netLamports: string } }; result: { status: string; details: { netLamports: string; burned: unknown[] } } };
    assert.equal(output.result.status, 'success');
    assert.deepEqual(output.result.details.burned, [{ mint: w.kept!.mint, amount: '5000000', decimals: 6 }]);
    assert.equal(output.result.details.netLamports, output.preview.summary.netLamports);
    assert.equal((await getLamports(t.chain, w.signer.address)) - before, BigInt(output.result.details.netLamports));
    assert.equal((await fetchMint(t.chain.rpc, w.kept!.mint)).data.supply, 0n);
  });

  it('--withdraw-excess shows and takes a kept account\'s lamports above its rent-exempt minimum, leaving it open', async () => {
    const w = await walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false });
    secrets.push(w.key);
    await sendInstructions(t.chain, w.signer, [getTransferSolInstruction({ source: w.signer, destination: w.kept!.account, amount: 12_345n })]);
    const preview = await cinder(['reclaim', '--owner', w.signer.address, '--withdraw-excess']);
    assert.equal(preview.code, 0, preview.stderr);
    const row = preview.stdout.split('\n').find((l) => l.startsWith(`${w.kept!.account} `))!.split(/ +/);
    assert.deepEqual(row.slice(2), ['withdraw_excess', '12345'], 'the LAMPORTS column shows the excess taken');
    assert.equal(lamports(summaryValue(preview.stdout, 'reclaim')), 2_039_280n);
    assert.match(preview.stdout, /^reclaim: 0\.00203928 SOL \+ excess 0\.000012345 SOL$/m);

    const before = await getLamports(t.chain, w.signer.address);
    const run = await cinder(['reclaim', '--key-env', 'K', '--withdraw-excess', '--yes'], { env: { K: w.key } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^closed 1 account; reclaimed 0\.00203928 SOL \+ excess 0\.000012345 SOL; fees 0\.000005 SOL; net \+0\.002046625 SOL$/m);
    assert.equal((await getLamports(t.chain, w.signer.address)) - before, 2_039_280n + 12_345n - 5_000n);
    assert.equal(await getLamports(t.chain, w.kept!.account), 2_039_280n, 'the kept account stays, at its rent-exempt minimum');
  });

  it('--keys-file reclaims three wallets one after another and prints a summary table', async () => {
    const wallets = await Promise.all([0, 1, 2].map(() => walletToReclaim(t.chain, { classic: 2, frozen: false, kept: false })));
    for (const w of wallets) secrets.push(w.key);
    await writeFile(join(dir, 'third.json'), JSON.stringify([...wallets[2]!.secretKey]), { mode: 0o600 });
    await writeFile(
      join(dir, 'keys.txt'),
      ['# wallets to clean', wallets[0]!.key, JSON.stringify([...wallets[1]!.secretKey]), '', 'third.json', 'missing.json'].join('\n'),
      { mode: 0o600 },
    );
    const backs = await Promise.all(wallets.map((w) => lamportsOf(t.chain, w.closable)));
    const befores = await Promise.all(wallets.map((w) => getLamports(t.chain, w.signer.address)));

    const run = await cinder(['reclaim', '--keys-file', 'keys.txt', '--yes']);
    assert.equal(run.code, 1, 'a line that is not a key makes the run fail, after the others are done');
    assert.equal(run.stderr, 'cinder: keys.txt line 6: not a key, nor a key file that can be read (ENOENT); skipped\n');
    const table = run.stdout.slice(run.stdout.indexOf('WALLET'));
    assert.match(table, /^WALLET +STATUS +CLOSED +TXS +RECLAIMED SOL +FEES SOL +NET SOL +NOTE\n/);
    let total = 0n;
    for (const [i, w] of wallets.entries()) {
      const gained = (await getLamports(t.chain, w.signer.address)) - befores[i]!;
      assert.equal(gained, backs[i]! - 5000n, `wallet ${i + 1} gained its rent less one fee`);
      assert.deepEqual(await stillOpen(t.chain, w.closable), []);
      const cells = table.split('\n').find((l) => l.startsWith(w.signer.address))!.split(/ +/);
      assert.deepEqual(cells.slice(1, 4), ['success', String(w.closable.length), '1']);
      assert.equal(lamports(cells[4]!), backs[i]);
      assert.equal(lamports(cells[6]!), gained);
      assert.match(run.stdout, new RegExp(`^\\[${i + 1}/4\\] ${w.signer.address} transaction 1/1 \\S+: success`, 'm'));
      total += gained;
    }
    assert.match(table, /^line 6 +error +- +- +0 +0 +0 +not a key, nor a key file that can be read \(ENOENT\); skipped$/m);
    assert.equal(lamports(table.split('\n').find((l) => l.startsWith('total'))!.split(/ +/)[3]!), total);
  });
});
