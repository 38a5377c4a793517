/** Known addresses of one phrase, and the independent derivation they are checked with (hd.test.ts, test/cli/derive.test.ts). */
import { mnemonicToSeedSync } from '@scure/bip39';
import { addressOfSeed, referenceSlip10 } from './walletChecks.ts';

/**
 * "abandon … about" (the all-zero 128-bit entropy): its first Phantom account, m/44'/501'/0'/0',
 * computed with the independent path (scure's PBKDF2, the reference SLIP-0010, OpenSSL ed25519)
 * and with micro-key-producer: HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk (the address other
 * Solana libraries' tests cite for this phrase). Its solana-keygen address (no path) is
 * EHqmfkN89RJ7Y33CXM6uCzhVeuywHoJXZZLszBHHZy7o, its Ledger Live account 0 (m/44'/501'/0')
 * GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL, both computed the same independent way.
 */
export const ABANDON = {
  mnemonic: 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
  phantom0: 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk',
  ledgerLive0: 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL',
  keygen: 'EHqmfkN89RJ7Y33CXM6uCzhVeuywHoJXZZLszBHHZy7o',
};

/** Address of account i of a phrase by independent means (path: the levels below m). */
export function referenceAddressAt(mnemonic: string, path: number[]): string {
  return addressOfSeed(referenceSlip10(mnemonicToSeedSync(mnemonic), path));
}

