import { getBase58Decoder, getAddressDecoder, type Address } from '@solana/kit';

export interface TestKey {
  address: Address;
  /** seed (32) || public key (32): the Phantom / solana-keygen layout. */
  secretKey: Uint8Array;
  seed: Uint8Array;
  base58SecretKey: string;
  base58Seed: string;
  keygenJson: string;
}

/** A fresh ed25519 key in every format users paste, made with WebCrypto (extractable, test only). */
export async function createTestKey(): Promise<TestKey> {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify'])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey));
  const seed = pkcs8.slice(pkcs8.length - 32);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const secretKey = new Uint8Array([...seed, ...publicKey]);
  const base58 = getBase58Decoder();
  return {
    address: getAddressDecoder().decode(publicKey),
    secretKey,
    seed,
    base58SecretKey: base58.decode(secretKey),
    base58Seed: base58.decode(seed),
    keygenJson: JSON.stringify([...secretKey]),
  };
}
