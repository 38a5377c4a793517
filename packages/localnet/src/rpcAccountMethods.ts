/** Account and token queries. */
import { getAddressEncoder, type Address } from '@solana/kit';
import {
  dataSliceOption,
  encodeAccount,
  encodingOption,
  matchesFilters,
  mintAmounts,
  parseFilters,
  readAccount,
  type AccountEncoding,
  type RawAccount,
} from './accounts.ts';
import type { Chain } from './chain.ts';
import { decodeMint, decodeTokenAccount, isTokenProgram, uiTokenAmount } from './jsonParsed.ts';
import {
  addressParam,
  arrayParam,
  boolOption,
  checkContext,
  commitmentOption,
  configParam,
  refuseExtraParams,
  requireParam,
  u64Param,
} from './params.ts';
import { withContext, type RpcMethodTable } from './rpcContext.ts';
import { invalidParam, invalidParams } from './rpcErrors.ts';

const addressEncoder = getAddressEncoder();
const MAX_MULTIPLE_ACCOUNTS = 100;
/** getTokenLargestAccounts answers the top 20, as the validator does. */
const MAX_LARGEST_TOKEN_ACCOUNTS = 20;
/** So does getLargestAccounts (the validator's NUM_LARGEST_ACCOUNTS). */
const NUM_LARGEST_ACCOUNTS = 20;
/** Largest account the runtime allows (MAX_PERMITTED_DATA_LENGTH). */
const MAX_ACCOUNT_DATA = 10 * 1024 * 1024;

/** An account as a request sees it: a token-program account from the chain's copy of its last write. */
const currentAccount = (chain: Chain, address: Address): RawAccount | null => chain.tokenIndex.written(address) ?? readAccount(chain, address);

function programAccounts(chain: Chain, program: Address): { pubkey: Address; account: RawAccount }[] {
  return chain.svm.getProgramAccounts(program).map((a) => ({
    pubkey: a.address,
    account: { lamports: a.lamports, data: new Uint8Array(a.data), owner: a.programAddress, executable: a.executable },
  }));
}

/** The token-account field getTokenAccountsByOwner / getTokenAccountsByDelegate match the address against. */
type TokenAccountHolder = 'owner' | 'delegate';

/**
 * The token accounts (SPL Token or Token-2022, initialized or frozen) whose owner / delegate is
 * params[0], narrowed by params[1]: `{ mint }` (that mint's program) or `{ programId }`.
 */
function tokenAccountsOf(chain: Chain, holder: TokenAccountHolder, params: unknown[]): { pubkey: Address; account: RawAccount }[] {
  const wanted = addressParam(requireParam(params, 0, holder));
  const filter = requireParam(params, 1, 'token account filter') as { mint?: unknown; programId?: unknown };
  if (typeof filter !== 'object' || filter === null || (filter.mint === undefined) === (filter.programId === undefined)) {
    throw invalidParams('Invalid params: the filter must be either { mint } or { programId }.');
  }
  let program: string;
  let mint: Address | null = null;
  if (filter.mint !== undefined) {
    mint = addressParam(filter.mint);
    const mintAccount = readAccount(chain, mint);
    if (!mintAccount) throw invalidParam('could not find mint');
    if (!isTokenProgram(mintAccount.owner)) throw invalidParam('not a Token mint');
    program = mintAccount.owner;
  } else {
    program = addressParam(filter.programId);
    if (!isTokenProgram(program)) throw invalidParam('unrecognized Token program id');
  }
  const mintBytes = mint === null ? null : addressEncoder.encode(mint);
  return chain.tokenIndex.heldBy(holder, wanted).flatMap(({ address, account }) => {
    if (account.owner !== program) return [];
    // The mint sits in the first 32 bytes of every token account: compared without decoding it.
    return mintBytes === null || account.data.subarray(0, 32).every((byte, i) => byte === mintBytes[i]) ? [{ pubkey: address, account }] : [];
  });
}

/**
 * getTokenAccountsByOwner / getTokenAccountsByDelegate: [address, filter, config?], where config
 * takes commitment, minContextSlot, encoding (jsonParsed included) and dataSlice.
 */
function tokenAccountsBy(chain: Chain, holder: TokenAccountHolder, params: unknown[]) {
  refuseExtraParams(params, 2, 3);
  const config = configParam(params, 2);
  checkContext(chain, config);
  const encoding = encodingOption(config, 'binary');
  const slice = dataSliceOption(config);
  const value = tokenAccountsOf(chain, holder, params).map(({ pubkey, account }) => ({
    pubkey,
    account: encodeAccount(chain, account, encoding, slice),
  }));
  return withContext(chain, value);
}

/** getLargestAccounts' `filter` (`RpcLargestAccountsFilter`). */
function largestAccountsFilter(value: unknown): 'circulating' | 'nonCirculating' | null {
  if (value === undefined || value === null) return null;
  if (value === 'circulating' || value === 'nonCirculating') return value;
  throw invalidParams(`Invalid params: unknown variant \`${String(value)}\`, expected \`circulating\` or \`nonCirculating\`.`);
}

export function accountMethods(chain: Chain): RpcMethodTable {
  const encoded = (account: RawAccount | null, encoding: AccountEncoding, config: Record<string, unknown>) =>
    account ? encodeAccount(chain, account, encoding, dataSliceOption(config)) : null;

  return {
    getAccountInfo(params) {
      const address = addressParam(requireParam(params, 0, 'address'));
      const config = configParam(params, 1);
      checkContext(chain, config);
      return withContext(chain, encoded(currentAccount(chain, address), encodingOption(config, 'binary'), config));
    },

    getMultipleAccounts(params) {
      const addresses = arrayParam(requireParam(params, 0, 'addresses'), 'addresses', MAX_MULTIPLE_ACCOUNTS).map(addressParam);
      const config = configParam(params, 1);
      checkContext(chain, config);
      const encoding = encodingOption(config, 'base64');
      return withContext(chain, addresses.map((address) => encoded(currentAccount(chain, address), encoding, config)));
    },

    getBalance(params) {
      const address = addressParam(requireParam(params, 0, 'address'));
      checkContext(chain, configParam(params, 1));
      return withContext(chain, chain.balanceOf(address));
    },

    getMinimumBalanceForRentExemption(params) {
      const size = u64Param(params[0] ?? 0, 'data length');
      checkContext(chain, configParam(params, 1));
      if (size > BigInt(MAX_ACCOUNT_DATA)) throw invalidParams(`Invalid params: data length must be at most ${MAX_ACCOUNT_DATA}.`);
      return chain.svm.minimumBalanceForRentExemption(size);
    },

    getProgramAccounts(params) {
      const program = addressParam(requireParam(params, 0, 'program id'));
      const config = configParam(params, 1);
      checkContext(chain, config);
      const encoding = encodingOption(config, 'binary');
      const filters = parseFilters(config.filters);
      const slice = dataSliceOption(config);
      const value = programAccounts(chain, program)
        .filter(({ account }) => matchesFilters(account.data, filters))
        .map(({ pubkey, account }) => ({ pubkey, account: encodeAccount(chain, account, encoding, slice) }));
      return boolOption(config, 'withContext', false) ? withContext(chain, value) : value;
    },

    getTokenAccountsByOwner(params) {
      return tokenAccountsBy(chain, 'owner', params);
    },

    getTokenAccountsByDelegate(params) {
      return tokenAccountsBy(chain, 'delegate', params);
    },

    /** [config?]: { commitment?, filter?: 'circulating' | 'nonCirculating', sortResults? }. */
    getLargestAccounts(params) {
      refuseExtraParams(params, 0, 1);
      const config = configParam(params, 0);
      commitmentOption(config);
      const filter = largestAccountsFilter(config.filter);
      boolOption(config, 'sortResults', true);
      // The validator leaves out (or keeps only) the non-circulating accounts: those of its
      // hard-coded non-circulating lists and stake accounts locked up by their custodian. This chain
      // has none of them (getSupply reports nonCirculating 0), so every account circulates.
      const accounts = filter === 'nonCirculating' ? [] : chain.largestAccounts(NUM_LARGEST_ACCOUNTS);
      return withContext(chain, accounts);
    },

    getTokenAccountBalance(params) {
      const address = addressParam(requireParam(params, 0, 'token account'));
      checkContext(chain, configParam(params, 1));
      const account = readAccount(chain, address);
      const token = account ? decodeTokenAccount(account.data, account.owner) : null;
      const amounts = token ? mintAmounts(chain, token.mint) : null;
      if (!token || amounts === null) throw invalidParam('not a Token account');
      return withContext(chain, uiTokenAmount(token.amount, amounts));
    },

    getTokenLargestAccounts(params) {
      const mintAddress = addressParam(requireParam(params, 0, 'mint'));
      checkContext(chain, configParam(params, 1));
      const account = readAccount(chain, mintAddress);
      const mint = account ? decodeMint(account.data, account.owner) : null;
      if (!account || !mint) throw invalidParam('not a Token mint');
      const holders = programAccounts(chain, account.owner as Address).flatMap(({ pubkey, account: holder }) => {
        const token = decodeTokenAccount(holder.data, holder.owner);
        return token && token.mint === mintAddress ? [{ address: pubkey, amount: token.amount }] : [];
      });
      holders.sort((a, b) => (a.amount === b.amount ? 0 : a.amount > b.amount ? -1 : 1));
      const amounts = mintAmounts(chain, mintAddress)!;
      return withContext(
        chain,
        holders.slice(0, MAX_LARGEST_TOKEN_ACCOUNTS).map(({ address, amount }) => ({ address, ...uiTokenAmount(amount, amounts) })),
      );
    },

    getTokenSupply(params) {
      const address = addressParam(requireParam(params, 0, 'mint'));
      checkContext(chain, configParam(params, 1));
      const account = readAccount(chain, address);
      const mint = account ? decodeMint(account.data, account.owner) : null;
      if (!mint) throw invalidParam('not a Token mint');
      return withContext(chain, uiTokenAmount(mint.supply, mintAmounts(chain, address)!));
    },
  };
}
