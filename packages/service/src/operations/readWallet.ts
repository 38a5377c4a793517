/**
 * The first step of the pipeline: a wallet's state from the chain, in as few RPC calls as the
 * question allows. One mint (a burn): the owner's token accounts of that mint, and one batch of
 * accounts (mint, owner wallet, Rent sysvar, sponsor, …). The whole wallet (a reclaim): the token
 * accounts of both programs, then one batch with their mints: the many-owner reader
 * (readWallets.ts) for one owner. Both decode their batch with the same stage (`statesFromBatch`).
 */
import type { Address } from '@solana/kit';
import type { ChainAdapter, RawAccount } from '../chain/types.ts';
import { CinderError } from '../errors.ts';
import { decodeMint } from '../plan/tokenState.ts';
import type { WalletState } from '../plan/actions.ts';
import { RENT_SYSVAR } from '../plan/rent.ts';
import { decodeAccounts, readWallets, statesFromBatch } from './readWallets.ts';

export interface WalletQuery {
  owner: Address;
  /** A burn: only this mint's accounts (and the mint must exist). Absent: the whole wallet. */
  mint?: Address;
  /** More addresses read in the same batch (the sponsor's wallet, a seed's own address, …). */
  alsoRead?: readonly Address[];
  /** The chain is the embedded local one: say so when a mint is not found. */
  localChain: boolean;
}

export interface WalletRead {
  state: WalletState;
  /** The accounts of `alsoRead`, by address (null: no account there). */
  also: ReadonlyMap<Address, RawAccount | null>;
}

/** Decoded a slice at a time (src/plan/slices.ts): a wallet may hold thousands of accounts. */
function mintNotFound(mint: Address, localChain: boolean): CinderError {
  return new CinderError('MINT_NOT_FOUND', { mint, localChain }, {
    errors: [{ field: 'mint', message: 'no account at this address' }],
  });
}

function checkMint(mint: Address, account: RawAccount | null, localChain: boolean): void {
  if (!account) throw mintNotFound(mint, localChain);
  if (!decodeMint(account)) {
    throw new CinderError('INVALID_MINT', { reason: 'notMint', mint }, {
      errors: [{ field: 'mint', message: 'is not a token mint' }],
    });
  }
}

export async function readWallet(chain: ChainAdapter, query: WalletQuery, deadline: number): Promise<WalletRead> {
  const { owner, mint } = query;
  const also = [...new Set(query.alsoRead ?? [])].filter((a) => a !== owner && a !== mint && a !== RENT_SYSVAR);
  if (!mint) {
    const read = await readWallets(chain, [owner], also, deadline);
    return { state: read.states[0]!, also: read.also };
  }
  // The mint is known up front: the token accounts and one batch of everything else at once.
  const [accounts, read] = await Promise.allSettled([
    chain.getTokenAccountsByOwner(owner, { mint }, deadline),
    chain.getAccounts([mint, owner, RENT_SYSVAR, ...also], deadline),
  ]);
  if (read.status === 'rejected') throw read.reason;
  // A node refuses getTokenAccountsByOwner for a mint that is not one: say that, not its error.
  checkMint(mint, read.value[0] ?? null, query.localChain);
  if (accounts.status === 'rejected') throw accounts.reason;
  const { states, also: alsoAccounts } = await statesFromBatch(read.value, { mints: [mint], owners: [owner], also }, [await decodeAccounts(accounts.value)]);
  return { state: states[0]!, also: alsoAccounts };
}
