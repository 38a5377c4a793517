/**
 * Keyless use: `cinder burn --owner ADDRESS --unsigned` prints the burn's unsigned
 * transactions as JSON; a wallet (Phantom, Ledger, the solana CLI, @solana/kit) signs them; and
 * `cinder relay FILE` hands the signed ones to the server, which lands them and answers like a burn.
 * The service never sees the owner's key on this path.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { text as readStream } from 'node:stream/consumers';
import { addressOption, EXIT_CODES, exitCodeFor, feePayerOption, priorityFeeOrAutoOption, quotedUnlessKey, statusBlock, stringOption, write, type CommandContext } from './context.ts';
import { formatTransactions, preparedNote } from './reclaim.ts';

export const RELAY_HELP = `  burn --owner ADDRESS --mint MINT --priority-fee SOL|auto --unsigned [--fee-payer owner|sponsor]
                             Print the burn's unsigned transactions as JSON (no key): sign them with the owner's
                             wallet, then: cinder relay FILE
  relay FILE                 Send transactions a wallet signed: FILE (- for standard input) is the JSON that
                             --unsigned printed, with each entry of "transactions" replaced by the signed one
                             ({"transactions":["<base64>",...],"relayToken":"..."}); prints the outcome as burn does.
                             Sponsored: the first "sponsoredTransactions" are relayed first, the rest (the owner's) once they landed
`;

/** `cinder burn --owner ADDRESS --unsigned`: burn's prepare door. */
export async function prepareBurnCommand(ctx: CommandContext): Promise<number> {
  const { values } = ctx;
  if (ctx.positionals.length > 0) throw ctx.usage('burn takes no positional arguments');
  if (values.unsigned !== true) throw ctx.usage('--owner goes with --unsigned (a keyless burn); a keyed burn reads the owner from its key');
  if (values['key-file'] !== undefined || values['key-env'] !== undefined) {
    throw ctx.usage('--unsigned prepares transactions for a wallet to sign: give --owner ADDRESS, not a key');
  }
  if (values['idempotency-key'] !== undefined) throw ctx.usage('--unsigned sends nothing: it takes no --idempotency-key');
  const ownerText = stringOption(values, 'owner');
  if (ownerText === undefined) throw ctx.usage('--unsigned needs --owner ADDRESS');
  const owner = addressOption(ctx, '--owner', ownerText);
  const mint = stringOption(values, 'mint');
  if (mint === undefined) throw ctx.usage('--mint is required');
  const priorityFee = priorityFeeOrAutoOption(ctx);
  const feePayer = feePayerOption(ctx);
  const client = ctx.client();
  const prepared = await client.prepareBurn({ owner, mint, priorityFee, ...(feePayer ? { feePayer } : {}) });
  await write(ctx.io.stdout, `${JSON.stringify(prepared, null, 2)}\n`);
  await write(ctx.io.stderr, preparedNote(prepared.transactions.length, owner, prepared.lastValidBlockHeight));
  return EXIT_CODES.OK;
}

/** What a relay file holds: the prepare answer with signed transactions (other fields are ignored), or a bare list. */
function relayRequestOf(ctx: CommandContext, name: string, text: string): { transactions: string[]; relayToken?: string; sponsoredTransactions?: number } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw ctx.fail(`${name} is not JSON: it should be {"transactions":["<base64 signed transaction>",...]} (what --unsigned printed, signed)`);
  }
  const body = Array.isArray(json) ? { transactions: json } : json;
  if (typeof body !== 'object' || body === null) throw ctx.fail(`${name} holds no "transactions" list`);
  const { transactions, relayToken, sponsoredTransactions } = body as { transactions?: unknown; relayToken?: unknown; sponsoredTransactions?: unknown };
  if (!Array.isArray(transactions) || transactions.length === 0 || !transactions.every((t) => typeof t === 'string' && t !== '')) {
    throw ctx.fail(`${name} holds no "transactions" list of base64 transactions`);
  }
  if (relayToken !== undefined && typeof relayToken !== 'string') throw ctx.fail(`${name}: "relayToken" must be a string`);
  const first = Number.isSafeInteger(sponsoredTransactions) ? (sponsoredTransactions as number) : undefined;
  return { transactions: transactions as string[], ...(relayToken !== undefined ? { relayToken } : {}), ...(first !== undefined ? { sponsoredTransactions: first } : {}) };
}

/** `cinder relay FILE`. */
export async function relayCommand(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length !== 1) throw ctx.usage('usage: cinder relay FILE (the signed transactions as JSON; - for standard input)');
  const file = ctx.positionals[0]!;
  let text: string;
  try {
    text = file === '-' ? await readStream(process.stdin) : await readFile(resolve(ctx.io.cwd, file), 'utf8');
  } catch (error) {
    throw ctx.fail(`cannot read ${quotedUnlessKey(file)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const name = file === '-' ? 'standard input' : quotedUnlessKey(file);
  const { sponsoredTransactions: first, ...request } = relayRequestOf(ctx, name, text);
  const client = ctx.client();
  // A sponsored prepare's sponsor pays only its first transactions; the owner pays the rest from
  // their rent, so those go (together, without the relay token) only once the first ones landed.
  const split = first !== undefined && first > 0 && first < request.transactions.length;
  const results = [await client.relay(split ? { ...request, transactions: request.transactions.slice(0, first) } : request)];
  if (split && results[0]!.status === 'success') results.push(await client.relay({ transactions: request.transactions.slice(first) }));
  for (const result of results) {
    if (ctx.values.json) {
      await write(ctx.io.stdout, `${JSON.stringify(result, null, 2)}\n`);
    } else {
      await write(ctx.io.stdout, formatTransactions(result) + statusBlock(result));
    }
  }
  // The rest was not relayed because the sponsored ones did not land (yet): not a success.
  const unsent = split && results.length === 1 ? [results[0]!.status === 'pending' ? 'pending' : 'failed'] : [];
  return exitCodeFor([...results.map((r) => r.status), ...unsent]);
}
