import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getBase58Decoder } from '@solana/kit';
import { isCinderError } from '../../src/errors.ts';
import { parsePrivateKey } from '../../src/keys/parsePrivateKey.ts';
import { createTestKey } from '@cinder/testkit';

async function rejects(input: string | number[], reason: RegExp, secret?: string) {
  await assert.rejects(parsePrivateKey(input), (error: unknown) => {
    assert.ok(isCinderError(error, 'INVALID_PRIVATE_KEY'), `expected INVALID_PRIVATE_KEY, got ${String(error)}`);
    assert.match(error.message, reason);
    assert.equal(error.cause, undefined, 'no underlying error (which could hold the input) is attached');
    if (secret) assert.ok(!error.message.includes(secret.slice(0, 8)), 'the message never echoes the key');
    return true;
  });
}

describe('parsePrivateKey', () => {
  it('accepts base58 of the 64-byte secret key (Phantom export)', async () => {
    const key = await createTestKey();
    const signer = await parsePrivateKey(key.base58SecretKey);
    assert.equal(signer.address, key.address);
  });

  it('accepts base58 of the 32-byte seed', async () => {
    const key = await createTestKey();
    assert.equal((await parsePrivateKey(key.base58Seed)).address, key.address);
  });

  it('accepts the solana-keygen JSON array as a string, with surrounding whitespace', async () => {
    const key = await createTestKey();
    assert.equal((await parsePrivateKey(`\n ${key.keygenJson}\n`)).address, key.address);
    assert.equal((await parsePrivateKey(`  ${key.base58SecretKey}\n`)).address, key.address);
  });

  it('accepts the solana-keygen array as a JSON array', async () => {
    const key = await createTestKey();
    assert.equal((await parsePrivateKey([...key.secretKey])).address, key.address);
  });

  it('makes a signer whose private key cannot be exported', async () => {
    const key = await createTestKey();
    const signer = await parsePrivateKey(key.base58SecretKey);
    assert.equal(signer.keyPair.privateKey.extractable, false);
    await assert.rejects(crypto.subtle.exportKey('pkcs8', signer.keyPair.privateKey));
  });

  it('rejects a 64-byte key whose public half does not match its seed', async () => {
    const [a, b] = [await createTestKey(), await createTestKey()];
    const mixed = getBase58Decoder().decode(new Uint8Array([...a.seed, ...b.secretKey.slice(32)]));
    await rejects(mixed, /public half of the 64-byte key does not match/, mixed);
  });

  it('rejects base58 of the wrong length', async () => {
    const key = await createTestKey();
    const short = getBase58Decoder().decode(key.secretKey.slice(0, 48));
    await rejects(short, /got 48 bytes/, short);
  });

  it('rejects text that is neither base58 nor a JSON array', async () => {
    await rejects('0OIl not base58!', /not base58/);
    await rejects('[1, 2', /not a JSON array/);
    await rejects('[1,2,3]', /64 numbers, got 3/);
  });

  it('rejects arrays with values that are not bytes', async () => {
    const key = await createTestKey();
    const bad = [...key.secretKey];
    bad[5] = 256;
    await rejects(bad, /integers from 0 to 255/);
    bad[5] = 1.5;
    await rejects(bad, /integers from 0 to 255/);
    await rejects(JSON.stringify([...key.secretKey.slice(0, 63)]), /64 numbers, got 63/);
  });
});
