/**
 * The `cinder` binary (bin/cinder.js, run as a program) against the real app and the embedded
 * local chain: wallets in every format, split into requests the server accepts, a progress bar on
 * a terminal, burns with the key from a file or a variable, status, and every error path's message
 * and exit code. There is no `cinder serve`: the CLI is a client and loads no server code.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { getAddressDecoder, getBase58Decoder } from '@solana/kit';
import { createTestApp } from '@cinder/testkit';
import { startFormBServer, type FormBServer } from '../sdk/formBServer.ts';
import { BIN, cinder, dir, holder, secrets, supplyOf, t, url, useCliApp, type Run } from './cliFixture.ts';

useCliApp('cinder-cli-');

describe('cinder (usage)', () => {
  it('--help, --version, and a usage error without a command', async () => {
    const help = await cinder(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: cinder <command>/);
    assert.doesNotMatch(help.stdout, /\bserve\b/, 'the client does not start the service');
    for (const command of ['wallets -n N', 'burn --mint MINT --priority-fee SOL|auto (--key-file PATH | --key-env VAR)', 'status SIGNATURE']) {
      assert.ok(help.stdout.includes(command), command);
    }
    const version = await cinder(['--version']);
    assert.deepEqual([version.code, version.stdout], [0, 'cinder 0.1.0\n']);
    const none = await cinder([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^Usage: cinder/);
  });

  it('refuses unknown commands and options, naming them, with exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /^cinder: unknown command "frobnicate"/],
      [['wallets', '-n', '2', '--mint', 'x'], /^cinder: --mint is not an option of "cinder wallets"/],
      [['wallets', '--colour'], /^cinder: Unknown option '--colour'/],
      [['wallets'], /^cinder: -n is required/],
      [['wallets', '-n', '1e3'], /^cinder: -n must be a positive whole number/],
      [['wallets', '-n', '2', '--format', 'xml'], /^cinder: --format must be json, csv or keypair-files/],
      [['wallets', '-n', '2', '--format', 'keypair-files'], /^cinder: --format keypair-files needs --out DIRECTORY/],
      [['status'], /^cinder: usage: cinder status SIGNATURE/],
      [['burn', '--priority-fee', '0', '--key-env', 'K'], /^cinder: --mint is required/],
      [['burn', '--mint', 'M', '--priority-fee', '1e-3', '--key-env', 'K'], /^cinder: --priority-fee must be an amount of SOL/],
      [['burn', '--mint', 'M', '--priority-fee', '0'], /^cinder: give the key with exactly one of --key-file PATH or --key-env VAR/],
      [['burn', '--mint', 'M', '--priority-fee', '0', '--key-file', 'a', '--key-env', 'B'], /exactly one of/],
      [['burn', '--mint', 'M', '--priority-fee', '0', '--key-env', 'NOT_SET_ANYWHERE'], /^cinder: the environment variable NOT_SET_ANYWHERE is not set/],
      [['serve'], /^cinder: unknown command "serve"/],
      [['--url', 'ftp://example.com', 'status', 'x'], /^cinder: --url: baseUrl must be an http: or https: URL/],
    ];
    for (const [args, message] of cases) {
      const run = await cinder(args);
      assert.equal(run.code, 2, `cinder ${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.match(run.stderr, /Run "cinder --help" for usage\.\n$/);
      assert.equal(run.stdout, '');
    }
  });

  it('never takes a key as an argument, and never echoes one', async () => {
    const key = (await holder()).base58;
    for (const args of [
      ['burn', '--mint', 'M', '--priority-fee', '0', '--key', key],
      ['burn', '--mint', 'M', '--priority-fee', '0', `--private-key=${key}`],
      ['burn', '--mint', 'M', '--priority-fee', '0', '-k', key],
      ['burn', '--mint', 'M', '--priority-fee', '0', key],
      [key],
    ]) {
      const run = await cinder(args); // cinder() asserts that the key is not in the output
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /shell history|no positional arguments|unknown command "…"/);
    }
  });

  it('a key given where a file or variable name belongs is not quoted back', async () => {
    const { base58, keygen } = await holder();
    // --key-env checks the name's shape first: only a key that starts with a letter gets past it.
    let letterFirst = base58;
    while (!/^[A-Za-z]/.test(letterFirst)) letterFirst = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(64)));
    secrets.push(letterFirst, keygen);
    const cases: [string[], RegExp][] = [
      [['burn', '--mint', 'M', '--priority-fee', '0', '--key-file', base58], /^cinder: cannot read the key file \(not shown: it looks like a private key\): E[A-Z]+\n/],
      [['burn', '--mint', 'M', '--priority-fee', '0', '--key-env', letterFirst], /^cinder: the environment variable \(not shown: it looks like a private key\) is not set/],
      [['burn', '--mint', 'M', '--priority-fee', '0', '--key-file', keygen], /^cinder: cannot read the key file \(not shown: it looks like a private key\)/],
      [['relay', base58], /^cinder: cannot read \(not shown: it looks like a private key\)/],
      [['reclaim', '--keys-file', base58, '--priority-fee', '0'], /^cinder: cannot read the keys file \(not shown: it looks like a private key\)/],
    ];
    for (const [args, message] of cases) {
      const run = await cinder(args, { url }); // cinder() asserts that neither form of the key is in the output
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, message, run.stderr);
    }
  });
});

describe('cinder wallets', () => {
  it('prints n wallets as JSON', async () => {
    const run = await cinder(['wallets', '-n', '3', '--url', url]);
    assert.equal(run.code, 0, run.stderr);
    const output = JSON.parse(run.stdout) as { wallets: string[]; keypairs: { address: string; privateKey: string }[] };
    assert.equal(output.wallets.length, 3);
    assert.deepEqual(
      output.keypairs.map((k) => k.address),
      output.wallets,
    );
    assert.equal(run.stderr, '', 'no progress bar when standard error is not a terminal');
  });

  it('writes CSV to a new file with mode 0600, and never overwrites one', async () => {
    const file = join(dir, 'wallets.csv');
    const run = await cinder(['wallets', '-n', '4', '--format', 'csv', '--out', 'wallets.csv'], { env: { CINDER_URL: url } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, `Wrote 4 wallets to ${file}\n`);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    assert.equal(lines[0], 'address,privateKey');
    assert.equal(lines.length, 5);
    for (const line of lines.slice(1)) assert.match(line, /^[1-9A-HJ-NP-Za-km-z]{32,44},[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const again = await cinder(['wallets', '-n', '1', '--format', 'csv', '--out', 'wallets.csv'], { env: { CINDER_URL: url } });
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `cinder: ${file} already exists; cinder never overwrites a key file\n`);
    assert.equal((await readFile(file, 'utf8')).trimEnd().split('\n').length, 5, 'the file is untouched');
  });

  it('writes solana-keygen <address>.json files with mode 0600', async () => {
    const keys = join(dir, 'keys');
    const run = await cinder(['wallets', '-n', '3', '--format', 'keypair-files', '--out', 'keys'], { env: { CINDER_URL: url } });
    assert.equal(run.code, 0, run.stderr);
    const files = await readdir(keys);
    assert.equal(files.length, 3);
    for (const name of files) {
      const bytes = JSON.parse(await readFile(join(keys, name), 'utf8')) as number[];
      assert.equal(bytes.length, 64);
      assert.equal(`${getAddressDecoder().decode(Uint8Array.from(bytes.slice(32)))}.json`, name, 'the file is named by its address');
      assert.equal((await stat(join(keys, name))).mode & 0o777, 0o600);
    }
  });

  it('splits a large n into requests within the server limit', async () => {
    const small = await createTestApp({ maxWalletsPerRequest: 10 }, { chain: t.chain });
    try {
      const smallUrl = await small.app.listen({ host: '127.0.0.1', port: 0 });
      const run = await cinder(['wallets', '-n', '45', '--url', smallUrl]);
      assert.equal(run.code, 0, run.stderr);
      const output = JSON.parse(run.stdout) as { wallets: string[]; keypairs: unknown[] };
      assert.equal(output.wallets.length, 45);
      assert.equal(new Set(output.wallets).size, 45);
      assert.equal(output.keypairs.length, 45);
      const batches = await cinder(['wallets', '-n', '25', '--batch-size', '10', '--format', 'csv', '--url', smallUrl]);
      assert.equal(batches.stdout.trimEnd().split('\n').length, 26);
    } finally {
      await small.close();
    }
  });

  it('shows a progress bar on a terminal', { skip: spawnSync('script', ['--version']).status !== 0 && 'needs script(1)' }, async () => {
    // script(1) runs the command on a pseudo-terminal; the wallets go to a file.
    const command = `${BIN} wallets -n 30 --batch-size 10 --format csv --out tty.csv --url ${url}`;
    const run = await new Promise<Run>((resolve) => {
      execFile('script', ['-qfec', command, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH!, HOME: dir, TERM: 'xterm' } }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /wallets \[[^\]]*\] 100% \| 30\/30/);
    assert.equal((await readFile(join(dir, 'tty.csv'), 'utf8')).trimEnd().split('\n').length, 31);
  });
});

describe('cinder burn and cinder status', () => {
  it('burns with the key from a solana-keygen file, then reads the status', async () => {
    const h = await holder();
    await writeFile(join(dir, 'id.json'), h.keygen, { mode: 0o600 });
    const run = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0.000005', '--key-file', 'id.json', '--url', url]);
    assert.equal(run.code, 0, run.stderr);
    const [statusLine, transactionLine, message] = run.stdout.trimEnd().split('\n');
    assert.equal(statusLine, 'status: success');
    assert.match(message!, /^Burned 5 of \S+ and closed 1 account; reclaimed 0\.00203928 SOL\b/);
    assert.equal(await supplyOf(h.mint), 0n);
    const signature = transactionLine!.replace('transaction: ', '');

    const status = await cinder(['status', signature, '--url', url]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^success \(slot \d+\): The transaction is (confirmed|finalized)\.\n$/);
    const json = await cinder(['status', signature, '--json', '--url', url]);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout)), ['transactionId', 'status', 'message', 'slot']);
  });

  it('burns with the key from an environment variable and prints JSON', async () => {
    const h = await holder();
    const run = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0', '--key-env', 'MY_KEY', '--json'], {
      env: { MY_KEY: h.base58, CINDER_URL: url },
    });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { form: string; status: string; details: { burnedAmount: string } };
    assert.equal(result.form, 'A+B');
    assert.equal(result.status, 'success');
    assert.equal(result.details.burnedAmount, '5000000');
  });

  it('reports API errors with their code and detail, exit code 1, and no key', async () => {
    const h = await holder();
    const run = await cinder(['burn', '--mint', 'not-a-mint', '--priority-fee', '0', '--key-env', 'MY_KEY'], { env: { MY_KEY: h.base58, CINDER_URL: url } });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^cinder: INVALID_MINT \(HTTP 400\): mint is not a valid base58 Solana address \(32 bytes\)\n {2}mint: is not a base58 address of 32 bytes\nRequest id: [0-9a-f-]{36}\n$/);

    await writeFile(join(dir, 'bad-key.txt'), `${h.base58.slice(0, -3)}\n`, { mode: 0o600 });
    const badKey = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0', '--key-file', 'bad-key.txt', '--url', url]);
    assert.equal(badKey.code, 1);
    assert.match(badKey.stderr, /^cinder: INVALID_PRIVATE_KEY \(HTTP 400\)/);
    assert.ok(!badKey.stderr.includes(h.base58.slice(0, -3)));

    const missing = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0', '--key-file', 'nowhere.json', '--url', url]);
    assert.deepEqual([missing.code, missing.stderr], [1, 'cinder: cannot read the key file nowhere.json: ENOENT\n']);

    await writeFile(join(dir, 'open.json'), h.keygen, { mode: 0o644 });
    const open = await cinder(['burn', '--mint', h.mint, '--priority-fee', '0', '--key-file', 'open.json', '--url', url]);
    assert.equal(open.code, 0, open.stderr);
    assert.match(open.stderr, /^warning: open\.json can be read by other users; chmod 600 it\n/);

    const unknown = await cinder(['status', '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW', '--url', url]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^cinder: TRANSACTION_NOT_FOUND \(HTTP 404\): The chain has no record/);
  });

  it('says when the server cannot be reached or wants an API key', async () => {
    const down = await cinder(['wallets', '-n', '1', '--url', 'http://127.0.0.1:9']);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /^cinder: NETWORK_ERROR: Cannot reach Cinder at http:\/\/127\.0\.0\.1:9: .*\nIs Cinder running at http:\/\/127\.0\.0\.1:9\? Set it with --url or CINDER_URL\.\n$/);
    const partial = await cinder(['wallets', '-n', '1', '--format', 'csv', '--out', 'never.csv', '--url', 'http://127.0.0.1:9']);
    assert.equal(partial.code, 1);
    await assert.rejects(stat(join(dir, 'never.csv')), { code: 'ENOENT' }, 'no half-written file is left behind');

    const keyed = await createTestApp({ apiKeys: ['cli-key'] }, { chain: t.chain });
    try {
      const keyedUrl = await keyed.app.listen({ host: '127.0.0.1', port: 0 });
      const refused = await cinder(['wallets', '-n', '1', '--url', keyedUrl]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^cinder: UNAUTHORIZED \(HTTP 401\): .*\nGive an API key with CINDER_API_KEY \(or --api-key\)\./);
      const fromEnv = await cinder(['wallets', '-n', '1'], { env: { CINDER_URL: keyedUrl, CINDER_API_KEY: 'cli-key' } });
      assert.equal(fromEnv.code, 0, fromEnv.stderr);
      const fromFlag = await cinder(['wallets', '-n', '1', '--url', keyedUrl, '--api-key', 'cli-key']);
      assert.equal(fromFlag.code, 0, fromFlag.stderr);
    } finally {
      await keyed.close();
    }
  });

  it('accepts a Form B answer', async () => {
    const formB: FormBServer = await startFormBServer();
    try {
      const run = await cinder(['burn', '--mint', 'M', '--priority-fee', '0', '--key-env', 'K'], { env: { K: 'abc', CINDER_URL: formB.url } });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^status: unknown\ntransaction: 5VERv8/);
      assert.match(String(formB.requests[0]!.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    } finally {
      await formB.close();
    }
  });
});
