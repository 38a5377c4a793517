import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isCinderError, toProblem } from '../../src/errors.ts';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { checkBody, parseGenerated } from '@cinder/testkit';

describe('vanity search', () => {
  const generator = createWalletGenerator({ vanityTimeoutMs: 20_000, threads: 2 });
  after(() => generator.close());

  it('prefix: every address starts with it, case-sensitive, and every key derives its address', async () => {
    const result = await generator.generate({ n: 5, vanity: { prefix: 'A', suffix: '', ignoreCase: false } });
    const body = parseGenerated(result);
    checkBody(body, 5, { derive: true });
    for (const address of body.wallets) assert.ok(address.startsWith('A'), address);
    assert.ok(result.keysTried >= 5);
  });

  it('suffix, and prefix with suffix', async () => {
    let body = parseGenerated(await generator.generate({ n: 3, vanity: { prefix: '', suffix: 'z', ignoreCase: false } }));
    checkBody(body, 3, { derive: true });
    for (const address of body.wallets) assert.ok(address.endsWith('z'), address);
    body = parseGenerated(await generator.generate({ n: 2, vanity: { prefix: 'B', suffix: '9', ignoreCase: false } }));
    checkBody(body, 2, { derive: true });
    for (const address of body.wallets) assert.ok(address.startsWith('B') && address.endsWith('9'), address);
  });

  it('ignoreCase: letters match either case (both show up over 40 finds); digits match themselves', async () => {
    // A suffix: the last character is uniform over the alphabet, so each case is found half the time.
    const body = parseGenerated(await generator.generate({ n: 40, vanity: { prefix: '', suffix: 'k', ignoreCase: true } }));
    checkBody(body, 40, { derive: true });
    for (const address of body.wallets) assert.match(address, /[kK]$/);
    // All 40 in one case would happen once in 2^39 runs.
    assert.ok(body.wallets.some((a) => a.endsWith('k')) && body.wallets.some((a) => a.endsWith('K')));
    const prefixed = parseGenerated(await generator.generate({ n: 4, vanity: { prefix: 'b', suffix: '', ignoreCase: true } }));
    for (const address of prefixed.wallets) assert.match(address, /^[bB]/);
    const digits = parseGenerated(await generator.generate({ n: 2, vanity: { prefix: '', suffix: '7', ignoreCase: true } }));
    for (const address of digits.wallets) assert.ok(address.endsWith('7'), address);
  });

  it('format=keygen applies to vanity wallets too', async () => {
    const body = parseGenerated(await generator.generate({ n: 2, keygen: true, vanity: { prefix: 'C', suffix: '', ignoreCase: false } }));
    checkBody(body, 2);
    for (const kp of body.keypairs) assert.equal(kp.secretKeyBytes?.length, 64);
  });

  it('n larger than one slice finds: exactly n wallets, all different', async () => {
    const body = parseGenerated(await generator.generate({ n: 300, vanity: { prefix: '', suffix: 'x', ignoreCase: true } }));
    checkBody(body, 300);
    assert.equal(new Set(body.wallets).size, 300);
  });

  it('past the deadline: 422 VANITY_TIMEOUT with the number of keys tried, and nothing else', async () => {
    const quick = createWalletGenerator({ vanityTimeoutMs: 300, threads: 1 });
    try {
      await quick.warmUp();
      await assert.rejects(quick.generate({ n: 1, vanity: { prefix: '1111', suffix: 'zzzz', ignoreCase: false } }), (error) => {
        assert.ok(isCinderError(error, 'VANITY_TIMEOUT'));
        assert.equal(error.status, 422);
        const problem = toProblem(error);
        assert.equal(typeof problem.keysTried, 'number');
        assert.ok((problem.keysTried as number) > 0, 'the warmed-up pool tried keys');
        assert.match(problem.detail, /^Found 0 of 1 addresses with prefix "1111" and suffix "zzzz" in 300 ms; \d+ keys tried\./);
        return true;
      });
    } finally {
      await quick.close();
    }
  });

  it('an abandoned search (client gone) stops and rejects with the abort reason', async () => {
    const controller = new AbortController();
    const search = generator.generate({ n: 1, vanity: { prefix: '1111', suffix: 'zzzz', ignoreCase: false }, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 200);
    await assert.rejects(search, /client went away/);
    // The pool is free again: a plain request is served.
    assert.equal((await generator.generate({ n: 100 })).count, 100);
  });
});
