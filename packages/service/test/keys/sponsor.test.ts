import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getBase58Decoder } from '@solana/kit';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { loadSponsor, SponsorKeyError } from '../../src/keys/sponsor.ts';
import { createTestKey, type TestKey } from '@cinder/testkit';

/** A SERVER_SECRET that passes the start's guessability check (src/keys/serverSecret.ts). */
const GOOD_SECRET = 'q7Vw2LmZ9xKp4RtY8nBc3HjD6sFg1AeU';

let dir: string;
let key: TestKey;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cinder-sponsor-key-'));
  key = await createTestKey();
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('loadSponsor (SPONSOR_KEYPAIR)', () => {
  it('loads a solana-keygen file (any whitespace, a byte order mark) into a non-extractable signer of that address', async () => {
    for (const [name, content] of [
      ['compact.json', key.keygenJson],
      ['spaced.json', `\n [ ${[...key.secretKey].join(' ,\n ')} ] \n`],
      ['bom.json', `\ufeff${key.keygenJson}`],
    ] as const) {
      const sponsor = await loadSponsor(await file(name, content));
      assert.equal(sponsor.signer.address, key.address, name);
      assert.equal(sponsor.signer.keyPair.privateKey.extractable, false);
    }
  });

  it('stops with a message that names the path and the problem, never the content', async () => {
    const numbers = [...key.secretKey];
    const mismatched = [...numbers.slice(0, 32), ...numbers.slice(32).map((n) => n ^ 1)];
    const cases: [string, string | Uint8Array, RegExp][] = [
      ['base58.txt', key.base58SecretKey, /: not a solana-keygen keypair file/],
      ['short.json', JSON.stringify(numbers.slice(0, 63)), /: not a solana-keygen keypair file/],
      ['long.json', JSON.stringify([...numbers, 1]), /: not a solana-keygen keypair file/],
      ['big.json', JSON.stringify([256, ...numbers.slice(1)]), /: not a solana-keygen keypair file/],
      ['trailing.json', `${key.keygenJson} x`, /: not a solana-keygen keypair file/],
      ['empty.json', '', /: not a solana-keygen keypair file/],
      ['object.json', JSON.stringify({ secretKey: numbers }), /: not a solana-keygen keypair file/],
      ['mismatch.json', JSON.stringify(mismatched), /: the public half of the 64-byte key does not match its private half\./],
    ];
    for (const [name, content, reason] of cases) {
      const path = await file(name, content);
      const error = await loadSponsor(path).then(
        () => assert.fail(`${name} was accepted`),
        (e: unknown) => e,
      );
      assert.ok(error instanceof SponsorKeyError, name);
      assert.ok(error.message.startsWith(`SPONSOR_KEYPAIR ${path}`), error.message);
      assert.match(error.message, reason);
      assert.match(error.message, /a solana-keygen keypair file \(a JSON array of 64 numbers/);
      for (const secret of [key.base58SecretKey, key.keygenJson, numbers.slice(0, 8).join(','), getBase58Decoder().decode(key.seed)]) {
        assert.ok(!error.message.includes(secret), `${name}: the message holds no part of the key`);
      }
    }
    const missing = join(dir, 'missing.json');
    await assert.rejects(loadSponsor(missing), { name: 'SponsorKeyError', message: new RegExp(`^SPONSOR_KEYPAIR ${missing}: no such file\\.`) });
    const directory = join(dir, 'a-directory');
    await mkdir(directory);
    await assert.rejects(loadSponsor(directory), { name: 'SponsorKeyError', message: /: it is a directory\./ });
  });
});

describe('SPONSOR_KEYPAIR in the configuration', () => {
  it('is an absolute path, and requires SERVER_SECRET', () => {
    assert.equal(loadConfig({}).sponsorKeypairPath, undefined);
    assert.equal(loadConfig({ SPONSOR_KEYPAIR: '' }).sponsorKeypairPath, undefined);
    assert.equal(
      loadConfig({ SPONSOR_KEYPAIR: 'keys/sponsor.json', SERVER_SECRET: GOOD_SECRET }).sponsorKeypairPath,
      resolve('keys/sponsor.json'),
    );
    assert.throws(() => loadConfig({ SPONSOR_KEYPAIR: '/etc/cinder/sponsor.json' }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /SERVER_SECRET .* is required when REDIS_URL or SPONSOR_KEYPAIR is set/);
      return true;
    });
  });
});

describe('the server with a bad SPONSOR_KEYPAIR', () => {
  it('does not start: exit code 1 and one line naming the file and the problem, never its content', async () => {
    const numbers = [...key.secretKey];
    const path = await file('start-mismatch.json', JSON.stringify([...numbers.slice(0, 32), ...numbers.slice(32).map((n) => n ^ 1)]));
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('../../src/server.ts', import.meta.url))],
        {
          cwd: new URL('../..', import.meta.url),
          // LOCALNET_PORT=0: if it did start, it would not take a fixed port.
          env: { PATH: process.env.PATH, HOME: dir, SPONSOR_KEYPAIR: path, SERVER_SECRET: GOOD_SECRET, LOCALNET_PORT: '0', PORT: '0', LOG_LEVEL: 'silent' },
          timeout: 60_000,
        },
        (error, out, err) => done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout: out, stderr: err }),
      );
    });
    assert.equal(code, 1, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `cinder: failed to start: SPONSOR_KEYPAIR ${path}: the public half of the 64-byte key does not match its private half. It must be a solana-keygen keypair file (a JSON array of 64 numbers, e.g. from \`solana-keygen new -o sponsor.json\`).\n`);
    for (const n of [numbers.slice(0, 6).join(','), numbers.slice(0, 6).join(', ')]) assert.ok(!stderr.includes(n));
  });
});
