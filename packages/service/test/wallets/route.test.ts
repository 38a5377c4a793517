/** GET /api/generate_wallets through the real app (app.inject), every parameter rule, and the logs. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { checkBody, referenceAddress, type WalletsBody } from '@cinder/testkit';

const URL = '/api/generate_wallets';
/** Each rule `n` can break says itself. */
const N_NOT_INTEGER = 'must be a base-10 integer from 1 to 10000: digits 0-9 only, without sign, decimal point, exponent, letters or spaces';
const N_RULES = {
  empty: 'is empty: give the number of wallets, a base-10 integer from 1 to 10000',
  notInteger: N_NOT_INTEGER,
  tooSmall: 'must be at least 1',
  leadingZero: 'must be written without a leading zero',
  tooLarge: 'must be at most 10000 (MAX_WALLETS_PER_REQUEST)',
} as const;
const notBase58 = (char: string) => `contains ${JSON.stringify(char)}, which is not a base58 character (base58 excludes 0, O, I and l; it has 1-9, A-Z and a-z otherwise)`;

function problem(code: string, type: string, title: string, errors: { field: string; message: string }[], detail?: string) {
  return {
    type: `urn:cinder:problem:${type}`,
    title,
    status: 400,
    detail: detail ?? errors.map((e) => `${e.field} ${e.message}`).join('; '),
    code,
    errors,
  };
}
const invalidN = (message: string) => problem('INVALID_N', 'invalid-n', 'Invalid number of wallets', [{ field: 'n', message }]);
const invalidParameter = (field: string, message: string) =>
  problem('INVALID_PARAMETER', 'invalid-parameter', 'Invalid parameter', [{ field, message }]);

describe('GET /api/generate_wallets', () => {
  let t: TestApp;
  let small: TestApp;
  /** Every secret the app handed out, to look for in its logs at the end. */
  const secrets: string[] = [];

  before(async () => {
    t = await createTestApp();
    small = await createTestApp({ maxWalletsPerRequest: 50, maxMnemonicWalletsPerRequest: 3, vanityTimeoutMs: 300 }, { chain: t.chain });
  });
  after(async () => {
    await small?.close();
    await t?.close();
  });

  async function get(query: string, app = t) {
    return app.app.inject({ method: 'GET', url: `${URL}${query}` });
  }

  async function ok(query: string, n: number, app = t): Promise<WalletsBody> {
    const res = await get(query, app);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json<WalletsBody>();
    checkBody(body, n, { derive: n <= 100 });
    for (const kp of body.keypairs) {
      secrets.push(kp.privateKey);
      if (kp.mnemonic) secrets.push(kp.mnemonic);
    }
    return body;
  }

  async function bad(query: string, expected: object, app = t) {
    const res = await get(query, app);
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.deepEqual(res.json(), expected, query);
  }

  describe('n', () => {
    for (const n of [1, 2, 64, 65, 9999, 10000]) {
      it(`n=${n}: 200, n wallets, wallets[i] = keypairs[i].address, keys valid, no-store`, async () => {
        const body = await ok(`?n=${n}`, n);
        for (const kp of body.keypairs) assert.deepEqual(Object.keys(kp), ['address', 'privateKey']);
      });
    }

    it('missing n: 400 MISSING_FIELD', async () => {
      await bad('', problem('MISSING_FIELD', 'missing-field', 'Missing required field', [{ field: 'n', message: 'is required' }], 'Missing required field: n'));
      await bad(
        '?format=keygen',
        problem('MISSING_FIELD', 'missing-field', 'Missing required field', [{ field: 'n', message: 'is required' }], 'Missing required field: n'),
      );
    });

    const invalid: [string, string, string][] = [
      ['empty', 'n=', N_RULES.empty],
      ['zero', 'n=0', N_RULES.tooSmall],
      ['zeros', 'n=000', N_RULES.tooSmall],
      ['out of range', 'n=10001', N_RULES.tooLarge],
      ['far out of range', 'n=99999999999999999999999', N_RULES.tooLarge],
      ['fractional', 'n=1.5', N_RULES.notInteger],
      ['fractional zero', 'n=5.0', N_RULES.notInteger],
      ['plus sign', 'n=%2B5', N_RULES.notInteger],
      ['plus (a space in a query)', 'n=+5', N_RULES.notInteger],
      ['minus sign', 'n=-5', N_RULES.notInteger],
      ['exponent', 'n=1e3', N_RULES.notInteger],
      ['hex', 'n=0x10', N_RULES.notInteger],
      ['leading zero', 'n=010', N_RULES.leadingZero],
      ['leading space', 'n=%205', N_RULES.notInteger],
      ['trailing space', 'n=5%20', N_RULES.notInteger],
      ['tab', 'n=5%09', N_RULES.notInteger],
      ['word', 'n=ten', N_RULES.notInteger],
      ['infinity', 'n=Infinity', N_RULES.notInteger],
      ['unicode digit', 'n=%D9%A5', N_RULES.notInteger],
    ];
    for (const [what, query, rule] of invalid) {
      it(`${what} (${query}): 400 INVALID_N saying which rule`, async () => {
        await bad(`?${query}`, invalidN(rule));
      });
    }

    it('repeated (n=1&n=2): 400 INVALID_N', async () => {
      await bad('?n=1&n=2', invalidN('must be given once'));
    });

    it('the limit follows config.maxWalletsPerRequest', async () => {
      await ok('?n=50', 50, small);
      await bad('?n=51', invalidN('must be at most 50 (MAX_WALLETS_PER_REQUEST)'), small);
    });
  });

  describe('mnemonic', () => {
    for (const words of [12, 24]) {
      it(`mnemonic=${words}: each keypair has a ${words}-word phrase that imports to the same address`, async () => {
        const body = await ok(`?n=3&mnemonic=${words}`, 3);
        for (const kp of body.keypairs) {
          assert.deepEqual(Object.keys(kp), ['address', 'privateKey', 'mnemonic']);
          assert.equal(kp.mnemonic!.split(' ').length, words);
          assert.ok(validateMnemonic(kp.mnemonic!, wordlist));
          assert.equal(referenceAddress(kp.mnemonic!), kp.address);
        }
      });
    }

    it('bad values: 400 INVALID_PARAMETER', async () => {
      for (const value of ['', '13', '0', '12.0', '012', 'twelve', 'true']) {
        await bad(`?n=1&mnemonic=${value}`, invalidParameter('mnemonic', 'must be 12 or 24'));
      }
      await bad('?n=1&mnemonic=12&mnemonic=24', invalidParameter('mnemonic', 'must be given once'));
    });

    it('the lower n limit (config.maxMnemonicWalletsPerRequest) applies', async () => {
      await ok('?n=3&mnemonic=12', 3, small);
      await bad('?n=4&mnemonic=12', invalidN('must be at most 3 with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST)'), small);
      await bad('?n=101&mnemonic=24', invalidN('must be at most 100 with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST)'));
    });

    it('cannot be combined with a vanity pattern', async () => {
      await bad('?n=1&mnemonic=12&prefix=a', invalidParameter('mnemonic', 'cannot be combined with prefix or suffix'));
    });
  });

  describe('prefix, suffix, ignoreCase', () => {
    it('prefix: every address starts with it (case-sensitive)', async () => {
      const body = await ok('?n=3&prefix=Ab', 3);
      for (const a of body.wallets) assert.ok(a.startsWith('Ab'), a);
    });

    it('suffix, and both', async () => {
      let body = await ok('?n=2&suffix=x', 2);
      for (const a of body.wallets) assert.ok(a.endsWith('x'), a);
      body = await ok('?n=2&prefix=9&suffix=9', 2);
      for (const a of body.wallets) assert.ok(a.startsWith('9') && a.endsWith('9'), a);
    });

    it('ignoreCase=true matches either case; ignoreCase=false is the default', async () => {
      let body = await ok('?n=4&prefix=ab&ignoreCase=true', 4);
      for (const a of body.wallets) assert.match(a, /^[aA][bB]/);
      body = await ok('?n=2&prefix=z&ignoreCase=false', 2);
      for (const a of body.wallets) assert.ok(a.startsWith('z'), a);
    });

    it('with format=keygen', async () => {
      const body = await ok('?n=1&suffix=K&format=keygen', 1);
      assert.deepEqual(Object.keys(body.keypairs[0]!), ['address', 'privateKey', 'secretKeyBytes']);
    });

    it('bad patterns: 400 INVALID_PARAMETER', async () => {
      for (const field of ['prefix', 'suffix']) {
        const cases: [string, string][] = [
          ['', 'is empty: give 1 to 4 base58 characters (1-9, A-Z and a-z except 0, O, I and l)'],
          ['0', notBase58('0')],
          ['O', notBase58('O')],
          ['I', notBase58('I')],
          ['l', notBase58('l')],
          ['ab0', notBase58('0')],
          ['a+b', notBase58(' ')],
          ['a%20', notBase58(' ')],
          ['%C3%A9', notBase58('é')],
          ['%22', notBase58('"')],
          ['abcde', 'must have at most 4 characters (MAX_VANITY_LENGTH)'],
        ];
        for (const [value, message] of cases) await bad(`?n=1&${field}=${value}`, invalidParameter(field, message));
        await bad(`?n=1&${field}=a&${field}=b`, invalidParameter(field, 'must be given once'));
      }
    });

    it('prefix and suffix together at most config.maxVanityLength (4)', async () => {
      await bad('?n=1&prefix=abc&suffix=de', invalidParameter('suffix', 'and prefix together must have at most 4 characters'));
    });

    it('bad ignoreCase: 400 INVALID_PARAMETER', async () => {
      for (const value of ['', 'yes', '1', 'TRUE']) {
        await bad(`?n=1&prefix=a&ignoreCase=${value}`, invalidParameter('ignoreCase', 'must be true or false'));
      }
      await bad('?n=1&ignoreCase=true', invalidParameter('ignoreCase', 'applies only with prefix or suffix'));
    });

    it('no match before config.vanityTimeoutMs: 422 VANITY_TIMEOUT with keysTried', async () => {
      const res = await get('?n=1&prefix=1111', small);
      assert.equal(res.statusCode, 422);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = res.json<Record<string, unknown>>();
      assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'keysTried', 'status', 'title', 'type']);
      assert.equal(body.type, 'urn:cinder:problem:vanity-timeout');
      assert.equal(body.title, 'Vanity search timed out');
      assert.equal(body.status, 422);
      assert.equal(body.code, 'VANITY_TIMEOUT');
      assert.ok(Number.isInteger(body.keysTried) && (body.keysTried as number) >= 0);
      assert.equal(
        body.detail,
        `Found 0 of 1 addresses with prefix "1111" in 300 ms; ${body.keysTried as number} keys tried. Use a shorter pattern, ignoreCase=true or a smaller n.`,
      );
    });
  });

  describe('format', () => {
    it('format=keygen: secretKeyBytes is the solana-keygen array of privateKey', async () => {
      const body = await ok('?n=2&format=keygen', 2);
      for (const kp of body.keypairs) {
        assert.deepEqual(Object.keys(kp), ['address', 'privateKey', 'secretKeyBytes']);
        assert.equal(kp.secretKeyBytes!.length, 64);
        assert.ok(kp.secretKeyBytes!.every((b) => Number.isInteger(b) && b >= 0 && b <= 255));
      }
      const both = await ok('?n=2&format=keygen&mnemonic=12', 2);
      assert.deepEqual(Object.keys(both.keypairs[0]!), ['address', 'privateKey', 'mnemonic', 'secretKeyBytes']);
    });

    it('other values: 400 INVALID_PARAMETER', async () => {
      for (const value of ['', 'json', 'KEYGEN', 'keygen%20', '%20keygen']) await bad(`?n=1&format=${value}`, invalidParameter('format', 'must be keygen'));
    });
  });

  it('unknown query parameters: 400 UNKNOWN_FIELD', async () => {
    await bad('?n=1&count=5', problem('UNKNOWN_FIELD', 'unknown-field', 'Unknown field', [{ field: 'count', message: 'is not a known field' }], 'Unknown field: count'));
  });

  it('several bad parameters are reported together', async () => {
    await bad(
      '?n=0&mnemonic=13&format=x',
      problem('INVALID_N', 'invalid-n', 'Invalid number of wallets', [
        { field: 'n', message: N_RULES.tooSmall },
        { field: 'mnemonic', message: 'must be 12 or 24' },
        { field: 'format', message: 'must be keygen' },
      ]),
    );
  });

  it('no private key or mnemonic ever reaches the logs', async () => {
    assert.ok(secrets.length > 20_000, `${secrets.length} secrets collected`);
    const logs = t.logs() + small.logs();
    assert.match(logs, /generate_wallets/, 'the requests were logged');
    for (const secret of secrets) assert.ok(!logs.includes(secret.slice(0, 20)), 'a secret appears in the logs');
  });
});
