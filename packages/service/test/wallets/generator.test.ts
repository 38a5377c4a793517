import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import bs58 from 'bs58';
import fc from 'fast-check';
import { isCinderError } from '../../src/errors.ts';
import { parsePrivateKey } from '../../src/keys/parsePrivateKey.ts';
import { createWalletGenerator, splitWork } from '../../src/wallets/index.ts';
import { checkBody, parseGenerated } from '@cinder/testkit';

describe('wallet generator', () => {
  // inlineMaxWallets 8 (the default): n ≤ 8 runs on this thread, larger n on the pool.
  const generator = createWalletGenerator({ vanityTimeoutMs: 30_000, threads: 2 });
  after(() => generator.close());

  for (const n of [1, 8, 9, 1000]) {
    it(`n=${n}: n keypairs; each privateKey is seed ‖ address and its seed signs for the address`, async () => {
      const result = await generator.generate({ n });
      assert.equal(result.count, n);
      const body = parseGenerated(result);
      checkBody(body, n, { derive: true });
      for (const kp of body.keypairs) assert.deepEqual(Object.keys(kp), ['address', 'privateKey']);
    });
  }

  it('every privateKey is accepted by the burn endpoint parser, which finds the same address', async () => {
    const body = parseGenerated(await generator.generate({ n: 100 }));
    for (const kp of body.keypairs.slice(0, 20)) assert.equal((await parsePrivateKey(kp.privateKey)).address, kp.address);
  });

  it('format=keygen: secretKeyBytes is the 64 bytes of privateKey, as in a solana-keygen id.json', async () => {
    for (const n of [3, 300]) {
      const body = parseGenerated(await generator.generate({ n, keygen: true }));
      checkBody(body, n);
      for (const kp of body.keypairs) {
        assert.deepEqual(Object.keys(kp), ['address', 'privateKey', 'secretKeyBytes']);
        assert.deepEqual(kp.secretKeyBytes, [...bs58.decode(kp.privateKey)]);
        assert.equal((await parsePrivateKey(JSON.stringify(kp.secretKeyBytes))).address, kp.address);
      }
    }
  });

  it('20,000 keys: every address and every private key is different', async () => {
    const addresses = new Set<string>();
    const secrets = new Set<string>();
    for (const n of [10_000, 9_936, 64]) {
      const result = await generator.generate({ n });
      const body = parseGenerated(result);
      checkBody(body, n);
      for (const kp of body.keypairs) {
        addresses.add(kp.address);
        secrets.add(kp.privateKey.slice(0, 44));
      }
    }
    assert.equal(addresses.size, 20_000);
    assert.equal(secrets.size, 20_000);
  });

  it('wipe() zeroes every byte that held a key', async () => {
    for (const n of [10, 500]) {
      const result = await generator.generate({ n });
      result.wipe();
      const text = Buffer.concat(result.parts).toString('latin1');
      assert.ok(text.startsWith('{"wallets":['));
      assert.doesNotMatch(text, /[1-9A-HJ-NP-Za-km-z]{32}/, 'no address or key text left');
    }
  });

  it('refuses n that is not a positive integer', async () => {
    for (const n of [0, -1, 1.5, Number.NaN]) await assert.rejects(generator.generate({ n }), RangeError);
  });
});

describe('splitWork', () => {
  it('covers n exactly, with one task per thread at least when n allows and no task over the limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 1, max: 8 }), (n, threads) => {
        const sizes = splitWork(n, threads, 1024, 32);
        assert.equal(sizes.reduce((a, b) => a + b, 0), n);
        assert.ok(sizes.every((s) => s >= 1 && s <= 1024));
        if (n >= 32 * threads) assert.ok(sizes.length >= threads);
        assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, 'balanced');
      }),
    );
  });
});

describe('close()', () => {
  it('stops the pool; later requests get SERVICE_UNAVAILABLE; the process is not kept alive', async () => {
    const generator = createWalletGenerator({ vanityTimeoutMs: 1000, threads: 1 });
    await generator.warmUp();
    await generator.close();
    for (const n of [1, 1000]) {
      await assert.rejects(generator.generate({ n }), (error) => isCinderError(error, 'SERVICE_UNAVAILABLE'));
    }
    await generator.close();
  });
});
