/**
 * `cinder reclaim --keys-file F --fee-payer K --destination A` (many wallets in one job): every wallet of the keys
 * file reclaimed in one job, the fee payer K paying every fee, every rent going to A. Keyless: the
 * service prepares the transactions (POST /api/reclaim_rent/prepare with `owners`), this command
 * checks and signs them here with the owners' keys and the fee payer's, and relays them
 * (POST /api/transactions). The keys never leave this machine and are never printed.
 *
 * The wallets are prepared in parts (./fleetParts.ts), each part relayed as soon as it is signed
 * while the next is prepared; the relay groups of every part go out together, a bounded number at
 * a time (./fleetRelay.ts), each transaction followed until it landed or can no longer land. What
 * did nothing (refused by the service, or its blockhash expired before it landed) is prepared again
 * for its wallets and relayed again once the whole round has settled, a few rounds at most; a
 * transaction is never relayed anew once its blockhash expired, and no wallet is prepared again
 * while a transaction of it may still land.
 *
 * Resumable without paying twice: a state file (no key in it: addresses, signatures and the signed
 * transactions, which are public once sent) records each transaction before it is relayed and its
 * outcome after. A run first settles every recorded transaction whose outcome is unknown: it waits
 * until the service says it landed or can no longer land, and a transaction the service has no
 * record of is relayed again, the same signed bytes (a copy still on its way, from the interrupted
 * run, has the same signature: at most one of them lands). Only then does it prepare again, for the
 * owners not yet done: the service plans from the chain, so what landed is not in the new plan, and
 * nothing new is sent while an earlier transaction for the same accounts could still land (which
 * would fail and still cost its fee).
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { CinderApiError, type PrepareReclaimManyResponse } from '../index.ts';
import {
  addressOption,
  EXIT_CODES,
  exitCodeFor,
  mintListOption,
  priorityFeeOrAutoOption,
  quotedUnlessKey,
  sol,
  stringOption,
  table,
  wholeNumberFromEnv,
  write,
  type CommandContext,
} from './context.ts';
import { mergePreviews, partOwnersOf, partsOf, priorityFeeShareLamports, runRound } from './fleetParts.ts';
import { createRelayPool, isSettled, RELAYS_AT_ONCE, settleAll, type RelayGroup, type StateTransaction } from './fleetRelay.ts';
import { readKey, signerOfKey, type KeyFileEntry } from './keys.ts';

export const RECLAIM_MANY_HELP = `  reclaim --keys-file FILE --fee-payer KEYFILE --destination ADDRESS
                             Every wallet of FILE in one job: the fee payer (a key file) pays every fee, and every
                             account's rent goes to ADDRESS (wallets with 0 SOL are fine). Without --yes: the
                             preview. With --yes: prepared by the server, signed here (keys never leave this
                             machine), relayed; an interrupted run resumes where it stopped, never paying twice
      [--mints MINT,...]       also burn the balances of these mints and close their accounts
      [--priority-fee SOL|auto] [--allow-net-loss] [--json]
                             SOL: the job's total, each part asking for its wallets' share; auto: each part's
                             prepare resolves it from the cluster's recent fees and states it before anything is
                             signed (the preview states what auto resolves to now); never more than stated is signed
      [--state FILE]           where the job's progress is kept (default: FILE.reclaim-state.json; no key in it)
`;

const TOKEN_PROGRAMS = new Set(['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
/** Compute-budget instructions: SetComputeUnitLimit (u32 units), SetComputeUnitPrice (u64 micro-lamports per unit). */
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
/** SPL Token instructions (the same in Token-2022) a reclaim may hold: Burn, CloseAccount, BurnChecked. */
const BURN = 8;
const CLOSE_ACCOUNT = 9;
const BURN_CHECKED = 15;
/**
 * Rounds of prepare-and-relay in one run: the first, then again for the wallets whose transactions
 * did nothing (their blockhash expired before they were sent or landed). Each round follows all of
 * its transactions to their end first, so a round costs nothing twice; the bound stops a service
 * that refuses the same transactions every time from keeping the command busy.
 */
const MAX_ROUNDS = 5;

interface JobState {
  version: 1;
  feePayer: string;
  destination: string;
  transactions: StateTransaction[];
}

async function loadState(ctx: CommandContext, path: string, feePayer: string, destination: string): Promise<JobState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, feePayer, destination, transactions: [] };
    throw ctx.fail(`cannot read the state file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let state: JobState;
  try {
    state = JSON.parse(text) as JobState;
  } catch {
    throw ctx.fail(`the state file ${path} is not JSON; move it away to start a new job`);
  }
  if (state.version !== 1 || !Array.isArray(state.transactions)) throw ctx.fail(`the state file ${path} is not one cinder wrote; move it away to start a new job`);
  if (state.feePayer !== feePayer || state.destination !== destination) {
    throw ctx.fail(`the state file ${path} is of a job with another fee payer or destination (${state.feePayer} → ${state.destination}); give another --state`);
  }
  return state;
}

/** Written whole to a new file then renamed over the old one: an interruption leaves one or the other, never half. */
async function saveState(path: string, state: JobState): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/**
 * The saves of one job's state, one at a time (each writes the same temporary file), however many
 * relays settle at once: a save asked for while one is under way is made once after it, and asks
 * made before that one starts share it (it writes the state as it is when it starts).
 */
function stateSaver(path: string, state: JobState): () => Promise<void> {
  let tail: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;
  return () => {
    if (queued) return queued;
    const next = tail
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return saveState(path, state);
      });
    queued = next;
    tail = next;
    return next;
  };
}

/**
 * Checks a prepared transaction before any key signs it: its fee payer is ours, it asks for no
 * signature but the fee payer's and the owners', and it holds nothing but compute-budget
 * instructions, burns of the mints asked for, and closes that pay the destination. A service that
 * sent anything else (a transfer from the fee payer, a close to another address) is refused.
 * Returns the fee the fee payer pays for it, read from the message itself (5,000 lamports per
 * signature and the priority fee its compute budget charges): the caller holds it to what the
 * service stated and to the priority fee asked for, so the fee payer never pays more than the
 * answer it printed.
 */
export function checkTransaction(
  ctx: CommandContext,
  index: number,
  messageBytes: Transaction['messageBytes'],
  expected: { feePayer: string; destination: string; owners: ReadonlySet<string>; mints: ReadonlySet<string> },
): { feeLamports: bigint; priorityFeeLamports: bigint } {
  const refuse = (why: string) => ctx.fail(`prepared transaction ${index + 1} was not signed: ${why}`);
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  const accounts = message.staticAccounts as readonly string[];
  if (!('instructions' in message)) throw refuse(`its message is of version ${String(message.version)}, which this command does not read`);
  if (accounts[0] !== expected.feePayer) throw refuse(`its fee payer is ${accounts[0]}, not ${expected.feePayer}`);
  if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0) throw refuse('it uses address lookup tables');
  for (const signer of accounts.slice(1, message.header.numSignerAccounts)) {
    if (!expected.owners.has(signer)) throw refuse(`it asks ${signer} to sign, which is not a wallet of the keys file`);
  }
  let limit: number | null = null;
  let price = 0n;
  for (const instruction of message.instructions) {
    const program = accounts[instruction.programAddressIndex];
    const data = instruction.data ?? new Uint8Array();
    const at = (i: number) => accounts[instruction.accountIndices?.[i] ?? -1];
    if (program === COMPUTE_BUDGET) {
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      if (data[0] === SET_COMPUTE_UNIT_LIMIT && data.byteLength >= 5) limit = view.getUint32(1, true);
      else if (data[0] === SET_COMPUTE_UNIT_PRICE && data.byteLength >= 9) price = view.getBigUint64(1, true);
      continue;
    }
    if (!program || !TOKEN_PROGRAMS.has(program)) throw refuse(`it calls the program ${program}`);
    if (data[0] === CLOSE_ACCOUNT) {
      if (at(1) !== expected.destination) throw refuse(`it closes an account to ${at(1)}, not to the destination`);
    } else if (data[0] === BURN || data[0] === BURN_CHECKED) {
      if (!expected.mints.has(at(1) ?? '')) throw refuse(`it burns a mint not given with --mints (${at(1)})`);
    } else {
      throw refuse(`it holds a token instruction other than burn or close (${data[0]})`);
    }
  }
  // The runtime's default limit depends on the instructions; the service always sets one with a price.
  if (price > 0n && limit === null) throw refuse('it sets a compute-unit price without a compute-unit limit');
  // What the runtime charges: ceil(price × limit / 1e6) lamports of priority fee.
  const priorityFeeLamports = (price * BigInt(limit ?? 0) + 999_999n) / 1_000_000n;
  return { feeLamports: 5_000n * BigInt(message.header.numSignerAccounts) + priorityFeeLamports, priorityFeeLamports };
}

/** The signed transactions grouped for relay: those sharing a relayToken (at most 8, in order) go in one request. */
function relayGroups(records: readonly StateTransaction[]): RelayGroup[] {
  const groups: RelayGroup[] = [];
  for (const record of records) {
    const last = groups.at(-1);
    if (last && last.relayToken === record.relayToken) last.records.push(record);
    else groups.push({ records: [record], relayToken: record.relayToken });
  }
  return groups;
}

/**
 * CINDER_RELAYS_AT_ONCE (1 to RELAYS_AT_ONCE; unset: RELAYS_AT_ONCE): fewer relay requests at once,
 * for a service whose operator asks clients to go easy.
 */
const relaysAtOnceOf = (ctx: CommandContext): number => wholeNumberFromEnv(ctx, 'CINDER_RELAYS_AT_ONCE', RELAYS_AT_ONCE, RELAYS_AT_ONCE);

export async function reclaimManyCommand(ctx: CommandContext, keysFile: string, entries: readonly KeyFileEntry[]): Promise<number> {
  const { values } = ctx;
  const destinationText = stringOption(values, 'destination');
  if (destinationText === undefined) throw ctx.usage('--fee-payer goes with --destination ADDRESS (where every rent goes)');
  if (stringOption(values, 'fee-payer') === undefined) throw ctx.usage('--destination goes with --fee-payer KEYFILE (the key that pays every fee)');
  for (const option of ['burn', 'withdraw-excess', 'idempotency-key', 'unsigned']) {
    if (values[option] !== undefined) throw ctx.usage(`--${option} does not go with --fee-payer and --destination`);
  }
  const destination = addressOption(ctx, '--destination', destinationText);
  const mints = mintListOption(ctx, 'mints');
  const priorityFeeAsked = priorityFeeOrAutoOption(ctx, '0');
  const auto = priorityFeeAsked === 'auto';
  const priorityFeeLamports = auto ? 0n : BigInt(Math.round(priorityFeeAsked * 1e9)); // at most 9 decimals: exact
  /** The priority fee a request for `wallets` of the job asks for: "auto", or their share of the job's total (./fleetParts.ts). */
  const priorityFeeFor = (wallets: number): number | 'auto' => (auto ? 'auto' : Number(priorityFeeShareLamports(priorityFeeLamports, owners.length, wallets)) / 1e9);
  const allowNetLoss = values['allow-net-loss'] === true ? true : undefined;
  const relaysAtOnce = relaysAtOnceOf(ctx);
  const partOwners = partOwnersOf(ctx);

  // Every key is checked before anything is asked: a job must know all of its wallets, and a file
  // with several bad lines is told of every one at once (by number, never by text).
  const signers = new Map<string, KeyPairSigner>();
  const bad: string[] = [];
  for (const entry of entries) {
    const signer = entry.key === null ? null : await signerOfKey(entry.key);
    if (signer === null) bad.push(`line ${entry.line}: ${entry.why}`);
    else signers.set(signer.address, signer);
  }
  if (bad.length > 0) {
    throw ctx.fail(`${quotedUnlessKey(keysFile)} has ${bad.length} bad line${bad.length === 1 ? '' : 's'}; nothing was sent:\n  ${bad.join('\n  ')}`);
  }
  const feePayerSigner = await signerOfKey(await readKey(ctx, 'fee-payer', null));
  if (feePayerSigner === null) throw ctx.fail('the --fee-payer file does not hold a key (base58 secret key or seed, or a solana-keygen array)');
  const feePayer = feePayerSigner.address;
  const owners = [...signers.keys()];
  const client = ctx.client();
  const json = values.json === true;
  const out = (text: string) => (json ? Promise.resolve() : write(ctx.io.stdout, text));

  if (values.yes !== true) {
    // The versions its prepare takes (legacy and 0: its relay requests are sized for them), so the
    // preview states the transactions and fees that --yes then sends.
    // Previewed in the parts --yes prepares, each with its share of the priority fee: the
    // transactions and fees stated are those it then sends.
    const previews = [];
    for (const part of partsOf(owners, partOwners)) {
      previews.push(await client.previewReclaimMany({ owners: part, ...(mints ? { mints } : {}), priorityFee: priorityFeeFor(part.length), transactionVersions: ['legacy', 0] }));
    }
    const preview = mergePreviews(previews);
    if (json) {
      await write(ctx.io.stdout, `${JSON.stringify(preview, null, 2)}\n`);
      return EXIT_CODES.OK;
    }
    const rows = preview.owners.map((o) => [o.owner, String(o.summary.close + o.summary.burn_and_close + o.summary.unwrap), sol(o.reclaimableLamports)]);
    await out(table(['WALLET', 'CLOSE', 'RECLAIMABLE SOL'], rows, new Set([1, 2])));
    await out(
      `${owners.length} wallet${owners.length === 1 ? '' : 's'}: ${sol(preview.totalReclaimableLamports)} SOL to ${destination} in ${preview.transactions} ` +
        `transaction${preview.transactions === 1 ? '' : 's'}; fees ${sol(preview.feeLamports)} SOL paid by ${feePayer}; net ${sol(preview.netLamports, true)} SOL\n` +
        `${auto ? `priority fee ${sol(preview.priorityFeeLamports)} SOL (auto: from the cluster's recent fees now; --yes resolves it again as it prepares each part, and states it before signing)\n` : ''}` +
        `${preview.skippedAccounts.length > 0 ? `skipped: ${preview.skippedAccounts.length} account(s) (${[...new Set(preview.skippedAccounts.map((s) => s.code))].join(', ')})\n` : ''}` +
        'Nothing was sent. To reclaim these wallets, run the same command with --yes.\n',
    );
    return EXIT_CODES.OK;
  }

  /** The service's plan for these owners, from the chain as it is now (null: nothing left to reclaim). */
  const prepare = async (forOwners: string[]): Promise<PrepareReclaimManyResponse | null> => {
    try {
      const priorityFee = priorityFeeFor(forOwners.length);
      return await client.prepareReclaimMany({ owners: forOwners, feePayer, destination, priorityFee, ...(mints ? { mints } : {}), ...(allowNetLoss ? { allowNetLoss } : {}) });
    } catch (error) {
      if (error instanceof CinderApiError && error.code === 'NOTHING_TO_RECLAIM') return null;
      throw error;
    }
  };
  /**
   * Every prepared transaction of a part checked (checkTransaction) before any is signed, then each
   * signed here by the keys it names. The money rule, from the messages themselves: no transaction
   * charges the fee payer more than the fee stated for it, and the part's priority fees together are
   * at most what it asked for (its share of the job's total) or, with "auto", what the answer states
   * it resolved to, the figure printed for the part.
   */
  const signAll = (prepared: PrepareReclaimManyResponse, forOwners: ReadonlySet<string>): Promise<StateTransaction[]> => {
    const expected = { feePayer, destination, owners: forOwners, mints: new Set(mints ?? []) };
    const decoded = prepared.transactions.map((t) => getTransactionDecoder().decode(getBase64Encoder().encode(t.transaction)));
    let priorityFees = 0n;
    for (const [i, transaction] of decoded.entries()) {
      const charged = checkTransaction(ctx, i, transaction.messageBytes, expected);
      if (charged.feeLamports > BigInt(prepared.transactions[i]!.feeLamports)) {
        throw ctx.fail(`prepared transaction ${i + 1} was not signed: it would charge the fee payer ${sol(charged.feeLamports)} SOL, more than the ${sol(prepared.transactions[i]!.feeLamports)} SOL stated`);
      }
      priorityFees += charged.priorityFeeLamports;
    }
    const allowed = auto ? BigInt(prepared.priorityFeeLamports) : priorityFeeShareLamports(priorityFeeLamports, owners.length, forOwners.size);
    if (priorityFees > allowed) throw ctx.fail(`the prepared transactions were not signed: their priority fees are ${sol(priorityFees)} SOL, more than the ${sol(allowed)} SOL asked for`);
    return Promise.all(
      prepared.transactions.map(async (t, i): Promise<StateTransaction> => {
        const transaction = decoded[i]!;
        const keys = t.signers.map((address) => (address === feePayer ? feePayerSigner : signers.get(address)));
        if (keys.some((k) => k === undefined)) throw ctx.fail(`prepared transaction ${i + 1} asks for a signature of a wallet not in the keys file`);
        const signed = await partiallySignTransaction(keys.map((k) => k!.keyPair), transaction);
        return {
          signature: getSignatureFromTransaction(signed) as string,
          owners: t.owners,
          closedAccounts: t.closedAccounts,
          feeLamports: t.feeLamports,
          wire: getBase64EncodedWireTransaction(signed),
          relayToken: t.relayToken,
          lastValidBlockHeight: prepared.lastValidBlockHeight,
          status: 'sent',
        };
      }),
    );
  };

  const statePath = resolve(ctx.io.cwd, stringOption(values, 'state') ?? `${keysFile}.reclaim-state.json`);
  const state = await loadState(ctx, statePath, feePayer, destination);
  const save = stateSaver(statePath, state);

  // 1. What an interrupted run left unknown: settled before anything new is prepared.
  const unsettled = state.transactions.filter((t) => !isSettled(t.status));
  if (unsettled.length > 0) {
    await write(ctx.io.stderr, `Resuming: waiting for the outcome of ${unsettled.length} transaction${unsettled.length === 1 ? '' : 's'} of the previous run\n`);
    await settleAll(client, unsettled, save);
  }

  // 2. Prepared again for the owners not done: an owner is done when a transaction of it landed and none failed.
  const landed = new Set(state.transactions.filter((t) => t.status === 'success').flatMap((t) => t.owners));
  const unfinished = new Set(state.transactions.filter((t) => t.status !== 'success').flatMap((t) => t.owners));
  let remaining = owners.filter((o) => !landed.has(o) || unfinished.has(o));
  const before = state.transactions.length;
  let preparedAny = false;
  /** The last round's transactions that did nothing and were not prepared again (the rounds ran out). */
  let leftDropped: StateTransaction[] = [];
  const progress = await ctx.progress(remaining.length, 'wallets');
  /** Wallets with a transaction settled this run, for the progress bar. */
  const settledOwners = new Set<string>();
  const pool = createRelayPool(client, {
    atOnce: relaysAtOnce,
    onSettled: async (record) => {
      await save();
      for (const owner of record.owners) settledOwners.add(owner);
      progress.update(settledOwners.size);
    },
  });
  try {
    for (let round = 1; round <= MAX_ROUNDS && remaining.length > 0; round++) {
      const { records, prepared } = await runRound(remaining, partOwners, {
        prepare,
        signAndRecord: async (answer, inPart, part) => {
          await out(
            `${round > 1 ? 'Prepared again (what the last round sent did nothing: refused, or expired before it landed): ' : ''}` +
              `${part.of > 1 ? `part ${part.index + 1}/${part.of}: ` : ''}` +
              `${inPart.length} wallet${inPart.length === 1 ? '' : 's'} in ${answer.transactions.length} transaction${answer.transactions.length === 1 ? '' : 's'}: ` +
              `${sol(answer.reclaimLamports)} SOL to ${destination}, fees ${sol(answer.feeLamports)} SOL paid by ${feePayer}, net ${sol(answer.netLamports, true)} SOL` +
              `${auto ? ` (priority fee ${sol(answer.priorityFeeLamports)} SOL, auto)` : ''}\n`,
          );
          const signed = await signAll(answer, new Set(inPart));
          // Recorded (signature, owners, signed bytes) before any relay, so that a resumed run knows to wait for them.
          state.transactions.push(...signed);
          await save();
          return signed;
        },
        relay: (signed) => pool.relay(relayGroups(signed)),
      });
      if (prepared === 0) {
        leftDropped = []; // what did nothing before has nothing left to do: its accounts are closed
        break;
      }
      preparedAny = true;
      // Every transaction of the round has settled: none can land any more. The wallets of those
      // that did nothing are prepared again, all together in the next round rather than part by
      // part: a wallet may be prepared again only once all of its transactions have settled (an
      // owner's accounts may be split across two), and one round for every leftover makes the
      // fewest prepare requests (each counts against the burn budget: ./fleetParts.ts). A wallet
      // with a transaction that failed on chain is not (that cost a fee; whether to pay for
      // another try is the person's choice: run the command again).
      const failedOwners = new Set(records.filter((r) => r.status === 'failed').flatMap((r) => r.owners));
      leftDropped = records.filter((r) => r.status === 'dropped');
      remaining = [...new Set(leftDropped.flatMap((r) => r.owners))].filter((o) => !failedOwners.has(o));
    }
  } finally {
    progress.stop();
  }

  // 3. The job as a whole, from the state: every transaction this run or an earlier one sent.
  const all = state.transactions;
  const fresh = all.slice(before);
  for (const [i, t] of fresh.entries()) {
    await out(`transaction ${i + 1}/${fresh.length} ${t.signature}: ${t.status}, ${t.owners.length} wallet${t.owners.length === 1 ? '' : 's'}, closed ${t.closedAccounts.length} account${t.closedAccounts.length === 1 ? '' : 's'}, fee ${sol(t.feeLamports)} SOL\n`);
  }
  const succeeded = all.filter((t) => t.status === 'success');
  const doneOwners = new Set(succeeded.flatMap((t) => t.owners));
  // What this run sent and did not land (what an earlier run left unlanded was prepared again above).
  const failed = [...fresh.filter((t) => t.status === 'failed'), ...leftDropped];
  if (json) {
    await write(ctx.io.stdout, `${JSON.stringify({ feePayer, destination, state: statePath, transactions: all }, null, 2)}\n`);
  } else {
    await out(
      `${succeeded.length} transaction${succeeded.length === 1 ? '' : 's'} landed in all (${succeeded.reduce((n, t) => n + t.closedAccounts.length, 0)} accounts closed, ` +
        `fees ${sol(succeeded.reduce((n, t) => n + BigInt(t.feeLamports), 0n))} SOL); ${owners.filter((o) => !doneOwners.has(o)).length} wallet(s) with nothing landed` +
        `${preparedAny ? '' : ' (nothing left to reclaim)'}. State: ${statePath}\n`,
    );
    if (failed.length > 0) await out('Some transactions did not land: run the same command again to prepare what remains (nothing is paid twice).\n');
  }
  return exitCodeFor(failed.map(() => 'failed'));
}
