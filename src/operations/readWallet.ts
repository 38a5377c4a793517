/**
 * The first step of the pipeline: a wallet's state from the chain, in as few RPC calls as the
 * question allows. One mint (a burn): the owner's token accounts of that mint, and one batch of
 * accounts (mint, owner wallet, Rent sysvar, sponsor, …). The whole wallet (a reclaim): the token
 * accounts of both programs, then one batch with their mints.
 */
import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { ChainAdapter, RawAccount } from '../chain/chainAdapter.ts';
import { CinderError } from '../errors.ts';
import { decodeMint, decodeTokenAccount, TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState } from '../plan/tokenState.ts';
import type { WalletState } from '../plan/actions.ts';
import { decodeRent, DEFAULT_RENT, RENT_SYSVAR } from '../plan/rent.ts';
import { mapInSlices } from '../plan/slices.ts';

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
export async function decodeAccounts(raw: readonly RawAccount[]): Promise<TokenAccountState[]> {
  return (await mapInSlices(raw, decodeTokenAccount)).filter((a): a is TokenAccountState => a !== null);
}

function mintNotFound(mint: Address, localChain: boolean): CinderError {
  const hint = localChain
    ? ' Cinder is running on its embedded local chain (no SOLANA_RPC_URL set), which only has the mints created on it; set SOLANA_RPC_URL to use a real cluster.'
    : '';
  return new CinderError('MINT_NOT_FOUND', `No account exists at mint address ${mint}. Nothing was sent.${hint}`, {
    errors: [{ field: 'mint', message: 'no account at this address' }],
  });
}

function checkMint(mint: Address, account: RawAccount | null, localChain: boolean): void {
  if (!account) throw mintNotFound(mint, localChain);
  if (!decodeMint(account)) {
    throw new CinderError('INVALID_MINT', `${mint} is not a mint of the SPL Token or Token-2022 program. Nothing was sent.`, {
      errors: [{ field: 'mint', message: 'is not a token mint' }],
    });
  }
}

export async function readWallet(chain: ChainAdapter, query: WalletQuery, deadline: number): Promise<WalletRead> {
  const { owner, mint } = query;
  const also = [...new Set(query.alsoRead ?? [])].filter((a) => a !== owner && a !== mint && a !== RENT_SYSVAR);

  let tokenAccounts: TokenAccountState[];
  let mintAddresses: Address[];
  let batch: (RawAccount | null)[];
  if (mint) {
    // The mint is known up front: the token accounts and one batch of everything else at once.
    const [accounts, read] = await Promise.allSettled([
      chain.getTokenAccountsByOwner(owner, { mint }, deadline),
      chain.getAccounts([mint, owner, RENT_SYSVAR, ...also], deadline),
    ]);
    if (read.status === 'rejected') throw read.reason;
    // A node refuses getTokenAccountsByOwner for a mint that is not one: say that, not its error.
    mintAddresses = [mint];
    batch = read.value;
    checkMint(mint, batch[0] ?? null, query.localChain);
    if (accounts.status === 'rejected') throw accounts.reason;
    tokenAccounts = await decodeAccounts(accounts.value);
  } else {
    const [classic, token2022] = await Promise.all([
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, deadline),
      chain.getTokenAccountsByOwner(owner, { programId: TOKEN_2022_PROGRAM_ADDRESS }, deadline),
    ]);
    tokenAccounts = await decodeAccounts([...classic, ...token2022]);
    mintAddresses = [...new Set(tokenAccounts.map((a) => a.mint))];
    batch = await chain.getAccounts([...mintAddresses, owner, RENT_SYSVAR, ...also], deadline);
  }

  // One layout in both cases: the mints first (one for a burn), then owner, rent, also.
  const mintAccounts = batch.slice(0, mintAddresses.length);
  const [ownerAccount, rentAccount, ...alsoAccounts] = batch.slice(mintAddresses.length);

  const mints = new Map<Address, MintState>();
  const decodedMints = await mapInSlices(mintAccounts, (account) => (account ? decodeMint(account) : null));
  decodedMints.forEach((decoded, i) => {
    if (decoded) mints.set(mintAddresses[i]!, decoded);
  });

  return {
    state: {
      owner,
      ownerLamports: ownerAccount?.lamports ?? 0n,
      accounts: tokenAccounts.filter((a) => a.owner === owner),
      mints,
      rent: (rentAccount && decodeRent(rentAccount.data)) ?? DEFAULT_RENT,
    },
    also: new Map(also.map((address, i) => [address, alsoAccounts[i] ?? null])),
  };
}
