/**
 * `cinder derive` and `cinder wallets --hd`, run as the real binary with no server anywhere
 * (CINDER_URL points at a closed port: nothing is sent): every address checked by the independent
 * path (scure's PBKDF2, the reference SLIP-0010, OpenSSL ed25519), and the phrase never printed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { ABANDON, referenceAddressAt } from '@cinder/testkit';
import { addressOfSeed, checkBody, type WalletsBody } from '@cinder/testkit';
import { BIN } from './cliFixture.ts';

const H = 0x80000000;
let dir: string;

function cinder(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // A closed port: any request the command made would fail.
  const env = { PATH: process.env.PATH!, HOME: dir, CINDER_URL: 'http://127.0.0.1:9' };
  return new Promise((resolve) => {
    execFile(BIN, args, { cwd: dir, env, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

interface Derived extends WalletsBody {
  mnemonic?: string;
  keypairs: (WalletsBody['keypairs'][number] & { path?: string })[];
}

describe('cinder derive / cinder wallets --hd (local, no server)', () => {
  let phraseFile: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cinder-derive-'));
    phraseFile = join(dir, 'phrase.txt');
    // Any white space between the words, a trailing newline, as people save them.
    await writeFile(phraseFile, `${ABANDON.mnemonic.replaceAll(' ', '  \n')}\n`, { mode: 0o600 });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const body = (stdout: string) => JSON.parse(stdout) as Derived;
  const neverThePhrase = (run: { stdout: string; stderr: string }) => {
    assert.ok(!run.stdout.includes('abandon') && !run.stderr.includes('abandon'), 'the phrase is never printed');
  };

  it(`phantom (default): accounts 0…4 at m/44'/501'/i'/0', the first ${ABANDON.phantom0}`, async () => {
    const run = await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '5']);
    assert.equal(run.code, 0, run.stderr);
    neverThePhrase(run);
    const derived = body(run.stdout);
    checkBody(derived, 5, { derive: true });
    assert.equal(derived.wallets[0], ABANDON.phantom0);
    derived.keypairs.forEach((kp, i) => {
      assert.equal(kp.path, `m/44'/501'/${i}'/0'`);
      assert.equal(kp.address, referenceAddressAt(ABANDON.mnemonic, [44 + H, 501 + H, i + H, H]));
    });
  });

  it('--from I: accounts I … I + count − 1', async () => {
    const derived = body((await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '2', '--from', '1000'])).stdout);
    assert.deepEqual(derived.keypairs.map((k) => k.path), ["m/44'/501'/1000'/0'", "m/44'/501'/1001'/0'"]);
    assert.equal(derived.wallets[1], referenceAddressAt(ABANDON.mnemonic, [44 + H, 501 + H, 1001 + H, H]));
  });

  it("ledger-live: m/44'/501'/i'", async () => {
    const derived = body((await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '3', '--scheme', 'ledger-live'])).stdout);
    checkBody(derived, 3, { derive: true });
    assert.equal(derived.wallets[0], ABANDON.ledgerLive0);
    derived.keypairs.forEach((kp, i) => {
      assert.equal(kp.path, `m/44'/501'/${i}'`);
      assert.equal(kp.address, referenceAddressAt(ABANDON.mnemonic, [44 + H, 501 + H, i + H]));
    });
  });

  it('keygen: the BIP39 seed’s first 32 bytes, one wallet, no path (solana-keygen recover)', async () => {
    const derived = body((await cinder(['derive', '--mnemonic-file', phraseFile, '--scheme', 'keygen'])).stdout);
    checkBody(derived, 1, { derive: true });
    assert.equal(derived.wallets[0], addressOfSeed(mnemonicToSeedSync(ABANDON.mnemonic).subarray(0, 32)));
    assert.equal(derived.wallets[0], ABANDON.keygen);
    assert.equal(derived.keypairs[0]!.path, undefined);
    const refused = await cinder(['derive', '--mnemonic-file', phraseFile, '--scheme', 'keygen', '--count', '2']);
    assert.equal(refused.code, 2);
  });

  it('csv to a new file of mode 0600, never overwritten', async () => {
    const out = join(dir, 'derived.csv');
    const run = await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '2', '--format', 'csv', '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    assert.equal(lines[0], 'address,privateKey,path');
    assert.equal(lines[1]!.split(',')[0], ABANDON.phantom0);
    assert.equal(lines[1]!.split(',')[2], "m/44'/501'/0'/0'");
    assert.equal((await stat(out)).mode & 0o777, 0o600);
    const again = await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '2', '--format', 'csv', '--out', out]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  });

  it('a file that is not a valid phrase: exit 1, and its words are never echoed', async () => {
    const bad = join(dir, 'bad.txt');
    // Twelve valid words, a checksum that does not match.
    await writeFile(bad, 'abandon '.repeat(12), { mode: 0o600 });
    const run = await cinder(['derive', '--mnemonic-file', bad, '--count', '1']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /does not hold a valid English BIP39 phrase \(12 words found/);
    assert.equal(run.stdout, '');
    neverThePhrase(run);
    const missing = await cinder(['derive', '--mnemonic-file', join(dir, 'none.txt'), '--count', '1']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the phrase file .*: ENOENT/);
    assert.equal((await cinder(['derive', '--count', '1'])).code, 2);
    assert.equal((await cinder(['derive', '--mnemonic-file', phraseFile, '--count', '1', '--scheme', 'bip44'])).code, 2);
  });

  it('wallets --hd 12 -n 5: a new phrase and its wallets, like the API answer, with no server', async () => {
    const run = await cinder(['wallets', '--hd', '12', '-n', '5']);
    assert.equal(run.code, 0, run.stderr);
    const derived = body(run.stdout);
    assert.deepEqual(Object.keys(derived), ['mnemonic', 'wallets', 'keypairs']);
    assert.ok(validateMnemonic(derived.mnemonic!, wordlist));
    const { mnemonic, ...rest } = derived;
    checkBody(rest, 5, { derive: true });
    derived.keypairs.forEach((kp, i) => {
      assert.equal(kp.path, `m/44'/501'/${i}'/0'`);
      assert.equal(kp.address, referenceAddressAt(mnemonic!, [44 + H, 501 + H, i + H, H]));
    });
    assert.equal((await cinder(['wallets', '--hd', '12', '-n', '2', '--prefix', 'A'])).code, 2);
    assert.equal((await cinder(['wallets', '--hd', '13', '-n', '2'])).code, 2);
  });
});
