/**
 * The account data a transaction loads, as agave counts it (SIMD-0186) and reports it in
 * simulateTransaction's `loadedAccountsDataSize`: every account key once, at its data length plus
 * a 64-byte base (an account that does not exist counts the base), plus, for each instruction's
 * program owned by the upgradeable loader, its programdata account the same way. Clients size a
 * v1 transaction's loaded-accounts-data limit from it.
 *
 * LiteSVM 1.5 enforces a smaller count (it leaves programdata out), so a limit sized from this
 * number is never too small for this chain, and is the size mainnet needs.
 */
import { getAddressDecoder, type Address } from '@solana/kit';
import type { Chain } from './chain.ts';
import type { DecodedMessage } from './wire.ts';

const TRANSACTION_ACCOUNT_BASE_SIZE = 64;
const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
/** UpgradeableLoaderState::Program: a u32 tag (2), then the programdata address. */
const PROGRAM_STATE_TAG = 2;
const addressDecoder = getAddressDecoder();

function accountSize(chain: Chain, key: Address): number {
  // A token program's account as last written (src/tokenIndex.ts) without asking LiteSVM again.
  const indexed = chain.tokenIndex.written(key);
  if (indexed) return TRANSACTION_ACCOUNT_BASE_SIZE + indexed.data.length;
  const account = chain.svm.getAccount(key);
  return TRANSACTION_ACCOUNT_BASE_SIZE + (account.exists ? account.data.length : 0);
}

function programDataOf(chain: Chain, program: Address): Address | null {
  const account = chain.svm.getAccount(program);
  if (!account.exists || account.programAddress !== UPGRADEABLE_LOADER || account.data.length < 36) return null;
  if (new DataView(account.data.buffer, account.data.byteOffset, 4).getUint32(0, true) !== PROGRAM_STATE_TAG) return null;
  return addressDecoder.decode(account.data.subarray(4, 36));
}

export function loadedAccountsDataSize(chain: Chain, message: DecodedMessage, keys: readonly string[]): number {
  let total = 0;
  for (const key of new Set(keys)) total += accountSize(chain, key as Address);
  // A program index out of range (a malformed message, which fails to sanitize) names no program.
  const programs = new Set(message.instructions.flatMap((ix) => message.staticAccounts[ix.programAddressIndex] ?? []));
  for (const program of programs) {
    const programData = programDataOf(chain, program);
    if (programData && !keys.includes(programData)) total += accountSize(chain, programData);
  }
  return total;
}
