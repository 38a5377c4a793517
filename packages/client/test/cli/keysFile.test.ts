/**
 * What `cinder reclaim` reads and prints that comes from others: the lines of a keys file and the
 * names of tokens, with the real binary against the real app and the embedded chain.
 * - A line holding a wallet address (32 bytes of base58, as a seed is) is told apart by the chain
 *   (the wallet its seed opens is empty while the address holds accounts) and named by its number,
 *   in a job and one wallet after another; nothing is sent for it, and no line's text is printed.
 * - A job's keys file with several bad lines names every one of them at once; nothing is sent.
 * - A token name holding bidi controls is printed cleaned, beside its mint.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { createAta, createFundedSigner, createTestKey, createTestMint, getLamports, writeMetaplexMetadata } from '@cinder/testkit';
import { emptyAccounts, stillOpen } from '../sdk/reclaimFixture.ts';
import { cinder, dir, holder, secrets, t, useCliApp } from './cliFixture.ts';

useCliApp('cinder-keys-file-cli-', { cinderUrl: true, timeoutMs: 120_000 });

describe('cinder reclaim --keys-file: lines that hold no key', () => {
  it('a job names every bad line at once, a wallet address among them, and sends nothing', async () => {
    const { signer: payer, secretKey: payerKey } = await createFundedSigner(t.chain, 1_000_000_000n);
    const mint = await createTestMint(t.chain, payer, { decimals: 0 });
    const owner = await createTestKey();
    secrets.push(owner.base58SecretKey, JSON.stringify([...payerKey]));
    const accounts = await emptyAccounts(t.chain, payer, owner.address, mint, 2);
    // Two wallets that hold SOL and accounts: their addresses pasted where keys belong.
    const [a, b] = [await holder(), await holder()];
    await writeFile(join(dir, 'job.keys'), [owner.base58SecretKey, a.address, 'not a key', b.address].join('\n') + '\n', { mode: 0o600 });
    await writeFile(join(dir, 'job.payer.json'), JSON.stringify([...payerKey]), { mode: 0o600 });
    const destination = (await generateKeyPairSigner()).address;
    const payerBefore = await getLamports(t.chain, payer.address);

    const run = await cinder(['reclaim', '--keys-file', 'job.keys', '--fee-payer', 'job.payer.json', '--destination', destination, '--yes']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /job\.keys has 3 bad lines; nothing was sent:/);
    assert.match(run.stderr, /line 2: holds a wallet address, not a private key/);
    assert.match(run.stderr, /line 3: not a key/);
    assert.match(run.stderr, /line 4: holds a wallet address, not a private key/);
    assert.doesNotMatch(run.stderr, /line 1:/);
    for (const text of [a.address, b.address, 'not a key\n']) assert.ok(!run.stderr.includes(text) && !run.stdout.includes(text), 'no line is printed');
    assert.deepEqual(await stillOpen(t.chain, accounts), accounts, 'nothing was closed');
    assert.equal(await getLamports(t.chain, payer.address), payerBefore, 'no fee was paid');
  });

  it('one wallet after another: each address line is named and skipped, its seed\'s wallet never asked for', async () => {
    const [a, b] = [await holder(), await holder()];
    await writeFile(join(dir, 'addresses.keys'), `# pasted from the explorer by mistake\n${a.address}\n\n${b.address}\n`, { mode: 0o600 });
    const [aBefore, bBefore] = [await getLamports(t.chain, a.address), await getLamports(t.chain, b.address)];
    const run = await cinder(['reclaim', '--keys-file', 'addresses.keys', '--yes']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /addresses\.keys line 2: holds a wallet address, not a private key .*; skipped/);
    assert.match(run.stderr, /addresses\.keys line 4: holds a wallet address, not a private key .*; skipped/);
    assert.doesNotMatch(run.stdout, /nothing to reclaim/, 'no unrelated wallet is acted on');
    for (const text of [a.address, b.address]) assert.ok(!run.stderr.includes(text) && !run.stdout.includes(text), 'no line is printed');
    assert.equal(await getLamports(t.chain, a.address), aBefore);
    assert.equal(await getLamports(t.chain, b.address), bBefore);
  });

  it('a seed whose wallet holds something is a key, not an address: it is used', async () => {
    const { signer: payer } = await createFundedSigner(t.chain, 1_000_000_000n);
    const mint = await createTestMint(t.chain, payer, { decimals: 0 });
    const owner = await createTestKey();
    secrets.push(owner.base58Seed);
    await emptyAccounts(t.chain, payer, owner.address, mint, 1);
    await writeFile(join(dir, 'seed.keys'), `${owner.base58Seed}\n`, { mode: 0o600 });
    const run = await cinder(['reclaim', '--keys-file', 'seed.keys']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^${owner.address} +preview +1 `, 'm'), 'the wallet its seed opens is previewed');
  });
});

describe('cinder reclaim --owner: token names', () => {
  it('prints a name holding bidi controls cleaned, in a TOKEN column beside the mint', async () => {
    const { signer: payer } = await createFundedSigner(t.chain, 1_000_000_000n);
    const owner = (await generateKeyPairSigner()).address;
    const named = await createTestMint(t.chain, payer, { decimals: 0 });
    const plain = await createTestMint(t.chain, payer, { decimals: 0 });
    // U+202E reverses what follows (up to U+202C) in a terminal that renders bidi text.
    await writeMetaplexMetadata(t.chain, named, 'Safe\u202Eniam\u202C Coin\u200B', 'SA\u2066FE\u2069');
    const namedAccount = await createAta(t.chain, payer, owner, named);
    const plainAccount = await createAta(t.chain, payer, owner, plain);
    const run = await cinder(['reclaim', '--owner', owner]);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /\p{Cf}/u);
    const lines = run.stdout.split('\n');
    assert.match(lines[1]!, /^ACCOUNT +MINT +TOKEN +ACTION +LAMPORTS +CODE$/);
    assert.match(lines.find((l) => l.startsWith(namedAccount))!, new RegExp(`^${namedAccount} +${named} +Safeniam Coin \\(SAFE\\) +close +`));
    assert.match(lines.find((l) => l.startsWith(plainAccount))!, new RegExp(`^${plainAccount} +${plain} +close +`));
  });
});
