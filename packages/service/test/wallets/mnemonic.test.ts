import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { entropyToMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import fc from 'fast-check';
import sodium from 'sodium-native';
import { createWalletGenerator } from '../../src/wallets/index.ts';
import { deriveSlip10Into, generateMnemonic, mnemonicToSeedInto, solanaSeedFromMnemonic } from '../../src/wallets/mnemonic.ts';
import { addressOfSeed, checkBody, parseGenerated, referenceAddress, referenceSlip10 } from '@cinder/testkit';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const H = 0x80000000;

/** SLIP-0010 ed25519 test vectors (https://github.com/satoshilabs/slips/blob/master/slip-0010.md). */
const SLIP10_VECTORS = [
  {
    seed: '000102030405060708090a0b0c0d0e0f',
    chains: [
      { path: [], privateKey: '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7', publicKey: 'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed' },
      { path: [0], privateKey: '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3', publicKey: '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c' },
      { path: [0, 1], privateKey: 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2', publicKey: '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187' },
      { path: [0, 1, 2], privateKey: '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9', publicKey: 'ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1' },
      { path: [0, 1, 2, 2], privateKey: '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662', publicKey: '8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c' },
      { path: [0, 1, 2, 2, 1000000000], privateKey: '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793', publicKey: '3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a' },
    ],
  },
  {
    seed: 'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    chains: [
      { path: [], privateKey: '171cb88b1b3c1db25add599712e36245d75bc65a1a5c9e18d76f9f2b1eab4012', publicKey: '8fe9693f8fa62a4305a140b9764c5ee01e455963744fe18204b4fb948249308a' },
      { path: [0], privateKey: '1559eb2bbec5790b0c65d8693e4d0875b1747f4970ae8b650486ed7470845635', publicKey: '86fab68dcb57aa196c77c5f264f215a112c22a912c10d123b0d03c3c28ef1037' },
      { path: [0, 2147483647], privateKey: 'ea4f5bfe8694d8bb74b7b59404632fd5968b774ed545e810de9c32a4fb4192f4', publicKey: '5ba3b9ac6e90e83effcd25ac4e58a1365a9e35a3d3ae5eb07b9e4d90bcf7506d' },
      { path: [0, 2147483647, 1], privateKey: '3757c7577170179c7868353ada796c839135b3d30554bbb74a4b1e4a5a58505c', publicKey: '2e66aa57069c86cc18249aecf5cb5a9cebbfd6fadeab056254763874a9352b45' },
      { path: [0, 2147483647, 1, 2147483646], privateKey: '5837736c89570de861ebc173b1086da4f505d4adb387c6a1b1342d5e4ac9ec72', publicKey: 'e33c0f7d81d843c572275f287498e8d408654fdf0d1e065b84e2e6f157aab09b' },
      { path: [0, 2147483647, 1, 2147483646, 2], privateKey: '551d333177df541ad876a60ea71f00447931c0a9da16f227c11ea080d7391b8d', publicKey: '47150c75db263559a70d5778bf36abbab30fb061ad69f69ece61a72b0cfa4fc0' },
    ],
  },
];

/** BIP39 English vectors, passphrase "TREZOR" (https://github.com/trezor/python-mnemonic/blob/master/vectors.json). */
const BIP39_VECTORS = [
  {
    entropy: '00000000000000000000000000000000',
    mnemonic: 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
    seed: 'c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04',
  },
  {
    entropy: '7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f',
    mnemonic: 'legal winner thank year wave sausage worth useful legal winner thank yellow',
    seed: '2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c1069be3a3a5bd381ee6260e8d9739fce1f607',
  },
  {
    entropy: '80808080808080808080808080808080',
    mnemonic: 'letter advice cage absurd amount doctor acoustic avoid letter advice cage above',
    seed: 'd71de856f81a8acc65e6fc851a38d4d7ec216fd0796d0a6827a3ad6ed5511a30fa280f12eb2e47ed2ac03b5c462a0358d18d69fe4f985ec81778c1b370b652a8',
  },
  {
    entropy: 'ffffffffffffffffffffffffffffffff',
    mnemonic: 'zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong',
    seed: 'ac27495480225222079d7be181583751e86f571027b0497b5b5d11218e0a8a13332572917f0f8e5a589620c6f15b11c61dee327651a14c34e18231052e48c069',
  },
  {
    entropy: '0000000000000000000000000000000000000000000000000000000000000000',
    mnemonic: `${'abandon '.repeat(23)}art`,
    seed: 'bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd3097170af7a4d73245cafa9c3cca8d561a7c3de6f5d4a10be8ed2a5e608d68f92fcc8',
  },
];

/**
 * The Solana Cookbook's "restore a BIP44 keypair" example (also used by solana-keygen users and
 * Phantom): this phrase at m/44'/501'/0'/0' is this address.
 */
const SOLANA_VECTOR = {
  mnemonic: 'neither lonely flavor argue grass remind eye tag avocado spot unusual intact',
  address: '5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N',
};

describe('SLIP-0010 ed25519 (src/wallets/mnemonic.ts) against the published vectors', () => {
  for (const vector of SLIP10_VECTORS) {
    for (const chain of vector.chains) {
      it(`seed ${vector.seed.slice(0, 8)}… m${chain.path.map((i) => `/${i}'`).join('')}`, () => {
        const out = new Uint8Array(32);
        deriveSlip10Into(Buffer.from(vector.seed, 'hex'), out, chain.path.map((i) => i + H));
        assert.equal(hex(out), chain.privateKey);
        assert.equal(hex(referenceSlip10(Buffer.from(vector.seed, 'hex'), chain.path.map((i) => i + H))), chain.privateKey);
        const pk = Buffer.alloc(32);
        const sk = Buffer.alloc(64);
        sodium.crypto_sign_seed_keypair(pk, sk, Buffer.from(out));
        assert.equal(hex(pk), chain.publicKey);
      });
    }
  }
});

describe('BIP39 seed', () => {
  for (const vector of BIP39_VECTORS) {
    it(`matches the published vector for "${vector.mnemonic.slice(0, 24)}…"`, () => {
      assert.equal(entropyToMnemonic(Buffer.from(vector.entropy, 'hex'), wordlist), vector.mnemonic);
      const seed = new Uint8Array(64);
      mnemonicToSeedInto(vector.mnemonic, seed, 'TREZOR');
      assert.equal(hex(seed), vector.seed);
    });
  }

  it("equals @scure/bip39's mnemonicToSeedSync on random 12- and 24-word phrases", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ minLength: 32, maxLength: 32 })), (entropy) => {
        const mnemonic = entropyToMnemonic(entropy, wordlist);
        const seed = new Uint8Array(64);
        mnemonicToSeedInto(mnemonic, seed);
        assert.equal(hex(seed), hex(mnemonicToSeedSync(mnemonic)));
      }),
      { numRuns: 30 },
    );
  });
});

describe("Solana mnemonic → address at m/44'/501'/0'/0'", () => {
  it(`the Solana Cookbook phrase gives ${SOLANA_VECTOR.address}`, () => {
    const seed32 = new Uint8Array(32);
    solanaSeedFromMnemonic(SOLANA_VECTOR.mnemonic, seed32, new Uint8Array(64));
    assert.equal(addressOfSeed(seed32), SOLANA_VECTOR.address);
    assert.equal(referenceAddress(SOLANA_VECTOR.mnemonic), SOLANA_VECTOR.address);
  });

  it('random phrases give the same address through the independent path', () => {
    for (const words of [12, 24] as const) {
      for (let i = 0; i < 5; i++) {
        const mnemonic = generateMnemonic(words);
        assert.equal(mnemonic.split(' ').length, words);
        assert.ok(validateMnemonic(mnemonic, wordlist));
        const seed32 = new Uint8Array(32);
        const scratch = new Uint8Array(64).fill(7);
        solanaSeedFromMnemonic(mnemonic, seed32, scratch);
        assert.ok(scratch.every((b) => b === 0), 'the BIP39 seed is wiped');
        assert.equal(addressOfSeed(seed32), referenceAddress(mnemonic));
      }
    }
  });
});

describe('generate with mnemonic=12|24', () => {
  const generator = createWalletGenerator({ vanityTimeoutMs: 30_000 });
  after(() => generator.close());

  for (const words of [12, 24] as const) {
    it(`every keypair carries a valid ${words}-word phrase that derives its address and key (pool)`, async () => {
      const body = parseGenerated(await generator.generate({ n: 20, mnemonic: words }));
      checkBody(body, 20, { derive: true });
      const phrases = new Set<string>();
      for (const kp of body.keypairs) {
        assert.equal(typeof kp.mnemonic, 'string');
        const mnemonic = kp.mnemonic!;
        assert.equal(mnemonic.split(' ').length, words);
        assert.ok(validateMnemonic(mnemonic, wordlist));
        assert.equal(referenceAddress(mnemonic), kp.address);
        phrases.add(mnemonic);
      }
      assert.equal(phrases.size, 20);
    });
  }

  it('combines with format=keygen', async () => {
    const body = parseGenerated(await generator.generate({ n: 2, mnemonic: 12, keygen: true }));
    checkBody(body, 2);
    for (const kp of body.keypairs) {
      assert.deepEqual(Object.keys(kp), ['address', 'privateKey', 'mnemonic', 'secretKeyBytes']);
      assert.equal(referenceAddress(kp.mnemonic!), kp.address);
    }
  });

  it('refuses to combine a mnemonic with a vanity search', async () => {
    await assert.rejects(generator.generate({ n: 1, mnemonic: 12, vanity: { prefix: 'a', suffix: '', ignoreCase: false } }), RangeError);
  });
});
