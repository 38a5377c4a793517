/**
 * Wallets derived from one phrase: the SLIP-0010 derivation of src/wallets/mnemonic.ts
 * against the published test vector, against the reference written from the specification
 * (walletChecks.ts: node:crypto HMAC-SHA512, ~10 lines) and against micro-key-producer; a known
 * Solana phrase; and GET /api/generate_wallets?hd=12|24 through the real app.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { HDKey } from 'micro-key-producer/slip10.js';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { accountPath, accountSeedInto, HARDENED, slip10Derive, slip10Master, solanaParentNode } from '../../src/wallets/mnemonic.ts';
import { ABANDON, referenceAddressAt } from '@cinder/testkit';
import { addressOfSeed, checkBody, referenceSlip10, type WalletsBody } from '@cinder/testkit';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const H = HARDENED;

/** SLIP-0010 test vector 1 for ed25519 (https://github.com/satoshilabs/slips/blob/master/slip-0010.md): private keys and chain codes. */
const VECTOR_1 = {
  seed: '000102030405060708090a0b0c0d0e0f',
  chains: [
    { path: [], chainCode: '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb', privateKey: '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7' },
    { path: [0], chainCode: '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69', privateKey: '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3' },
    { path: [0, 1], chainCode: 'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14', privateKey: 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2' },
    { path: [0, 1, 2], chainCode: '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c', privateKey: '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9' },
    { path: [0, 1, 2, 2], chainCode: '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc', privateKey: '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662' },
    { path: [0, 1, 2, 2, 1000000000], chainCode: '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230', privateKey: '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793' },
  ],
};

describe('SLIP-0010 ed25519 of src/wallets/mnemonic.ts', () => {
  for (const chain of VECTOR_1.chains) {
    it(`test vector 1: m${chain.path.map((i) => `/${i}'`).join('')}: private key and chain code`, () => {
      const seed = Buffer.from(VECTOR_1.seed, 'hex');
      const node = slip10Derive(slip10Master(seed), chain.path.map((i) => i + H));
      assert.equal(hex(node.subarray(0, 32)), chain.privateKey);
      assert.equal(hex(node.subarray(32)), chain.chainCode);
      assert.equal(hex(referenceSlip10(seed, chain.path.map((i) => i + H))), chain.privateKey);
    });
  }

  it('equals the reference and micro-key-producer for random seeds and accounts of both schemes', () => {
    for (let run = 0; run < 20; run++) {
      const seed = Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256)));
      const parent = solanaParentNode(seed);
      const i = run < 10 ? run : Math.floor(Math.random() * H);
      for (const scheme of ['phantom', 'ledger-live'] as const) {
        const levels = scheme === 'phantom' ? [44 + H, 501 + H, i + H, H] : [44 + H, 501 + H, i + H];
        const out = new Uint8Array(32);
        accountSeedInto(parent, scheme, i, out);
        assert.equal(hex(out), hex(referenceSlip10(seed, levels)), `${scheme} ${i}`);
        assert.equal(hex(out), hex(HDKey.fromMasterSeed(seed).derive(accountPath(scheme, i)).privateKey), `${scheme} ${i} (micro-key-producer)`);
      }
    }
  });

  it(`"abandon … about": the first Phantom account is ${ABANDON.phantom0}`, () => {
    assert.equal(referenceAddressAt(ABANDON.mnemonic, [44 + H, 501 + H, H, H]), ABANDON.phantom0);
    const seed32 = new Uint8Array(32);
    accountSeedInto(solanaParentNode(mnemonicToSeedSync(ABANDON.mnemonic)), 'phantom', 0, seed32);
    assert.equal(addressOfSeed(seed32), ABANDON.phantom0);
    assert.equal(accountPath('phantom', 7), "m/44'/501'/7'/0'");
    assert.equal(accountPath('ledger-live', 7), "m/44'/501'/7'");
  });

  it('refuses account indexes that are not hardened 31-bit numbers', () => {
    const parent = new Uint8Array(64);
    assert.throws(() => accountSeedInto(parent, 'phantom', H, new Uint8Array(32)), RangeError);
    assert.throws(() => accountSeedInto(parent, 'phantom', -1, new Uint8Array(32)), RangeError);
  });
});

interface HdBody extends WalletsBody {
  mnemonic: string;
  keypairs: (WalletsBody['keypairs'][number] & { path: string })[];
}

describe('GET /api/generate_wallets?hd=12|24', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ maxWalletsPerRequest: 300 });
  });
  after(() => t?.close());

  const get = (query: string) => t.app.inject({ method: 'GET', url: `/api/generate_wallets${query}` });

  for (const [words, n] of [[12, 3], [24, 300]] as const) {
    it(`hd=${words}, n=${n}: one phrase at the top, wallet i at m/44'/501'/i'/0' (n up to the general limit)`, async () => {
      const res = await get(`?n=${n}&hd=${words}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json<HdBody>();
      assert.deepEqual(Object.keys(body), ['mnemonic', 'wallets', 'keypairs']);
      assert.equal(body.mnemonic.split(' ').length, words);
      assert.ok(validateMnemonic(body.mnemonic, wordlist));
      const { mnemonic, ...rest } = body;
      checkBody(rest, n, { derive: n <= 3 });
      const bip39Seed = mnemonicToSeedSync(mnemonic);
      body.keypairs.forEach((kp, i) => {
        assert.deepEqual(Object.keys(kp), ['address', 'privateKey', 'path']);
        assert.equal(kp.path, `m/44'/501'/${i}'/0'`);
        if (i < 20 || i === n - 1) assert.equal(addressOfSeed(referenceSlip10(bip39Seed, [44 + H, 501 + H, i + H, H])), kp.address, kp.path);
      });
      assert.equal(new Set(body.wallets).size, n);
    });
  }

  it('a new phrase each time', async () => {
    const a = (await get('?n=1&hd=12')).json<HdBody>();
    const b = (await get('?n=1&hd=12')).json<HdBody>();
    assert.notEqual(a.mnemonic, b.mnemonic);
  });

  it('hd with format=keygen adds the key bytes', async () => {
    const body = (await get('?n=2&hd=12&format=keygen')).json<HdBody & { keypairs: { secretKeyBytes: number[] }[] }>();
    assert.deepEqual(Object.keys(body.keypairs[0]!), ['address', 'privateKey', 'path', 'secretKeyBytes']);
  });

  const refused = [
    ['?n=2&hd=12&mnemonic=12', 'hd', /^cannot be combined with mnemonic/],
    ['?n=2&hd=24&prefix=A', 'hd', /^cannot be combined with prefix or suffix/],
    ['?n=2&hd=12&suffix=z&ignoreCase=true', 'hd', /^cannot be combined with prefix or suffix/],
    ['?n=2&hd=13', 'hd', /^must be 12 or 24$/],
    ['?n=301&hd=12', 'n', /^must be at most 300 \(MAX_WALLETS_PER_REQUEST\)$/],
  ] as const;
  for (const [query, field, message] of refused) {
    it(`${query}: 400 naming ${field}`, async () => {
      const res = await get(query);
      assert.equal(res.statusCode, 400, res.body);
      const problem = res.json<{ errors: { field: string; message: string }[] }>();
      assert.equal(problem.errors[0]!.field, field);
      assert.match(problem.errors[0]!.message, message);
    });
  }

  it('the OpenAPI document describes hd, mnemonic, path and the streamed lines', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
    }>();
    const op = doc.paths['/api/generate_wallets']!.get;
    assert.ok(op.parameters.some((p) => p.name === 'hd'));
    const json = JSON.stringify(op.responses['200']!.content['application/json']!.schema);
    assert.match(json, /"mnemonic"/);
    assert.match(json, /"path"/);
    assert.match(JSON.stringify(op.responses['200']!.content['application/x-ndjson']!.schema), /"keysTried"/);
  });
});
