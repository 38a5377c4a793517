/**
 * `cinder reclaim`: a whole wallet's rent back, and `--unsigned` for a wallet that signs
 * elsewhere.
 *   cinder reclaim --owner ADDRESS                      the preview: every token account, its action, the sums
 *   cinder reclaim (--key-file PATH | --key-env VAR)    the same preview for the key's wallet; with --yes, the reclaim
 *   cinder reclaim --keys-file FILE [--yes]             many wallets one after another, and a summary table
 *   cinder reclaim --keys-file FILE --fee-payer KEYFILE --destination ADDRESS
 *                                                       many wallets in one job, one fee payer (./reclaimMany.ts)
 *   cinder reclaim --owner ADDRESS --unsigned           the unsigned transactions (JSON) for the wallet to sign
 * Options: --burn MINT,… --withdraw-excess --priority-fee SOL (default 0) --allow-net-loss
 * --idempotency-key K --fee-payer owner|sponsor (with --unsigned) --json.
 *
 * The preview is always shown before a key is sent: the owner is derived from the key here, and the
 * reclaim is sent only with --yes, with exactly the options of the preview. No key is ever printed:
 * a line of a keys file that is not a key is named by its line number only.
 */
import { randomUUID } from 'node:crypto';
import { CinderApiError, type ReclaimPreview, type ReclaimResult } from '../index.ts';
import {
  addressOption,
  EXIT_CODES,
  exitCodeFor,
  feePayerOption,
  mintListOption,
  priorityFeeOrAutoOption,
  sol,
  stringOption,
  statusBlock,
  table,
  write,
  type CommandContext,
} from './context.ts';
import { addressOfKey, readKey, readKeysFile } from './keys.ts';
import { tokenName } from './names.ts';
import { reclaimManyCommand } from './reclaimMany.ts';

const ACTIONS = ['close', 'burn_and_close', 'unwrap', 'withdraw_excess', 'keep', 'skip'] as const;

export const RECLAIM_HELP = `  reclaim (--owner ADDRESS | --key-file PATH | --key-env VAR | --keys-file FILE)
                             Reclaim the rent of a whole wallet: closes every empty token account (both token
                             programs), unwraps wrapped SOL, keeps accounts that hold a balance. Without --yes it
                             only shows what would happen (account, mint, action, lamports, code) and the sums.
      [--yes]                  with a key: do it (as many closes per transaction as fit)
      [--burn MINT,...]        also burn the balances of these mints and close their accounts
      [--withdraw-excess]      also take kept accounts' lamports above their rent-exempt minimum
      [--priority-fee SOL|auto]
                               total priority fee per reclaim (default 0); auto: from the cluster's recent fees
      [--allow-net-loss]       go on even when the fees exceed what comes back
      [--idempotency-key K]    reuse K to retry a reclaim safely (default: a new one per call)
      [--keys-file FILE]       many wallets, one after another: one key per line (base58, a JSON array of 64
                               numbers, or the path of a solana-keygen file, relative to FILE); a summary table
      [--unsigned]             with --owner: print the unsigned transactions as JSON, for the wallet to sign;
                               then: cinder relay FILE
      [--fee-payer owner|sponsor]
                               with --unsigned: sponsor lets the server's fee sponsor pay, repaid from the rent
`;

interface ReclaimOptions {
  burn: string[] | undefined;
  withdrawExcess: boolean | undefined;
  priorityFee: number | 'auto';
}

function optionsOf(ctx: CommandContext): ReclaimOptions {
  return {
    burn: mintListOption(ctx),
    withdrawExcess: ctx.values['withdraw-excess'] === true ? true : undefined,
    priorityFee: priorityFeeOrAutoOption(ctx, '0'),
  };
}

/** The preview as the CLI prints it: the accounts table, then the sums in SOL. */
export function formatPreview(preview: ReclaimPreview): string {
  // Names (cleaned: names.ts) in a TOKEN column right beside the mint, when any token has one.
  const names = preview.accounts.map(tokenName);
  const named = names.some((n) => n !== '');
  const rows = preview.accounts.map((a, i): string[] => [
    a.address,
    a.mint,
    ...(named ? [names[i]!] : []),
    a.action,
    a.action === 'withdraw_excess' ? a.excessLamports : a.lamports,
    a.code ?? '',
  ]);
  const lines: string[] = [];
  lines.push(`Wallet ${preview.owner}: ${preview.accounts.length} token account${preview.accounts.length === 1 ? '' : 's'}`);
  const header = ['ACCOUNT', 'MINT', ...(named ? ['TOKEN'] : []), 'ACTION', 'LAMPORTS', 'CODE'];
  if (rows.length > 0) lines.push(table(header, rows, new Set([named ? 4 : 3])).trimEnd());
  const s = preview.summary;
  const byAction = ACTIONS.map((action) => [action, s[action] ?? preview.accounts.filter((a) => a.action === action).length] as const)
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${action} ${n}`);
  lines.push(`accounts: ${s.accounts}${byAction.length > 0 ? ` (${byAction.join(', ')})` : ''}`);
  lines.push(`transactions: ${s.transactions}`);
  lines.push(`reclaim: ${sol(s.reclaimLamports)} SOL${BigInt(s.excessLamports) > 0n ? ` + excess ${sol(s.excessLamports)} SOL` : ''}`);
  lines.push(`fees: ${sol(s.feeLamports)} SOL${s.sponsored ? ' (paid by the service\'s fee sponsor and repaid from the reclaimed rent in the same transactions)' : ''}`);
  lines.push(`net: ${sol(s.netLamports, true)} SOL`);
  if (s.problem) lines.push(`warning: ${s.problem.code}: ${s.problem.detail}`);
  return `${lines.join('\n')}\n`;
}

/** A transaction of an answer: a reclaim's report, or a relay's (which knows no closed accounts or fees). */
interface TransactionLine {
  signature: string;
  status: string;
  closedAccounts?: readonly string[];
  feeLamports?: string;
  sponsored?: boolean;
  error: string | null;
}

/** One line per transaction of the answer, in order: its signature, outcome, and what the answer says it closed and cost. */
export function formatTransactions(result: { details: { transactions?: readonly TransactionLine[] } | null }, prefix = ''): string {
  const transactions = result.details?.transactions ?? [];
  return transactions
    .map((t, i) => {
      const parts = [t.status];
      if (t.closedAccounts) parts.push(`closed ${t.closedAccounts.length} account${t.closedAccounts.length === 1 ? '' : 's'}`);
      if (t.feeLamports !== undefined) parts.push(`fee ${sol(t.feeLamports)} SOL`);
      if (t.sponsored) parts.push('fee paid by the sponsor and repaid');
      return `${prefix}transaction ${i + 1}/${transactions.length} ${t.signature}: ${parts.join(', ')}${t.error ? ` (${t.error})` : ''}\n`;
    })
    .join('');
}

function formatResult(result: ReclaimResult): string {
  const d = result.details;
  const excess = d && BigInt(d.excessWithdrawnLamports) > 0n ? ` + excess ${sol(d.excessWithdrawnLamports)} SOL` : '';
  return statusBlock(
    result,
    d
      ? [
          `closed ${d.closedAccounts.length} account${d.closedAccounts.length === 1 ? '' : 's'}; reclaimed ${sol(d.reclaimedLamports)} SOL${excess}; ` +
            `fees ${sol(d.feeLamports)} SOL; net ${sol(d.netLamports, true)} SOL`,
        ]
      : [],
  );
}

const SENDING_ACTIONS = new Set(['close', 'burn_and_close', 'unwrap', 'withdraw_excess']);
/**
 * Whether a reclaim would have something to do. Not `summary.transactions > 0`: a preview whose plan
 * meets a money rule (fees above the reclaim, too little SOL) has no transactions but a `problem`,
 * which the reclaim then answers (or, with --allow-net-loss, goes past).
 */
const hasWork = (preview: ReclaimPreview) => preview.accounts.some((a) => SENDING_ACTIONS.has(a.action));

export async function reclaimCommand(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) throw ctx.usage('reclaim takes no positional arguments (a key is read with --key-file, --key-env or --keys-file)');
  const { values } = ctx;
  const keysFile = stringOption(values, 'keys-file');
  const hasKey = values['key-file'] !== undefined || values['key-env'] !== undefined;
  const ownerText = stringOption(values, 'owner');
  if (values.unsigned === true) {
    if (hasKey || keysFile !== undefined) throw ctx.usage('--unsigned prepares transactions for a wallet to sign: give --owner ADDRESS, not a key');
    if (values.yes !== undefined) throw ctx.usage('--unsigned sends nothing, so it takes no --yes: sign its output and run cinder relay FILE');
    if (ownerText === undefined) throw ctx.usage('--unsigned needs --owner ADDRESS');
    return prepare(ctx, addressOption(ctx, '--owner', ownerText));
  }
  if (keysFile !== undefined && (values['fee-payer'] !== undefined || values.destination !== undefined)) {
    if (hasKey || ownerText !== undefined) throw ctx.usage('--keys-file reads the wallets from the file: give no --owner, --key-file or --key-env with it');
    return reclaimManyCommand(ctx, keysFile, await readKeysFile(ctx, keysFile));
  }
  for (const option of ['destination', 'mints', 'state']) {
    if (values[option] !== undefined) throw ctx.usage(`--${option} goes with --keys-file FILE --fee-payer KEYFILE --destination ADDRESS`);
  }
  if (values['fee-payer'] !== undefined) {
    throw ctx.usage('--fee-payer goes with --unsigned, or with --keys-file and --destination; a keyed reclaim is sponsored by the server when the owner cannot pay');
  }
  if (keysFile !== undefined) {
    if (hasKey || ownerText !== undefined) throw ctx.usage('--keys-file reads the wallets from the file: give no --owner, --key-file or --key-env with it');
    if (values['idempotency-key'] !== undefined) throw ctx.usage('--idempotency-key is for one wallet; each wallet of --keys-file gets its own');
    return reclaimEachWallet(ctx, keysFile);
  }
  if (!hasKey) {
    if (ownerText === undefined) throw ctx.usage('give --owner ADDRESS (a preview), or the key with --key-file PATH or --key-env VAR');
    if (values.yes !== undefined) throw ctx.usage('--yes needs the key (--key-file PATH or --key-env VAR): --owner alone can only preview');
    return previewOnly(ctx, addressOption(ctx, '--owner', ownerText));
  }
  return reclaimOne(ctx, ownerText);
}

async function previewOnly(ctx: CommandContext, owner: string): Promise<number> {
  const options = optionsOf(ctx);
  const client = ctx.client();
  const preview = await client.previewReclaim({ owner, ...options, metadata: true });
  if (ctx.values.json) await write(ctx.io.stdout, `${JSON.stringify(preview, null, 2)}\n`);
  else {
    await write(ctx.io.stdout, formatPreview(preview));
    if (hasWork(preview)) {
      await write(ctx.io.stdout, 'Nothing was sent. To reclaim, run the same command with the key (--key-file PATH or --key-env VAR) and --yes.\n');
    }
  }
  return EXIT_CODES.OK;
}

async function reclaimOne(ctx: CommandContext, ownerText: string | undefined): Promise<number> {
  const options = optionsOf(ctx);
  const key = await readKey(ctx);
  const owner = await addressOfKey(key);
  if (owner === null) {
    throw ctx.fail('the key is not a base58 secret key (64 bytes) or seed (32 bytes), nor a solana-keygen array of 64 numbers whose halves match');
  }
  if (ownerText !== undefined && addressOption(ctx, '--owner', ownerText) !== owner) {
    throw ctx.usage(`the key belongs to ${owner}, not to --owner ${ownerText}`);
  }
  const client = ctx.client();
  const preview = await client.previewReclaim({ owner, ...options, metadata: true });
  const json = ctx.values.json === true;
  if (!json) await write(ctx.io.stdout, formatPreview(preview));
  if (!hasWork(preview)) {
    // The key is not sent when there is nothing to do.
    if (json) await write(ctx.io.stdout, `${JSON.stringify({ preview, result: null }, null, 2)}\n`);
    else await write(ctx.io.stdout, `Nothing to reclaim for ${owner}; nothing was sent.\n`);
    return EXIT_CODES.OK;
  }
  if (ctx.values.yes !== true) {
    if (json) await write(ctx.io.stdout, `${JSON.stringify({ preview, result: null }, null, 2)}\n`);
    else await write(ctx.io.stdout, 'Nothing was sent. To reclaim this, run the same command with --yes.\n');
    return EXIT_CODES.OK;
  }
  // One Idempotency-Key for every attempt, so that a retry can never reclaim twice.
  const idempotencyKey = stringOption(ctx.values, 'idempotency-key') ?? randomUUID();
  // `--idempotency-key ''` sends none (SDK): then nothing makes a retry safe, and the SDK makes none (as for burn).
  const result = await client.reclaimRent({ userPrivateKey: key, ...options, allowNetLoss: ctx.values['allow-net-loss'] === true ? true : undefined, idempotencyKey });
  if (json) {
    await write(ctx.io.stdout, `${JSON.stringify({ preview, result }, null, 2)}\n`);
  } else {
    await write(ctx.io.stdout, formatTransactions(result) + formatResult(result));
    if (result.status === 'success' && result.details && result.details.netLamports !== preview.summary.netLamports) {
      await write(ctx.io.stdout, `note: the net differs from the preview's (${sol(preview.summary.netLamports, true)} SOL): the wallet changed in between.\n`);
    }
  }
  return exitCodeFor([result.status]);
}

async function prepare(ctx: CommandContext, owner: string): Promise<number> {
  const options = optionsOf(ctx);
  const feePayer = feePayerOption(ctx);
  const client = ctx.client();
  const allowNetLoss = ctx.values['allow-net-loss'] === true ? true : undefined;
  const prepared = await client.prepareReclaim({ owner, ...options, allowNetLoss, ...(feePayer ? { feePayer } : {}) });
  await write(ctx.io.stdout, `${JSON.stringify(prepared, null, 2)}\n`);
  await write(ctx.io.stderr, preparedNote(prepared.transactions.length, owner, prepared.lastValidBlockHeight));
  return EXIT_CODES.OK;
}

export function preparedNote(count: number, owner: string, lastValidBlockHeight: string): string {
  return (
    `${count} unsigned transaction${count === 1 ? '' : 's'} for ${owner}, valid until block height ${lastValidBlockHeight} (about a minute). ` +
    'Sign them with the owner\'s wallet (replace each entry of "transactions" with the signed one), then run: cinder relay FILE\n'
  );
}

// ---------------------------------------------------------------------------------------------
// --keys-file: many wallets

interface WalletRow {
  wallet: string;
  status: string;
  closed: number | null;
  transactions: number | null;
  reclaimed: bigint;
  fees: bigint;
  net: bigint;
  note: string;
}

/**
 * `--keys-file FILE` without a fee payer: each wallet of the file previewed (and with --yes,
 * reclaimed with its own key, as `--key-file` does) one after another, then one summary table. A
 * wallet the server refuses does not stop the others. (One job for all of them, one fee payer
 * paying every fee: reclaimManyCommand.)
 */
async function reclaimEachWallet(ctx: CommandContext, file: string): Promise<number> {
  const options = optionsOf(ctx);
  const entries = await readKeysFile(ctx, file);
  if (entries.length === 0) throw ctx.fail(`the keys file ${file} holds no key`);
  const client = ctx.client();
  const yes = ctx.values.yes === true;
  const allowNetLoss = ctx.values['allow-net-loss'] === true ? true : undefined;
  const rows: WalletRow[] = [];
  const out = (text: string) => (ctx.values.json ? Promise.resolve() : write(ctx.io.stdout, text));

  for (const [i, entry] of entries.entries()) {
    const owner = entry.key === null ? null : await addressOfKey(entry.key);
    const empty = { closed: null, transactions: null, reclaimed: 0n, fees: 0n, net: 0n };
    if (owner === null) {
      rows.push({ wallet: `line ${entry.line}`, status: 'error', ...empty, note: `${entry.why}; skipped` });
      await write(ctx.io.stderr, `cinder: ${file} line ${entry.line}: ${entry.why}; skipped\n`);
      continue;
    }
    const prefix = `[${i + 1}/${entries.length}] ${owner} `;
    try {
      const preview = await client.previewReclaim({ owner, ...options });
      const s = preview.summary;
      if (!hasWork(preview)) {
        rows.push({ wallet: owner, status: 'nothing', ...empty, note: preview.summary.problem?.code ?? 'nothing to reclaim' });
        await out(`${prefix}nothing to reclaim\n`);
        continue;
      }
      if (!yes) {
        rows.push({
          wallet: owner,
          status: 'preview',
          closed: ['close', 'burn_and_close', 'unwrap'].reduce((n, a) => n + (s[a as 'close'] ?? 0), 0),
          transactions: s.transactions,
          reclaimed: BigInt(s.reclaimLamports) + BigInt(s.excessLamports),
          fees: BigInt(s.feeLamports),
          net: BigInt(s.netLamports),
          note: s.problem?.code ?? '',
        });
        await out(`${prefix}preview: ${s.transactions} transaction${s.transactions === 1 ? '' : 's'}, net ${sol(s.netLamports, true)} SOL\n`);
        continue;
      }
      const result = await client.reclaimRent({ userPrivateKey: entry.key!, ...options, allowNetLoss, idempotencyKey: randomUUID() });
      await out(formatTransactions(result, prefix));
      const d = result.details;
      rows.push({
        wallet: owner,
        status: result.status,
        closed: d ? d.closedAccounts.length : null,
        transactions: result.signatures.length,
        reclaimed: d ? BigInt(d.reclaimedLamports) + BigInt(d.excessWithdrawnLamports ?? '0') : 0n,
        fees: d ? BigInt(d.feeLamports) : 0n,
        net: d ? BigInt(d.netLamports) : 0n,
        note: result.status === 'success' ? '' : (result.message ?? ''),
      });
    } catch (error) {
      if (!(error instanceof CinderApiError)) throw error;
      const status = error.code === 'NOTHING_TO_RECLAIM' ? 'nothing' : 'error';
      rows.push({ wallet: owner, status, ...empty, note: `${error.code}${status === 'error' ? `: ${error.detail}` : ''}` });
      await out(`${prefix}${error.code}: ${error.detail}\n`);
    }
  }

  if (ctx.values.json) {
    const json = rows.map((r) => ({ ...r, reclaimed: r.reclaimed.toString(), fees: r.fees.toString(), net: r.net.toString() }));
    await write(ctx.io.stdout, `${JSON.stringify(json, null, 2)}\n`);
  } else {
    const total = rows.reduce((t, r) => ({ reclaimed: t.reclaimed + r.reclaimed, fees: t.fees + r.fees, net: t.net + r.net }), { reclaimed: 0n, fees: 0n, net: 0n });
    const cells = rows.map((r) => [r.wallet, r.status, r.closed?.toString() ?? '-', r.transactions?.toString() ?? '-', sol(r.reclaimed), sol(r.fees), sol(r.net, true), r.note]);
    cells.push(['total', '', '', '', sol(total.reclaimed), sol(total.fees), sol(total.net, true), '']);
    await write(ctx.io.stdout, `\n${table(['WALLET', 'STATUS', 'CLOSED', 'TXS', 'RECLAIMED SOL', 'FEES SOL', 'NET SOL', 'NOTE'], cells, new Set([2, 3, 4, 5, 6]))}`);
    if (!yes && rows.some((r) => r.status === 'preview')) {
      await write(ctx.io.stdout, 'Nothing was sent. To reclaim these wallets, run the same command with --yes.\n');
    }
  }
  return exitCodeFor(rows.map((r) => r.status));
}
