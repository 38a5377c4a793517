/**
 * Feature gates this chain reports, stored as agave's feature program stores them: an account
 * owned by `Feature111…` whose data is bincode `Feature { activated_at: Option<u64> }` (9 bytes:
 * 1, then the activation slot little-endian). Clients read a gate with getAccountInfo, as they
 * would on mainnet; this chain's own rules read the same account, so the two cannot disagree.
 */
import { address, getU64Decoder, getU64Encoder, type Address } from '@solana/kit';
import type { Chain } from './chain.ts';

export const FEATURE_PROGRAM = address('Feature111111111111111111111111111111111111');
/** The v1 transaction format (SIMD-0385) and its 4,096-byte size (SIMD-0296), active on mainnet since 2026-09-15. */
export const V1_TRANSACTIONS_FEATURE = address('txv1aq4pp281K9um3tnPgkfX8UqtFT6wcVW3hNezGLL');
const FEATURE_ACCOUNT_SIZE = 9;
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

export interface FeatureOptions {
  /** Whether the v1 transaction gate is active (default true, as on mainnet). Off, v1 is refused as before the gate. */
  v1Transactions?: boolean;
}

/** bincode of `Feature { activated_at: Some(slot) }`. */
export function activatedFeatureData(slot: bigint): Uint8Array {
  const data = new Uint8Array(FEATURE_ACCOUNT_SIZE);
  data[0] = 1;
  data.set(getU64Encoder().encode(slot), 1);
  return data;
}

/**
 * Makes the v1 gate what `options` asks. LiteSVM 1.5's genesis already holds its feature account,
 * but activated at slot 446,071,424, a slot this chain has not reached: "on" rewrites it as
 * activated at genesis (slot 0), "off" removes it, since a cluster from before the gate has no
 * such account.
 */
export function installFeatures(chain: Chain, options: FeatureOptions): void {
  const on = options.v1Transactions !== false;
  if (on && isFeatureActive(chain, V1_TRANSACTIONS_FEATURE)) return;
  if (!on && !chain.svm.getAccount(V1_TRANSACTIONS_FEATURE).exists) return;
  chain.setAccount(
    on
      ? {
          address: V1_TRANSACTIONS_FEATURE,
          lamports: chain.svm.minimumBalanceForRentExemption(BigInt(FEATURE_ACCOUNT_SIZE)),
          data: activatedFeatureData(0n),
          owner: FEATURE_PROGRAM,
          executable: false,
        }
      : { address: V1_TRANSACTIONS_FEATURE, lamports: 0n, data: new Uint8Array(), owner: SYSTEM_PROGRAM, executable: false },
  );
}

/** Whether `feature` is active: its account exists, belongs to the feature program and has an activation slot. */
export function isFeatureActive(chain: Chain, feature: Address): boolean {
  const account = chain.svm.getAccount(feature);
  if (!account.exists || account.programAddress !== FEATURE_PROGRAM || account.data.length < FEATURE_ACCOUNT_SIZE) return false;
  return account.data[0] === 1 && getU64Decoder().decode(account.data, 1) <= BigInt(chain.slot);
}
