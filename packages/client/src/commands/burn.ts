/**
 * `cinder burn --mint M --priority-fee SOL (--key-file PATH | --key-env VAR)`: the whole balance of
 * one mint burned and its accounts closed, by the server, with the owner's key (the keyless form,
 * `--owner … --unsigned`, is ./relay.ts). And `cinder status SIGNATURE`, which looks one up.
 *
 * The key is read from a file or an environment variable, never from an argument (it would land
 * in shell history and the process list), and is never printed.
 */
import { randomUUID } from 'node:crypto';
import { exitCodeFor, priorityFeeOrAutoOption, statusBlock, stringOption, write, type CommandContext } from './context.ts';
import { readKey } from './keys.ts';

export const BURN_HELP = `  burn --mint MINT --priority-fee SOL|auto (--key-file PATH | --key-env VAR)
                             Burn the whole balance of MINT held by the key and reclaim the account rent.
                             --priority-fee auto: a fee from the cluster's recent fees (the service's bounds).
                             The key is read from a file (solana-keygen JSON array or base58 text) or from an
                             environment variable, never from an argument (it would land in shell history).
      [--idempotency-key K]    reuse K to retry a burn safely (default: a new one per call)
                             There is no --amount: the whole balance is burned, so the account can be closed and
                             its rent returned. To burn part of a balance: spl-token burn ACCOUNT AMOUNT.
  status SIGNATURE           The status of a burn transaction
`;

export async function burnCommand(ctx: CommandContext): Promise<number> {
  const { values, io } = ctx;
  if (ctx.positionals.length > 0) throw ctx.usage('burn takes no positional arguments (a key is read with --key-file or --key-env)');
  if (values.amount !== undefined) {
    // A decision, not a gap: a partial burn leaves the account open, so no rent comes back, and
    // that is the one thing Cinder is for. spl-token already burns amounts.
    throw ctx.usage(
      'cinder burn has no --amount: it burns the whole balance so that the account can be closed and its rent returned; ' +
        'a partial burn leaves the account open and reclaims nothing. To burn part of a balance, use: spl-token burn ACCOUNT AMOUNT',
    );
  }
  const mint = stringOption(values, 'mint');
  if (mint === undefined) throw ctx.usage('--mint is required');
  if (stringOption(values, 'priority-fee') === undefined) throw ctx.usage('--priority-fee is required (the total priority fee in SOL, e.g. 0.000005, or auto)');
  const priorityFee = priorityFeeOrAutoOption(ctx);
  const key = await readKey(ctx);
  // One Idempotency-Key for every attempt, so that a retry can never burn twice; `--idempotency-key ''`
  // sends none (SDK), and then nothing makes a retry safe, so the SDK makes none.
  const idempotencyKey = stringOption(values, 'idempotency-key') ?? randomUUID();
  const client = ctx.client();
  const result = await client.burnTokens({ mint, priorityFee, userPrivateKey: key }, { idempotencyKey });
  await write(io.stdout, values.json ? `${JSON.stringify(result, null, 2)}\n` : statusBlock(result));
  return exitCodeFor([result.status]);
}

export async function statusCommand(ctx: CommandContext): Promise<number> {
  const { values, io } = ctx;
  if (ctx.positionals.length !== 1) throw ctx.usage('usage: cinder status SIGNATURE');
  const client = ctx.client();
  const result = await client.getTransaction(ctx.positionals[0]!);
  if (values.json) await write(io.stdout, `${JSON.stringify(result, null, 2)}\n`);
  else await write(io.stdout, `${result.status}${result.slot !== null ? ` (slot ${result.slot})` : ''}: ${result.message ?? ''}\n`);
  return exitCodeFor([result.status]);
}
