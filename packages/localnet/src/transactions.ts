/**
 * Executing, simulating and recording transactions the way the validator's RPC does
 * (agave `rpc.rs` send_transaction / simulate_transaction), on top of LiteSVM.
 */
import {
  getAddressDecoder,
  getBase58Decoder,
  getBase64Decoder,
  isSolanaError,
  SOLANA_ERROR__TRANSACTION__SIGNATURES_MISSING,
  type Address,
  type Lamports,
  type Signature,
} from '@solana/kit';
import { FailedTransactionMetadata, type TransactionMetadata, type SimulatedTransactionInfo } from 'litesvm';
import type { Chain, InnerInstructionsJson, LoadedAddresses, ReturnDataJson, TokenBalanceJson } from './chain.ts';
import { calculateFee, readComputeBudget } from './fees.ts';
import { readAccount, type RawAccount } from './accounts.ts';
import { loadedAccountsDataSize } from './loadedData.ts';
import { decodeTokenAccount, isTokenProgram, mintAmountContext, uiTokenAmount } from './jsonParsed.ts';
import { transactionErrorMessage, transactionErrorToJson, type TransactionErrorJson } from './txErrors.ts';
import { withBlockhash, type DecodedMessage, type WireTransaction } from './wire.ts';
import { withBankDurableNonces } from './nonces.ts';

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();
const addressDecoder = getAddressDecoder();

/** Errors raised while sanitizing; the RPC rejects these with -32602 "invalid transaction". */
const SANITIZE_ERRORS = new Set<TransactionErrorJson>([
  'SanitizeFailure',
  'UnsupportedVersion',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
]);

/**
 * Errors LiteSVM raises after the fee payer was validated but before execution, without charging
 * the fee or recording the transaction. Real validators commit these as fee-only transactions
 * (fee charged, error recorded), which is emulated here. MaxLoadedAccountsDataSizeExceeded is
 * what a v1 transaction that leaves its loaded-accounts-data limit unset (zero) fails with
 * while loading; agave charges it, LiteSVM 1.5 does not.
 */
const FEE_ONLY_ERRORS = new Set<TransactionErrorJson>(['InvalidProgramForExecution', 'ProgramAccountNotFound', 'MaxLoadedAccountsDataSizeExceeded']);

export interface PostSimulationAccount {
  address: Address;
  lamports: bigint;
  data: Uint8Array;
  owner: Address;
  executable: boolean;
}

export interface SimulationResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  returnData: ReturnDataJson | null;
  /** Writable accounts as the transaction left them. */
  postAccounts: PostSimulationAccount[];
  innerInstructions: InnerInstructionsJson[];
  /** The message's account keys (static, then loaded), which inner instructions index into. */
  accountKeys: string[];
  replacementBlockhash?: { blockhash: string; lastValidBlockHeight: number };
  /** The account data the transaction loads, as agave reports it (src/loadedData.ts); 0 when it was refused before loading. */
  loadedAccountsDataSize: number;
}

export type SubmitOutcome =
  | { kind: 'accepted'; signature: string }
  | { kind: 'invalid'; message: string }
  | { kind: 'signatureFailure' }
  | { kind: 'preflightFailure'; message: string; simulation: SimulationResult };

const rejected = (err: TransactionErrorJson): SimulationResult => ({
  err,
  logs: [],
  unitsConsumed: 0n,
  returnData: null,
  postAccounts: [],
  innerInstructions: [],
  accountKeys: [],
  loadedAccountsDataSize: 0,
});

function accountKeysFor(chain: Chain, message: DecodedMessage): string[] {
  const loaded = chain.resolveLoadedAddresses(message) ?? { writable: [], readonly: [] };
  return [...message.staticAccounts, ...loaded.writable, ...loaded.readonly];
}

function returnDataOf(meta: TransactionMetadata): ReturnDataJson | null {
  const returnData = meta.returnData();
  const data = returnData.data();
  if (data.length === 0) return null;
  return { programId: addressDecoder.decode(returnData.programId()), data: [base64.decode(data), 'base64'] };
}

function innerInstructionsOf(meta: TransactionMetadata): InnerInstructionsJson[] {
  return meta.innerInstructions().flatMap((inner, index) =>
    inner.length === 0
      ? []
      : [{
          index,
          instructions: inner.map((ix) => {
            const compiled = ix.instruction();
            return {
              programIdIndex: compiled.programIdIndex(),
              accounts: [...compiled.accounts()],
              data: base58.decode(compiled.data()),
              stackHeight: ix.stackHeight(),
            };
          }),
        }],
  );
}

/** LiteSVM prints the fee it charged in its Debug output only; used to cross-check ours. */
function feeReportedByLiteSvm(result: TransactionMetadata | FailedTransactionMetadata): bigint | null {
  const matches = [...result.toString().matchAll(/fee: (\d+)/g)];
  const last = matches.at(-1);
  return last ? BigInt(last[1]!) : null;
}

/**
 * LiteSVM's JS wrapper throws (instead of reporting SignatureFailure) when sigverify is on and a
 * signature slot is all zeros (kit decodes that as "not signed").
 */
const isUnsignedError = (err: unknown) => isSolanaError(err, SOLANA_ERROR__TRANSACTION__SIGNATURES_MISSING);

/**
 * LiteSVM's simulation of `wire`, with signature verification on or off. `reportLoadedSize`: only
 * simulateTransaction answers the loaded account data (a read of every key); a send's preflight
 * reports 0 for it, as nothing reads it there.
 */
function runSimulation(chain: Chain, wire: WireTransaction, sigVerify: boolean, reportLoadedSize: boolean): SimulationResult {
  let result: SimulatedTransactionInfo | FailedTransactionMetadata;
  if (!sigVerify) chain.svm.withSigverify(false);
  try {
    result = withBankDurableNonces(chain.svm, wire.message.staticAccounts, wire.message.lifetimeToken, chain.latestBlockhash('processed').blockhash, () =>
      chain.svm.simulateTransaction(wire.transaction),
    );
  } catch (err) {
    if (sigVerify && isUnsignedError(err)) return rejected('SignatureFailure');
    throw err;
  } finally {
    if (!sigVerify) chain.svm.withSigverify(true);
  }
  const accountKeys = accountKeysFor(chain, wire.message);
  const loadedSize = reportLoadedSize ? loadedAccountsDataSize(chain, wire.message, accountKeys) : 0;
  if (result instanceof FailedTransactionMetadata) {
    const meta = result.meta();
    return {
      err: transactionErrorToJson(result),
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData: returnDataOf(meta),
      postAccounts: [],
      innerInstructions: innerInstructionsOf(meta),
      accountKeys,
      loadedAccountsDataSize: loadedSize,
    };
  }
  const meta = result.meta();
  return {
    err: null,
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    returnData: returnDataOf(meta),
    postAccounts: result.postAccounts().map((a) => ({
      address: a.address,
      lamports: a.lamports,
      data: new Uint8Array(a.data),
      owner: a.programAddress,
      executable: a.executable,
    })),
    innerInstructions: innerInstructionsOf(meta),
    accountKeys,
    loadedAccountsDataSize: loadedSize,
  };
}

export function simulateTransaction(
  chain: Chain,
  wire: WireTransaction,
  options: { sigVerify: boolean; replaceRecentBlockhash: boolean },
): SimulationResult {
  if (options.replaceRecentBlockhash) {
    const latest = chain.latestBlockhash();
    const replaced = withBlockhash(wire, latest.blockhash);
    return { ...simulateChecked(chain, replaced, options.sigVerify), replacementBlockhash: latest };
  }
  return simulateChecked(chain, wire, options.sigVerify);
}

function simulateChecked(chain: Chain, wire: WireTransaction, sigVerify: boolean): SimulationResult {
  if (!chain.isLifetimeValid(wire.message)) return rejected('BlockhashNotFound');
  if (chain.records.get(wire.signature)) return rejected('AlreadyProcessed');
  return runSimulation(chain, wire, sigVerify, true);
}

function writableAccountsOf(message: DecodedMessage, loaded: LoadedAddresses): string[] {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const count = message.staticAccounts.length;
  const writable = message.staticAccounts.filter((_, i) =>
    i < numSignerAccounts ? i < numSignerAccounts - numReadonlySignerAccounts : i < count - numReadonlyNonSignerAccounts,
  );
  return [...writable, ...loaded.writable];
}

/** Each key's account as LiteSVM holds it now: read once for both its balance and its token balance. */
const lamportsOf = (account: RawAccount | null) => account?.lamports ?? 0n;

function readKeys(chain: Chain, keys: readonly Address[]): (RawAccount | null)[] {
  return keys.map((key) => readAccount(chain, key));
}

function tokenBalances(chain: Chain, keys: readonly Address[], accounts: readonly (RawAccount | null)[]): TokenBalanceJson[] {
  // A mint among the keys is read with them (the transaction may write it); any other one this
  // transaction does not write, so its last write (the token index) stands.
  const mintAccount = (mint: Address) => {
    const index = keys.indexOf(mint);
    return index >= 0 ? accounts[index] : (chain.tokenIndex.written(mint) ?? readAccount(chain, mint));
  };
  const balances: TokenBalanceJson[] = [];
  keys.forEach((_, accountIndex) => {
    const account = accounts[accountIndex];
    if (!account || !isTokenProgram(account.owner)) return;
    const token = decodeTokenAccount(account.data, account.owner);
    if (!token) return;
    const mintStored = mintAccount(token.mint);
    const mint = mintStored ? mintAmountContext(mintStored.data, mintStored.owner, BigInt(chain.blockTime)) : null;
    if (!mint) return;
    balances.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: account.owner,
      uiTokenAmount: uiTokenAmount(token.amount, mint),
    });
  });
  return balances;
}

function preflightFailure(chain: Chain, wire: WireTransaction, simulation: SimulationResult): SimulationResult | null {
  if (!chain.isLifetimeValid(wire.message)) return rejected('BlockhashNotFound');
  if (chain.records.get(wire.signature)) return rejected('AlreadyProcessed');
  return simulation.err !== null ? simulation : null;
}

/**
 * Takes the execution of a sent transaction; true when it will run it later (the test-mode faults
 * holdSendsMs and busyCluster, which looks at the price it pays), false when it is to execute now.
 */
export type SendHold = (execute: () => void, sent: { computeUnitPrice: bigint }) => boolean;

/**
 * sendTransaction: preflight (unless skipped), then execution and recording — at once, or when
 * `hold` releases it, in whatever slot is current then (the answer is the signature either way).
 */
export function submitTransaction(chain: Chain, wire: WireTransaction, options: { skipPreflight: boolean; hold?: SendHold | undefined }): SubmitOutcome {
  if (!options.skipPreflight) {
    // Same order as the validator: sanitize, verify signatures, then simulate (whose first checks
    // are the blockhash age and the status cache).
    const simulation = runSimulation(chain, wire, true, false);
    if (simulation.err !== null && SANITIZE_ERRORS.has(simulation.err)) {
      return { kind: 'invalid', message: `invalid transaction: ${transactionErrorMessage(simulation.err)}` };
    }
    if (simulation.err === 'SignatureFailure') return { kind: 'signatureFailure' };
    const failure = preflightFailure(chain, wire, simulation);
    if (failure) {
      return {
        kind: 'preflightFailure',
        message: `Transaction simulation failed: ${transactionErrorMessage(failure.err!)}`,
        simulation: failure,
      };
    }
  }
  const runLater = () => {
    try {
      executeTransaction(chain, wire);
    } catch (err) {
      chain.logger.error({ err, signature: wire.signature }, 'localnet transaction failed to execute');
    }
  };
  const releasedLater = options.hold?.(
    () => {
      chain.tick();
      chain.enqueue(runLater);
    },
    { computeUnitPrice: readComputeBudget(wire.message).unitPrice },
  );
  if (releasedLater) return { kind: 'accepted', signature: wire.signature };
  if (chain.timing === 'instant') return executeTransaction(chain, wire);
  // The RPC sanitizes before it forwards, with or without preflight: a lookup that cannot be
  // resolved is refused now rather than dropped in the next slot.
  if (options.skipPreflight && chain.resolveLoadedAddresses(wire.message) === null) {
    return { kind: 'invalid', message: 'invalid transaction: Transaction loads an address table account that doesn\'t exist' };
  }
  chain.enqueue(runLater);
  return { kind: 'accepted', signature: wire.signature };
}

/** Executes and records a sent transaction that passed preflight (or skipped it). */
function executeTransaction(chain: Chain, wire: WireTransaction): SubmitOutcome {
  const accepted: SubmitOutcome = { kind: 'accepted', signature: wire.signature };
  // A transaction with an expired blockhash, or one that already landed, is dropped by the
  // leader: the RPC still answers with its signature, but it never lands.
  if (!chain.isLifetimeValid(wire.message) || chain.records.get(wire.signature)) return accepted;

  const message = wire.message;
  const loaded = chain.resolveLoadedAddresses(message) ?? { writable: [], readonly: [] };
  const keys = [...message.staticAccounts, ...loaded.writable, ...loaded.readonly];
  const before = readKeys(chain, keys);
  const fee = calculateFee(message);

  let result: TransactionMetadata | FailedTransactionMetadata;
  try {
    result = withBankDurableNonces(chain.svm, message.staticAccounts, message.lifetimeToken, chain.latestBlockhash('processed').blockhash, () =>
      chain.svm.sendTransaction(wire.transaction),
    );
  } catch (err) {
    if (isUnsignedError(err)) return accepted; // dropped by sigverify, like a bad signature
    throw err;
  }
  const err = result instanceof FailedTransactionMetadata ? transactionErrorToJson(result) : null;
  const meta = result instanceof FailedTransactionMetadata ? result.meta() : result;
  let chargedFee = fee;
  const includedByLiteSvm = err === null || (err !== 'AlreadyProcessed' && chain.svm.getTransaction(wire.signature as Signature) !== null);
  if (includedByLiteSvm) {
    const reported = feeReportedByLiteSvm(result);
    if (reported !== null && reported !== fee) {
      chain.logger.warn({ signature: wire.signature, computed: fee.toString(), charged: reported.toString() }, 'localnet fee formula disagrees with LiteSVM');
      chargedFee = reported;
    }
  } else if (err !== null && FEE_ONLY_ERRORS.has(err)) {
    chargeFee(chain, message.staticAccounts[0]!, fee);
  } else if (err !== null && SANITIZE_ERRORS.has(err)) {
    return { kind: 'invalid', message: `invalid transaction: ${transactionErrorMessage(err)}` };
  } else {
    return accepted; // never landed: signature failure, unpayable fee, …
  }

  const budget = readComputeBudget(message);
  const writableAccounts = writableAccountsOf(message, loaded);
  const after = readKeys(chain, keys);
  chain.land(
    {
      signature: wire.signature,
      slot: chain.slot,
      blockTime: chain.blockTime,
      err,
      fee: chargedFee,
      preBalances: before.map(lamportsOf),
      postBalances: after.map(lamportsOf),
      preTokenBalances: tokenBalances(chain, keys, before),
      postTokenBalances: tokenBalances(chain, keys, after),
      logs: includedByLiteSvm ? meta.logs() : [],
      computeUnitsConsumed: includedByLiteSvm ? meta.computeUnitsConsumed() : 0n,
      innerInstructions: includedByLiteSvm ? innerInstructionsOf(meta) : [],
      returnData: includedByLiteSvm ? returnDataOf(meta) : null,
      loadedAddresses: loaded,
      wire,
      computeUnitPrice: budget.unitPrice,
      writableAccounts,
    },
    writableAccounts,
    keys,
  );
  return accepted;
}

function chargeFee(chain: Chain, payer: Address, fee: bigint): void {
  const account = chain.svm.getAccount(payer);
  if (!account.exists) return;
  chain.svm.setAccount({ ...account, lamports: (account.lamports - fee) as Lamports });
}

/** getFeeForMessage: null when the blockhash is outside the window, as on the validator. */
export function feeForMessage(chain: Chain, message: DecodedMessage): bigint | null {
  return chain.isLifetimeValid(message) ? calculateFee(message) : null;
}
