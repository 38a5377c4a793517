/**
 * `cinder burn --unsigned`, `cinder reclaim --unsigned` and `cinder relay` (the real binary)
 * against the real app and the embedded chain, to the lamport: the unsigned transactions are
 * signed by the wallet (here @solana/kit, as Phantom or a Ledger would) and relayed; an unsigned
 * file, and a sponsored one without its relay token, are refused and move nothing; a 0-SOL wallet
 * reclaims through the fee sponsor, which ends where it began; usage errors (exit 2) never echo
 * a key given in the wrong place.
 *
 * Relied on (checked against the chain here): closing an account returns all its lamports to the
 * owner, and each transaction costs 5,000 lamports per signature with no priority fee (two
 * signatures when sponsored: the owner's and the sponsor's).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { createKeyPairSignerFromBytes, getBase58Decoder } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { main } from '../../src/cli.ts';
import { createSponsoredTestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createAta, createAuxTokenAccount, createFundedSigner, createTestMint, getLamports, mintTokens, writeEmptyTokenAccounts } from '@cinder/testkit';
import { lamportsOf, signPrepared, stillOpen, walletToReclaim } from '../sdk/reclaimFixture.ts';
import { cinder, dir, secrets, t, url, useCliApp, type Run } from './cliFixture.ts';

/** The CLI's main() in this process, with its output captured (and checked for keys as cinder() does). */
async function cinderInProcess(args: string[]): Promise<Run> {
  const out = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        out[name] += chunk.toString('utf8');
        callback();
      },
    });
  const code = await main(args, { env: { CINDER_URL: url }, stdout: sink('stdout'), stderr: sink('stderr'), cwd: dir });
  for (const secret of secrets) assert.ok(!out.stdout.includes(secret) && !out.stderr.includes(secret), `cinder ${args[0]} never prints a key`);
  return { code, ...out };
}

useCliApp('cinder-keyless-cli-', { cinderUrl: true, timeoutMs: 120_000 });

describe('cinder burn --unsigned, cinder reclaim --unsigned, cinder relay', () => {
  it('reclaim --unsigned → signed by the wallet → relay: the owner gains the prepared net', async () => {
    const w = await walletToReclaim(t.chain, { classic: 2, frozen: false, kept: false });
    const owner = w.signer.address;
    const prepared = await cinder(['reclaim', '--owner', owner, '--unsigned']);
    assert.equal(prepared.code, 0, prepared.stderr);
    const body = JSON.parse(prepared.stdout) as { transactions: string[]; lastValidBlockHeight: string; details: { summary: { netLamports: string } } };
    assert.match(prepared.stderr, new RegExp(`^${body.transactions.length} unsigned transactions? for ${owner}, valid until block height ${body.lastValidBlockHeight}`));
    assert.equal(body.details.summary.netLamports, String((await lamportsOf(t.chain, w.closable)) - 5000n));

    // The wallet's part: sign each transaction, put it back in place, save the file.
    await writeFile(join(dir, 'reclaim-tx.json'), JSON.stringify({ ...body, transactions: await signPrepared(body.transactions, w.signer) }));
    const before = await getLamports(t.chain, owner);
    const relay = await cinder(['relay', 'reclaim-tx.json']);
    assert.equal(relay.code, 0, relay.stderr);
    assert.match(relay.stdout, /^transaction 1\/1 \S+: success$/m);
    assert.match(relay.stdout, /^status: success$/m);
    assert.equal((await getLamports(t.chain, owner)) - before, BigInt(body.details.summary.netLamports));
    assert.deepEqual(await stillOpen(t.chain, w.closable), []);
  });

  it('burn --owner --unsigned → signed → relay burns and closes; an unsigned file is refused', async () => {
    const { signer } = await createFundedSigner(t.chain);
    const mint = await createTestMint(t.chain, signer, { decimals: 6 });
    const ata = await createAta(t.chain, signer, signer.address, mint);
    await mintTokens(t.chain, signer, mint, ata, 7_000_000n);
    const prepared = await cinder(['burn', '--owner', signer.address, '--mint', mint, '--priority-fee', '0', '--unsigned']);
    assert.equal(prepared.code, 0, prepared.stderr);
    const body = JSON.parse(prepared.stdout) as { transactions: string[]; feePayer: string };
    assert.equal(body.feePayer, signer.address);

    await writeFile(join(dir, 'unsigned.json'), prepared.stdout);
    const refused = await cinder(['relay', 'unsigned.json']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^cinder: TRANSACTION_NOT_SIGNED \(HTTP 400\)/);
    assert.equal((await fetchMint(t.chain.rpc, mint)).data.supply, 7_000_000n, 'nothing was burned');

    await writeFile(join(dir, 'burn-tx.json'), JSON.stringify({ ...body, transactions: await signPrepared(body.transactions, signer) }));
    const before = await getLamports(t.chain, signer.address);
    const relay = await cinder(['relay', 'burn-tx.json', '--json']);
    assert.equal(relay.code, 0, relay.stderr);
    assert.equal((JSON.parse(relay.stdout) as { status: string }).status, 'success');
    assert.equal((await fetchMint(t.chain.rpc, mint)).data.supply, 0n);
    assert.equal((await getLamports(t.chain, signer.address)) - before, 2_039_280n - 5_000n);
  });

  it('usage errors: exit 2, the reason, and never a key given in the wrong place', async () => {
    const { secretKey } = await createFundedSigner(t.chain, 1_000_000n);
    const key = getBase58Decoder().decode(secretKey);
    secrets.push(key);
    await writeFile(join(dir, 'k.json'), JSON.stringify([...secretKey]), { mode: 0o600 });
    const owner = '11111111111111111111111111111111';
    const cases: [string[], RegExp][] = [
      [['reclaim'], /give --owner ADDRESS \(a preview\), or the key with --key-file PATH or --key-env VAR/],
      [['reclaim', '--owner', key], /--owner must be a wallet address; this value is 64 bytes, the size of a private key/],
      [['reclaim', '--owner', owner, '--yes'], /--yes needs the key/],
      [['reclaim', '--owner', owner, '--burn', 'x,y'], /--burn: item 1 is not a base58 mint address/],
      [['reclaim', '--owner', owner, '--priority-fee', '1e-3'], /--priority-fee must be an amount of SOL/],
      [['reclaim', '--key-file', 'k.json', '--unsigned'], /--unsigned prepares transactions for a wallet to sign: give --owner ADDRESS, not a key/],
      [['reclaim', '--keys-file', 'keys.txt', '--owner', owner], /--keys-file reads the wallets from the file/],
      [['reclaim', '--owner', owner, '--fee-payer', 'sponsor'], /--fee-payer goes with --unsigned/],
      [['reclaim', '--owner', owner, '--unsigned', '--fee-payer', 'me'], /--fee-payer must be owner or sponsor/],
      [['burn', '--owner', owner, '--mint', owner, '--priority-fee', '0'], /--owner goes with --unsigned/],
      [['burn', '--owner', key, '--mint', owner, '--priority-fee', '0', '--unsigned'], /this value is 64 bytes/],
      [['relay'], /usage: cinder relay FILE/],
      [['reclaim', '--owner', owner, '--mint', owner], /--mint is not an option of "cinder reclaim"/],
    ];
    // In process: the binary's own main() (spawning it fifteen times only adds start-up time).
    for (const [args, message] of cases) {
      const run = await cinderInProcess(args);
      assert.equal(run.code, 2, `cinder ${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stdout, '');
    }
    const help = await cinderInProcess(['--help']);
    for (const command of ['reclaim (--owner ADDRESS | --key-file PATH | --key-env VAR | --keys-file FILE)', 'relay FILE', '--unsigned']) {
      assert.ok(help.stdout.includes(command), command);
    }
    const notJson = await cinder(['relay', 'k.json']);
    assert.deepEqual([notJson.code, notJson.stderr], [1, 'cinder: k.json holds no "transactions" list of base64 transactions\n']);
  });
});

describe('cinder with a fee sponsor (SPONSOR_KEYPAIR)', () => {
  it('reclaim --unsigned --fee-payer sponsor → signed by a 0-SOL wallet → relay with its relayToken: the owner gets the rent less the fees, the sponsor ends where it began', async () => {
    // The sponsor loaded as SPONSOR_KEYPAIR loads it, funded with 1 SOL, on this file's chain.
    const { t: sponsored, sponsor, close } = await createSponsoredTestApp(1_000_000_000n, {}, { chain: t.chain });
    try {
      const sponsoredUrl = await sponsored.app.listen({ host: '127.0.0.1', port: 0 });
      // A wallet with no SOL at all and two empty token accounts, paid for by someone else.
      const { signer: funder } = await createFundedSigner(t.chain);
      const owner = await createKeyPairSignerFromBytes((await createTestKey()).secretKey);
      const mint = await createTestMint(t.chain, funder, { decimals: 0 });
      const accounts = [await createAta(t.chain, funder, owner.address, mint), await createAuxTokenAccount(t.chain, funder, owner.address, mint)];
      assert.equal(await getLamports(t.chain, owner.address), 0n);
      const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);

      const preview = await cinder(['reclaim', '--owner', owner.address], { url: sponsoredUrl });
      assert.equal(preview.code, 0, preview.stderr);
      assert.match(preview.stdout, /^fees: 0\.00001 SOL \(paid by the service's fee sponsor and repaid from the reclaimed rent in the same transactions\)$/m);

      const prepared = await cinder(['reclaim', '--owner', owner.address, '--unsigned', '--fee-payer', 'sponsor'], { url: sponsoredUrl });
      assert.equal(prepared.code, 0, prepared.stderr);
      const body = JSON.parse(prepared.stdout) as { transactions: string[]; relayToken?: string; feePayer: string };
      assert.equal(body.feePayer, sponsor.signer.address);
      assert.ok(body.relayToken, 'a relay token for the sponsored messages');
      const signed = { ...body, transactions: await signPrepared(body.transactions, owner) };

      // Without the token the service adds no sponsor signature: refused, and nothing moves.
      await writeFile(join(dir, 'no-token.json'), JSON.stringify({ transactions: signed.transactions }));
      const refused = await cinder(['relay', 'no-token.json'], { url: sponsoredUrl });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^cinder: RELAY_TOKEN_INVALID \(HTTP 400\)/);
      assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);

      await writeFile(join(dir, 'sponsored.json'), JSON.stringify(signed));
      const relay = await cinder(['relay', 'sponsored.json'], { url: sponsoredUrl });
      assert.equal(relay.code, 0, relay.stderr);
      assert.match(relay.stdout, /^transaction 1\/1 \S+: success, fee paid by the sponsor and repaid$/m);
      assert.match(relay.stdout, /^status: success$/m);
      const fees = 10_000n * BigInt(body.transactions.length); // two signatures each: the owner's and the sponsor's
      assert.equal(await getLamports(t.chain, owner.address), 2n * 2_039_280n - fees, 'the rent of both accounts, less the fees');
      assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore, 'the sponsor is repaid to the lamport');
      assert.deepEqual(await stillOpen(t.chain, accounts), []);
    } finally {
      await close();
    }
  });
  it('reclaim --unsigned --fee-payer sponsor of a 0-SOL wallet of 70 accounts → signed → relay: the sponsor pays only the first, the rest land after it, balances exact', async () => {
    // The sponsor loaded as SPONSOR_KEYPAIR loads it, funded with 1 SOL, on this file's chain.
    const { t: sponsored, sponsor, close } = await createSponsoredTestApp(1_000_000_000n, {}, { chain: t.chain });
    try {
      const sponsoredUrl = await sponsored.app.listen({ host: '127.0.0.1', port: 0 });
      const owner = await createKeyPairSignerFromBytes((await createTestKey()).secretKey);
      await writeEmptyTokenAccounts(t.chain, owner.address, 70);
      const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);

      const prepared = await cinder(['reclaim', '--owner', owner.address, '--unsigned', '--fee-payer', 'sponsor'], { url: sponsoredUrl });
      assert.equal(prepared.code, 0, prepared.stderr);
      const body = JSON.parse(prepared.stdout) as { transactions: string[]; relayToken?: string; sponsoredTransactions: number };
      const n = body.transactions.length;
      assert.ok(n >= 3 && n <= 9, `${n} transactions`);
      assert.equal(body.sponsoredTransactions, 1);
      await writeFile(join(dir, 'sponsored-many.json'), JSON.stringify({ ...body, transactions: await signPrepared(body.transactions, owner) }));
      const relay = await cinder(['relay', 'sponsored-many.json'], { url: sponsoredUrl });
      assert.equal(relay.code, 0, relay.stderr);
      assert.equal([...relay.stdout.matchAll(/^transaction \d+\/\d+ \S+: success, fee paid by the sponsor and repaid$/gm)].length, 1, relay.stdout);
      assert.equal([...relay.stdout.matchAll(/^transaction \d+\/\d+ \S+: success/gm)].length, n);
      const fees = 10_000n + 5_000n * BigInt(n - 1);
      assert.equal(await getLamports(t.chain, owner.address), 70n * 2_039_280n - fees, 'the rent of every account, less the fees');
      assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore, 'the sponsor is repaid to the lamport');
    } finally {
      await close();
    }
  });
});
