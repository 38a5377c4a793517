/**
 * The state of many wallets at once (a preview or reclaim of many owners: docs/many-wallets.md).
 * RPC calls: per owner, getTokenAccountsByOwner for SPL Token and for Token-2022 (the JSON-RPC
 * has no call for several owners); then ONE merged account read for every owner, every mint of
 * every owner, the Rent sysvar and `alsoRead`, which the chain adapter sends as getMultipleAccounts
 * calls of 100 addresses. So 2 calls per owner, plus ⌈(owners + distinct mints + 1 + extras) / 100⌉.
 * Every call goes through the chain adapter's RPC budget (SOLANA_RPC_MAX_RPS).
 *
 * The reader of every door: a whole-wallet reclaim of one owner is this read of one owner
 * (readWallet.ts), and a burn, which knows its mint up front, shares the decoding of the batch
 * (`statesFromBatch`).
 */
import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { ChainAdapter, RawAccount } from '../chain/types.ts';
import type { WalletState } from '../plan/actions.ts';
import { decodeRent, DEFAULT_RENT, RENT_SYSVAR } from '../plan/rent.ts';
import { mapConcurrently, mapInSlices } from '../plan/slices.ts';
import { decodeMint, decodeTokenAccount, TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState } from '../plan/tokenState.ts';

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

export async function decodeAccounts(raw: readonly RawAccount[]): Promise<TokenAccountState[]> {
  return (await mapInSlices(raw, decodeTokenAccount)).filter((a): a is TokenAccountState => a !== null);
}

/**
 * The owners' states from one batch read laid out as [...mints, ...owners, Rent sysvar, ...also]
 * (with each owner's token accounts read before), and the accounts of `also` by address.
 */
export async function statesFromBatch(
  batch: readonly (RawAccount | null)[],
  layout: { mints: readonly Address[]; owners: readonly Address[]; also: readonly Address[] },
  tokenAccounts: readonly (readonly TokenAccountState[])[],
): Promise<{ states: WalletState[]; also: Map<Address, RawAccount | null> }> {
  const { owners } = layout;
  const mints = new Map<Address, MintState>();
  const decoded = await mapInSlices(batch.slice(0, layout.mints.length), (account) => (account ? decodeMint(account) : null));
  decoded.forEach((mint, i) => {
    if (mint) mints.set(layout.mints[i]!, mint);
  });
  const ownerAccounts = batch.slice(layout.mints.length, layout.mints.length + owners.length);
  const rentAccount = batch[layout.mints.length + owners.length];
  const rent = (rentAccount && decodeRent(rentAccount.data)) ?? DEFAULT_RENT;
  const alsoAccounts = batch.slice(layout.mints.length + owners.length + 1);
  return {
    states: owners.map((owner, i) => ({
      owner,
      ownerLamports: ownerAccounts[i]?.lamports ?? 0n,
      accounts: tokenAccounts[i]!.filter((a) => a.owner === owner),
      mints,
      rent,
    })),
    also: new Map(layout.also.map((address, i) => [address, alsoAccounts[i] ?? null])),
  };
}

export async function readWallets(chain: ChainAdapter, owners: readonly Address[], alsoRead: readonly Address[], deadline: number): Promise<WalletsRead> {
  const tokenAccounts = await mapConcurrently(owners, OWNER_READS_AT_ONCE, async (owner) => {
    const [classic, token2022] = await Promise.all([
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, deadline),
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_2022_PROGRAM_ADDRESS }, deadline),
    ]);
    return decodeAccounts([...classic, ...token2022]);
  });
  const mintAddresses = [...new Set(tokenAccounts.flat().map((a) => a.mint))];
  const ownerSet = new Set(owners);
  const also = [...new Set(alsoRead)].filter((a) => !ownerSet.has(a) && a !== RENT_SYSVAR);
  const batch = await chain.getAccounts([...mintAddresses, ...owners, RENT_SYSVAR, ...also], deadline);
  const read = await statesFromBatch(batch, { mints: mintAddresses, owners, also }, tokenAccounts);
  const byAddress = new Map<Address, RawAccount | null>(owners.map((owner, i) => [owner, batch[mintAddresses.length + i] ?? null]));
  for (const [address, account] of read.also) byAddress.set(address, account);
  return {
    states: read.states,
    // Asked for by address, owners included (a fee payer or destination may be one of them).
    also: new Map(alsoRead.map((address) => [address, byAddress.get(address) ?? null])),
  };
}
