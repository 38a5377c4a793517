/**
 * The burn operation: read the chain, plan, simulate for the compute budget, sign, send and
 * confirm. Every 400 is decided before anything is signed; once a transaction is sent the answer
 * always carries its signature.
 */
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import type { ChainAdapter, BlockhashLifetime, SendOutcome } from '../chain/chainAdapter.ts';
import { customErrorCode, describeTransactionError, tokenErrorCode } from '../chain/transactionError.ts';
import { CinderError } from '../errors.ts';
import { MAX_COMPUTE_UNIT_LIMIT, planBurn, type BurnPlan, type PlannedTransaction } from './planBurn.ts';
import { computeUnitPriceFor, formatSol, priorityFeeCharged } from './priorityFee.ts';
import { decodeMint, decodeTokenAccount, type MintState, type TokenAccountState } from './tokenState.ts';
import { describeBurn } from './describeBurn.ts';
import type { SentTransactionLog } from '../store/sentTransactions.ts';

export const BASE_FEE_LAMPORTS_PER_SIGNATURE = 5000n;

export interface BurnRequest {
  mint: Address;
  priorityFeeLamports: bigint;
  signer: KeyPairSigner;
}

export type BurnStatus = 'success' | 'failed' | 'pending';

export interface BurnTransactionReport {
  signature: Signature;
  status: BurnStatus;
  slot: bigint | null;
  closedAccounts: Address[];
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
  error: string | null;
}

export interface BurnResult {
  status: BurnStatus;
  message: string;
  signatures: Signature[];
  slot: bigint | null;
  owner: Address;
  mint: Address;
  tokenProgram: Address;
  decimals: number;
  /** What actually happened on chain (only transactions that landed without error count). */
  burnedAmount: bigint;
  closedAccounts: Address[];
  reclaimedLamports: bigint;
  feeLamports: bigint;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  transactions: BurnTransactionReport[];
  unwrapsSol: boolean;
}

export interface BurnDeps {
  chain: ChainAdapter;
  burnDeadlineMs: number;
  sentTransactions: SentTransactionLog;
}

/** Simulated units + 10 %, and at least 1,000 CU of headroom. */
export function computeUnitLimitFor(unitsConsumed: number): number {
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(Math.ceil(unitsConsumed * 1.1), unitsConsumed + 1000));
}

function withComputeBudget(limit: number, price: bigint, instructions: Instruction[]): Instruction[] {
  return [getSetComputeUnitLimitInstruction({ units: limit }), getSetComputeUnitPriceInstruction({ microLamports: price }), ...instructions];
}

function simulationFailure(err: unknown, owner: Address): CinderError {
  const reason = describeTransactionError(err);
  if (err === 'InsufficientFundsForFee' || err === 'AccountNotFound') {
    return new CinderError('INSUFFICIENT_SOL_FOR_FEE', `${owner} does not hold enough SOL to pay the transaction fee. Nothing was sent.`);
  }
  const custom = customErrorCode(err);
  if (custom === tokenErrorCode('AccountFrozen')) {
    return new CinderError('ACCOUNT_FROZEN', 'A token account of this mint is frozen. Nothing was sent.');
  }
  return new CinderError('TRANSACTION_REJECTED', `The burn transaction would fail on chain (${reason}). Nothing was sent.`);
}

interface PreparedTransaction {
  planned: PlannedTransaction;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
  feeLamports: bigint;
}

export function createBurnTokens({ chain, burnDeadlineMs, sentTransactions }: BurnDeps) {
  async function loadState(owner: Address, mintAddress: Address, deadline: number) {
    const [mintResult, accountsResult, balance, lifetime] = await Promise.allSettled([
      chain.getAccounts([mintAddress], deadline),
      chain.getTokenAccountsByOwner(owner, mintAddress, deadline),
      chain.getBalance(owner, deadline),
      chain.getLatestBlockhash(deadline),
    ]);
    if (mintResult.status === 'rejected') throw mintResult.reason;
    const mintAccount = mintResult.value[0];
    if (!mintAccount) throw new CinderError('MINT_NOT_FOUND', `No account exists at mint address ${mintAddress}. Nothing was sent.`);
    const mint = decodeMint(mintAccount);
    if (!mint) {
      throw new CinderError('INVALID_MINT', `${mintAddress} is not a mint of the SPL Token or Token-2022 program. Nothing was sent.`, {
        errors: [{ field: 'mint', message: 'is not a token mint' }],
      });
    }
    for (const result of [accountsResult, balance, lifetime]) if (result.status === 'rejected') throw result.reason;
    const accounts = (accountsResult as PromiseFulfilledResult<Awaited<ReturnType<ChainAdapter['getTokenAccountsByOwner']>>>).value
      .map(decodeTokenAccount)
      .filter((a): a is TokenAccountState => a !== null);
    return {
      mint,
      accounts,
      balance: (balance as PromiseFulfilledResult<bigint>).value,
      lifetime: (lifetime as PromiseFulfilledResult<BlockhashLifetime>).value,
    };
  }

  /** Simulates each planned transaction to size its compute budget; any failure is a 400 before sending. */
  async function prepare(plan: BurnPlan, owner: Address, lifetime: BlockhashLifetime, priorityFeeLamports: bigint, deadline: number) {
    const count = BigInt(plan.transactions.length);
    return Promise.all(
      plan.transactions.map(async (planned, index): Promise<PreparedTransaction> => {
        const message = pipe(
          createTransactionMessage({ version: 'legacy' }),
          (m) => setTransactionMessageFeePayer(owner, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
          (m) => appendTransactionMessageInstructions(withComputeBudget(MAX_COMPUTE_UNIT_LIMIT, 0n, planned.instructions), m),
        );
        const simulation = await chain.simulate(getBase64EncodedWireTransaction(compileTransaction(message)), deadline);
        if (simulation.err) throw simulationFailure(simulation.err, owner);
        const computeUnitLimit =
          simulation.unitsConsumed === null ? planned.computeUnitEstimate : computeUnitLimitFor(simulation.unitsConsumed);
        // The total priority fee is shared between the transactions; the first takes the remainder.
        const share = priorityFeeLamports / count + (index === 0 ? priorityFeeLamports % count : 0n);
        const computeUnitPriceMicroLamports = computeUnitPriceFor(share, computeUnitLimit);
        return {
          planned,
          computeUnitLimit,
          computeUnitPriceMicroLamports,
          feeLamports: BASE_FEE_LAMPORTS_PER_SIGNATURE + priorityFeeCharged(computeUnitPriceMicroLamports, computeUnitLimit),
        };
      }),
    );
  }

  async function signAndSend(prepared: PreparedTransaction, signer: KeyPairSigner, lifetime: BlockhashLifetime, deadline: number) {
    const message = pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) =>
        appendTransactionMessageInstructions(
          withComputeBudget(prepared.computeUnitLimit, prepared.computeUnitPriceMicroLamports, prepared.planned.instructions),
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const signature = getSignatureFromTransaction(signed);
    let outcome: SendOutcome | 'not-sent';
    try {
      // Recorded first, so GET /api/transactions can say `pending` for it from any instance. Best
      // effort: without the record that endpoint answers 404 until the transaction lands.
      await sentTransactions.record(signature, lifetime.lastValidBlockHeight).catch(() => undefined);
      outcome = await chain.sendAndConfirm(
        { wire: getBase64EncodedWireTransaction(signed), signature, lastValidBlockHeight: lifetime.lastValidBlockHeight },
        deadline,
      );
    } catch (error) {
      if (error instanceof CinderError && error.code === 'RPC_UNAVAILABLE') outcome = 'not-sent';
      else throw error;
    }
    return { prepared, signature, outcome };
  }

  return async function burnTokens({ mint: mintAddress, priorityFeeLamports, signer }: BurnRequest): Promise<BurnResult> {
    const deadline = Date.now() + burnDeadlineMs;
    const owner = signer.address;
    const { mint, accounts, balance, lifetime } = await loadState(owner, mintAddress, deadline);
    const plan = planBurn({ owner, mint, accounts });
    const prepared = await prepare(plan, owner, lifetime, priorityFeeLamports, deadline);

    const totalFee = prepared.reduce((sum, p) => sum + p.feeLamports, 0n);
    if (balance < totalFee) {
      throw new CinderError(
        'INSUFFICIENT_SOL_FOR_FEE',
        `${owner} holds ${formatSol(balance)} SOL but the burn needs ${formatSol(totalFee)} SOL for fees. Nothing was sent.`,
        { extensions: { balanceLamports: balance.toString(), requiredLamports: totalFee.toString() } },
      );
    }

    const sent = await Promise.all(prepared.map((p) => signAndSend(p, signer, lifetime, deadline)));
    if (sent.every((s) => s.outcome === 'not-sent')) {
      throw new CinderError('RPC_UNAVAILABLE', 'The Solana RPC node could not be reached to send the burn; nothing was sent. Try again shortly.', {
        headers: { 'retry-after': '5' },
      });
    }
    return summarize(owner, mint, plan, sent);
  };
}

function reportOf(sent: { prepared: PreparedTransaction; signature: Signature; outcome: SendOutcome | 'not-sent' }): BurnTransactionReport {
  const { prepared, signature, outcome } = sent;
  const base = {
    signature,
    closedAccounts: prepared.planned.closedAccounts,
    computeUnitLimit: prepared.computeUnitLimit,
    computeUnitPriceMicroLamports: prepared.computeUnitPriceMicroLamports,
  };
  if (outcome === 'not-sent') return { ...base, status: 'failed', slot: null, feeLamports: 0n, error: 'the RPC node could not be reached; not sent' };
  switch (outcome.kind) {
    case 'landed':
      return {
        ...base,
        status: outcome.err ? 'failed' : 'success',
        slot: outcome.slot,
        // A transaction that lands pays its fee even when it fails.
        feeLamports: prepared.feeLamports,
        error: outcome.err ? describeTransactionError(outcome.err) : null,
      };
    case 'expired':
      return { ...base, status: 'failed', slot: null, feeLamports: 0n, error: 'its blockhash expired before it landed; nothing was burned by it' };
    case 'unknown':
      return { ...base, status: 'pending', slot: null, feeLamports: 0n, error: null };
  }
}

function summarize(
  owner: Address,
  mint: MintState,
  plan: BurnPlan,
  sent: { prepared: PreparedTransaction; signature: Signature; outcome: SendOutcome | 'not-sent' }[],
): BurnResult {
  const transactions = sent.map(reportOf);
  const succeeded = sent.filter((_, i) => transactions[i]!.status === 'success').map((s) => s.prepared.planned);
  const status: BurnStatus = transactions.some((t) => t.status === 'failed')
    ? 'failed'
    : transactions.some((t) => t.status === 'pending')
      ? 'pending'
      : 'success';
  const slots = transactions.map((t) => t.slot).filter((s): s is bigint => s !== null);
  const result: Omit<BurnResult, 'message'> = {
    status,
    signatures: transactions.map((t) => t.signature),
    slot: slots.length > 0 ? slots.reduce((a, b) => (a > b ? a : b)) : null,
    owner,
    mint: mint.address,
    tokenProgram: mint.tokenProgram,
    decimals: mint.decimals,
    burnedAmount: succeeded.reduce((sum, t) => sum + t.burnedAmount, 0n),
    closedAccounts: succeeded.flatMap((t) => t.closedAccounts),
    reclaimedLamports: succeeded.reduce((sum, t) => sum + t.reclaimedLamports, 0n),
    feeLamports: transactions.reduce((sum, t) => sum + t.feeLamports, 0n),
    computeUnitLimit: transactions[0]!.computeUnitLimit,
    computeUnitPriceMicroLamports: transactions[0]!.computeUnitPriceMicroLamports,
    transactions,
    unwrapsSol: plan.unwrapsSol,
  };
  return { ...result, message: describeBurn(result, plan) };
}
