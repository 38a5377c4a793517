/**
 * The state of many wallets at once (a preview or reclaim of many owners: docs/many-wallets.md).
 * RPC calls: per owner, getTokenAccountsByOwner for SPL Token and for Token-2022 (the JSON-RPC
 * has no call for several owners); then ONE merged account read for every owner, every mint of
 * every owner, the Rent sysvar and `alsoRead`, which the chain adapter sends as getMultipleAccounts
 * calls of 100 addresses. So 2 calls per owner, plus ⌈(owners + distinct mints + 1 + extras) / 100⌉.
 * Every call goes through the chain adapter's RPC budget (SOLANA_RPC_MAX_RPS).
 */
import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { ChainAdapter, RawAccount } from '../chain/chainAdapter.ts';
import type { WalletState } from '../plan/actions.ts';
import { decodeRent, DEFAULT_RENT, RENT_SYSVAR } from '../plan/rent.ts';
import { mapConcurrently, mapInSlices } from '../plan/slices.ts';
import { decodeMint, TOKEN_2022_PROGRAM_ADDRESS, type MintState } from '../plan/tokenState.ts';
import { decodeAccounts } from './readWallet.ts';

/**
 * Owners whose token accounts are being read at once: 16 owners is 32 calls in flight, enough to
 * hide an RPC's latency, while the adapter's budget paces what actually leaves.
 */
export const OWNER_READS_AT_ONCE = 16;

export interface WalletsRead {
  /** One state per owner, in the order given. */
  states: WalletState[];
  /** The accounts of `alsoRead` (null: no account there). */
  also: ReadonlyMap<Address, RawAccount | null>;
}

export async function readWallets(chain: ChainAdapter, owners: readonly Address[], alsoRead: readonly Address[], deadline: number): Promise<WalletsRead> {
  const tokenAccounts = await mapConcurrently(owners, OWNER_READS_AT_ONCE, async (owner) => {
    const [classic, token2022] = await Promise.all([
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, deadline),
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_2022_PROGRAM_ADDRESS }, deadline),
    ]);
    return (await decodeAccounts([...classic, ...token2022])).filter((a) => a.owner === owner);
  });
  const mintAddresses = [...new Set(tokenAccounts.flat().map((a) => a.mint))];
  const ownerSet = new Set(owners);
  const also = [...new Set(alsoRead)].filter((a) => !ownerSet.has(a) && a !== RENT_SYSVAR);
  const batch = await chain.getAccounts([...mintAddresses, ...owners, RENT_SYSVAR, ...also], deadline);

  const mints = new Map<Address, MintState>();
  const decoded = await mapInSlices(batch.slice(0, mintAddresses.length), (account) => (account ? decodeMint(account) : null));
  decoded.forEach((mint, i) => {
    if (mint) mints.set(mintAddresses[i]!, mint);
  });
  const ownerAccounts = batch.slice(mintAddresses.length, mintAddresses.length + owners.length);
  const rentAccount = batch[mintAddresses.length + owners.length];
  const rent = (rentAccount && decodeRent(rentAccount.data)) ?? DEFAULT_RENT;
  const alsoAccounts = batch.slice(mintAddresses.length + owners.length + 1);
  const byAddress = new Map<Address, RawAccount | null>(owners.map((owner, i) => [owner, ownerAccounts[i] ?? null]));
  for (const [i, address] of also.entries()) byAddress.set(address, alsoAccounts[i] ?? null);
  return {
    states: owners.map((owner, i) => ({ owner, ownerLamports: ownerAccounts[i]?.lamports ?? 0n, accounts: tokenAccounts[i]!, mints, rent })),
    // Asked for by address, owners included (a fee payer or destination may be one of them).
    also: new Map(alsoRead.map((address) => [address, byAddress.get(address) ?? null])),
  };
}
