/**
 * Burn planning: mint + the owner's token accounts in, instructions out. Pure: no I/O, no keys,
 * no clock. Every reason a burn cannot run is decided here, before anything is signed or sent.
 */
import {
  appendTransactionMessageInstructions,
  blockhash,
  createTransactionMessage,
  getTransactionMessageSize,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getBurnCheckedInstruction, getCloseAccountInstruction } from '@solana-program/token';
import { getHarvestWithheldTokensToMintInstruction } from '@solana-program/token-2022';
import { CinderError } from '../errors.ts';
import { TOKEN_2022_PROGRAM_ADDRESS, type MintState, type TokenAccountState, type TokenProgram } from './tokenState.ts';

/** Solana's packet limit for a legacy transaction. */
export const TRANSACTION_SIZE_LIMIT = 1232;
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

/**
 * Upper bounds used only to decide how many accounts fit one transaction; the limit actually
 * requested comes from simulation. Token-2022 instructions cost more (extension parsing).
 */
const computeUnitsPerAccount = (program: TokenProgram) => (program === TOKEN_2022_PROGRAM_ADDRESS ? 30_000 : 12_000);
const COMPUTE_UNITS_FOR_HARVEST = 30_000;

export interface BurnPlanInput {
  owner: Address;
  mint: MintState;
  /** The owner's token accounts of this mint (already filtered by owner and mint). */
  accounts: readonly TokenAccountState[];
}

export interface PlannedTransaction {
  /** Burn-related instructions only; the compute-budget pair is prepended when the transaction is built. */
  instructions: Instruction[];
  closedAccounts: Address[];
  burnedAmount: bigint;
  reclaimedLamports: bigint;
  /** Upper bound of the compute units these instructions may use (for packing and as a fallback limit). */
  computeUnitEstimate: number;
}

export interface BurnPlan {
  tokenProgram: TokenProgram;
  transactions: PlannedTransaction[];
  burnedAmount: bigint;
  closedAccounts: Address[];
  reclaimedLamports: bigint;
  /** Accounts whose withheld transfer fees are harvested to the mint first. */
  harvestedAccounts: Address[];
  /** Wrapped SOL: the accounts are closed (unwrapped), never burned. */
  unwrapsSol: boolean;
}

function listOf(accounts: readonly TokenAccountState[]): string {
  return accounts.map((a) => a.address).join(', ');
}

function assertClosable(owner: Address, accounts: readonly TokenAccountState[]): void {
  const frozen = accounts.filter((a) => a.frozen);
  if (frozen.length > 0) {
    throw new CinderError(
      'ACCOUNT_FROZEN',
      `Token account ${listOf(frozen)} is frozen by the mint's freeze authority: it can be neither burned nor closed until thawed. Nothing was sent.`,
      { extensions: { accounts: frozen.map((a) => a.address) } },
    );
  }
  const foreign = accounts.filter((a) => a.closeAuthority !== null && a.closeAuthority !== owner);
  if (foreign.length > 0) {
    throw new CinderError(
      'CLOSE_AUTHORITY_NOT_OWNER',
      `Token account ${listOf(foreign)} has close authority ${foreign[0]!.closeAuthority}, not the owner: only that authority can close it. Nothing was sent.`,
      { extensions: { accounts: foreign.map((a) => a.address) } },
    );
  }
  const confidential = accounts.filter((a) => a.hasConfidentialBalance);
  if (confidential.length > 0) {
    throw new CinderError(
      'CONFIDENTIAL_BALANCE_NOT_EMPTY',
      `Token account ${listOf(confidential)} holds a confidential-transfer balance; Token-2022 only closes it once that balance is withdrawn (this needs the owner's ElGamal key). Nothing was sent.`,
      { extensions: { accounts: confidential.map((a) => a.address) } },
    );
  }
}

function instructionsFor(owner: Address, mint: MintState, account: TokenAccountState): Instruction[] {
  const config = { programAddress: mint.tokenProgram };
  const close = getCloseAccountInstruction({ account: account.address, destination: owner, owner }, config);
  // Native SOL cannot be burned: closing the account unwraps it.
  if (mint.isNative || account.amount === 0n) return [close];
  const burn = getBurnCheckedInstruction(
    { account: account.address, mint: mint.address, authority: owner, amount: account.amount, decimals: mint.decimals },
    config,
  );
  return [burn, close];
}

/** The compiled size of a transaction holding these instructions plus the compute-budget pair. */
function transactionSize(owner: Address, instructions: Instruction[]): number {
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(owner, m),
    // Any valid blockhash: size does not depend on its value.
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 0n }, m),
    (m) =>
      appendTransactionMessageInstructions(
        [getSetComputeUnitLimitInstruction({ units: MAX_COMPUTE_UNIT_LIMIT }), getSetComputeUnitPriceInstruction({ microLamports: 2n ** 63n }), ...instructions],
        m,
      ),
  );
  return getTransactionMessageSize(message);
}

function buildTransaction(owner: Address, mint: MintState, accounts: readonly TokenAccountState[]): PlannedTransaction {
  const harvest = accounts.filter((a) => a.withheldAmount > 0n).map((a) => a.address);
  const instructions = [
    ...(harvest.length > 0 ? [getHarvestWithheldTokensToMintInstruction({ mint: mint.address, sources: harvest })] : []),
    ...accounts.flatMap((account) => instructionsFor(owner, mint, account)),
  ];
  return {
    instructions,
    closedAccounts: accounts.map((a) => a.address),
    burnedAmount: mint.isNative ? 0n : accounts.reduce((sum, a) => sum + a.amount, 0n),
    reclaimedLamports: accounts.reduce((sum, a) => sum + a.lamports, 0n),
    computeUnitEstimate:
      accounts.length * computeUnitsPerAccount(mint.tokenProgram) + (harvest.length > 0 ? COMPUTE_UNITS_FOR_HARVEST : 0),
  };
}

export function planBurn({ owner, mint, accounts }: BurnPlanInput): BurnPlan {
  const mine = accounts.filter((a) => a.owner === owner && a.mint === mint.address);
  if (mine.length === 0) {
    throw new CinderError('NO_TOKEN_ACCOUNT', `${owner} has no token account of mint ${mint.address}. Nothing was sent.`);
  }
  assertClosable(owner, mine);
  // Largest balances first: if a burn ever needs several transactions, the first carries the most.
  const ordered = [...mine].sort((a, b) => (a.amount === b.amount ? a.address.localeCompare(b.address) : a.amount > b.amount ? -1 : 1));

  // Greedy packing: add accounts while the transaction stays within the size and compute limits.
  const transactions: PlannedTransaction[] = [];
  let batch: TokenAccountState[] = [];
  for (const account of ordered) {
    const candidate = buildTransaction(owner, mint, [...batch, account]);
    const fits =
      transactionSize(owner, candidate.instructions) <= TRANSACTION_SIZE_LIMIT && candidate.computeUnitEstimate <= MAX_COMPUTE_UNIT_LIMIT;
    if (fits || batch.length === 0) {
      batch.push(account);
    } else {
      transactions.push(buildTransaction(owner, mint, batch));
      batch = [account];
    }
  }
  transactions.push(buildTransaction(owner, mint, batch));

  return {
    tokenProgram: mint.tokenProgram,
    transactions,
    burnedAmount: transactions.reduce((sum, t) => sum + t.burnedAmount, 0n),
    closedAccounts: transactions.flatMap((t) => t.closedAccounts),
    reclaimedLamports: transactions.reduce((sum, t) => sum + t.reclaimedLamports, 0n),
    harvestedAccounts: ordered.filter((a) => a.withheldAmount > 0n).map((a) => a.address),
    unwrapsSol: mint.isNative,
  };
}
