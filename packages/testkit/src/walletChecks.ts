/** Independent checks of generated wallets: bs58 and node:crypto (OpenSSL), no code under test. */
import assert from 'node:assert/strict';
import { createHmac, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import bs58 from 'bs58';
import type { GeneratedWallets } from '@cinder/service';

export interface Keypair {
  address: string;
  privateKey: string;
  mnemonic?: string;
  secretKeyBytes?: number[];
}

export interface WalletsBody {
  wallets: string[];
  keypairs: Keypair[];
}

const PKCS8_ED25519_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The body a generator produced, as a client parses it (and its byte count checked). */
export function parseGenerated(result: GeneratedWallets): WalletsBody {
  const body = Buffer.concat(result.parts);
  assert.equal(body.length, result.byteLength);
  const parsed = JSON.parse(body.toString('utf8')) as WalletsBody;
  assert.equal(parsed.wallets.length, result.count);
  return parsed;
}

/** Address an ed25519 seed stands for, derived by OpenSSL. */
export function addressOfSeed(seed: Uint8Array): string {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return bs58.encode(spki.subarray(SPKI_ED25519_PREFIX.length));
}

/**
 * The shape rules every body obeys, and for every keypair: privateKey is base58 of 64 bytes whose
 * last 32 are the address. With `derive`, also that the seed derives the address (OpenSSL) and a
 * signature made with the seed verifies under the address.
 */
export function checkBody(body: WalletsBody, n: number, options: { derive?: boolean } = {}): void {
  assert.deepEqual(Object.keys(body), ['wallets', 'keypairs']);
  assert.equal(body.wallets.length, n);
  assert.equal(body.keypairs.length, n);
  body.keypairs.forEach((kp, i) => {
    assert.equal(body.wallets[i], kp.address);
    const secret = bs58.decode(kp.privateKey);
    assert.equal(secret.length, 64);
    const address = bs58.decode(kp.address);
    assert.equal(address.length, 32);
    assert.deepEqual(secret.subarray(32), address, 'the last 32 bytes of privateKey are the address');
    if (options.derive) checkSigns(secret.subarray(0, 32), kp.address);
  });
}

export function checkSigns(seed: Uint8Array, address: string): void {
  assert.equal(addressOfSeed(seed), address, 'the seed derives the address');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, bs58.decode(address)]), format: 'der', type: 'spki' });
  const message = Buffer.from(`cinder ${address}`);
  assert.ok(verify(null, message, publicKey, sign(null, message, privateKey)), 'a signature by the seed verifies under the address');
}

/** SLIP-0010 ed25519 written from the specification with node:crypto, as an independent path. */
export function referenceSlip10(seed: Uint8Array, path: number[]): Buffer {
  let I = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const index of path) {
    const data = Buffer.alloc(37);
    I.copy(data, 1, 0, 32);
    data.writeUInt32BE(index, 33);
    I = createHmac('sha512', I.subarray(32)).update(data).digest();
  }
  return I.subarray(0, 32);
}

const H = 0x80000000;

/** Address of a phrase at m/44'/501'/0'/0' by independent means: scure's PBKDF2, the reference SLIP-0010, OpenSSL ed25519. */
export function referenceAddress(mnemonic: string): string {
  return addressOfSeed(referenceSlip10(mnemonicToSeedSync(mnemonic), [44 + H, 501 + H, H, H]));
}
