/**
 * The `cinder` binary's newer options, against the real app and the embedded local chain (apart
 * from test/cli/cli.test.ts, so that each file stays within the per-file test timeout): wallet
 * mnemonics and vanity patterns, the refusal of `burn --amount`, and waiting on a rate limit out
 * loud, with one Idempotency-Key for every attempt of a burn.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFormBServer, type FormBServer } from '../sdk/formBServer.ts';
import { cinder, dir, holder, supplyOf, url, useCliApp } from './cliFixture.ts';

useCliApp('cinder-cli-options-');

describe('cinder --priority-fee auto', () => {
  it('burns with a fee the service resolves from the cluster\'s recent fees; another word is refused before any request', async () => {
    const h = await holder();
    const run = await cinder(['burn', '--mint', h.mint, '--priority-fee', 'auto', '--key-env', 'K', '--json', '--url', url], { env: { K: h.base58 } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { status: string }).status, 'success');
    assert.equal(await supplyOf(h.mint), 0n, 'the whole balance burned');
    const preview = await cinder(['reclaim', '--owner', h.address, '--priority-fee', 'auto', '--url', url]);
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /^fees: /m);
    const bad = await cinder(['burn', '--mint', h.mint, '--priority-fee', 'fast', '--key-env', 'K', '--url', 'http://127.0.0.1:9'], { env: { K: h.base58 } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--priority-fee must be an amount of SOL with at most 9 decimals, e\.g\. 0\.000005, or auto/);
  });
});

describe('cinder wallets options, burn --amount, and waiting on rate limits', () => {
  it('--mnemonic 12 gives each wallet a 12-word phrase (JSON, and a third CSV column)', async () => {
    const run = await cinder(['wallets', '-n', '2', '--mnemonic', '12', '--url', url]);
    assert.equal(run.code, 0, run.stderr);
    const output = JSON.parse(run.stdout) as { keypairs: { address: string; mnemonic: string }[] };
    assert.equal(output.keypairs.length, 2);
    for (const keypair of output.keypairs) assert.equal(keypair.mnemonic.split(' ').length, 12);
    const csv = await cinder(['wallets', '-n', '2', '--mnemonic', '24', '--format', 'csv', '--url', url]);
    assert.equal(csv.code, 0, csv.stderr);
    const [header, ...rows] = csv.stdout.trimEnd().split('\n');
    assert.equal(header, 'address,privateKey,mnemonic');
    assert.equal(rows.length, 2);
    for (const row of rows) assert.equal(row.split(',')[2]!.split(' ').length, 24);
  });

  it('--prefix, --suffix and --ignore-case make vanity addresses', async () => {
    const run = await cinder(['wallets', '-n', '2', '--prefix', 'A', '--suffix', '9', '--url', url]);
    assert.equal(run.code, 0, run.stderr);
    for (const address of (JSON.parse(run.stdout) as { wallets: string[] }).wallets) assert.match(address, /^A.*9$/);
    const folded = await cinder(['wallets', '-n', '2', '--suffix', 'ab', '--ignore-case', '--url', url]);
    assert.equal(folded.code, 0, folded.stderr);
    for (const address of (JSON.parse(folded.stdout) as { wallets: string[] }).wallets) assert.match(address, /ab$/i);
    // The server's own check of a pattern (l is not base58), reported with its code.
    const bad = await cinder(['wallets', '-n', '1', '--suffix', 'sol', '--url', url]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /INVALID_PARAMETER/);
  });

  it('refuses a --mnemonic it cannot keep or does not know, with exit code 2', async () => {
    const odd = await cinder(['wallets', '-n', '1', '--mnemonic', '13', '--url', url]);
    assert.equal(odd.code, 2);
    assert.match(odd.stderr, /--mnemonic must be 12 or 24/);
    const files = await cinder(['wallets', '-n', '1', '--mnemonic', '12', '--format', 'keypair-files', '--out', 'k', '--url', url]);
    assert.equal(files.code, 2);
    assert.match(files.stderr, /--mnemonic cannot be kept in solana-keygen key files/);
  });

  it('refuses burn --amount, saying why and what burns part of a balance, before any request', async () => {
    const formB: FormBServer = await startFormBServer();
    try {
      await writeFile(join(dir, 'amount-key.txt'), 'not-a-key-never-read', { mode: 0o600 });
      const run = await cinder(['burn', '--mint', 'So11111111111111111111111111111111111111112', '--priority-fee', '0', '--key-file', 'amount-key.txt', '--amount', '5', '--url', formB.url]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /no --amount: it burns the whole balance so that the account can be closed/);
      assert.match(run.stderr, /spl-token burn ACCOUNT AMOUNT/);
      assert.equal(formB.requests.length, 0);
    } finally {
      await formB.close();
    }
  });

  it('says that it waits on a rate limit and for how long, then retries the burn with the same Idempotency-Key', async () => {
    const formB: FormBServer = await startFormBServer();
    try {
      formB.script({
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
        body: { type: 'urn:cinder:problem:rate-limited', title: 'Too many requests', status: 429, detail: 'Rate limit reached', code: 'RATE_LIMITED' },
      });
      const h = await holder();
      const run = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0', '--key-env', 'K', '--url', formB.url], { env: { K: h.base58 } });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /^cinder: rate limited by the server \(RATE_LIMITED\): waiting 1 s, then retrying \(1 of 3\)$/m);
      assert.equal(formB.requests.length, 2);
      const [first, second] = formB.requests.map((r) => r.headers['idempotency-key']);
      assert.ok(typeof first === 'string' && first.length > 0);
      assert.equal(second, first, 'a retry can never burn twice');
    } finally {
      await formB.close();
    }
  });
});
