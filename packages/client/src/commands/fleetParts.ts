/**
 * How `cinder reclaim --keys-file F --fee-payer K --destination A --yes` (./reclaimMany.ts) splits
 * a fleet: its wallets are prepared in parts of PART_OWNERS, one prepare request after another, and
 * each part is checked, signed, recorded and handed to the relay pool (./fleetRelay.ts) as soon as
 * it is prepared, while the next part is being prepared. The whole then takes about the prepares of
 * all the wallets plus the last part's relays, not the prepares plus every relay.
 *
 * The parts are disjoint sets of wallets, and the service plans each from the chain as it is: a
 * part prepared while another part's transactions are still landing holds none of their accounts,
 * so preparing it cannot plan a close that an earlier transaction may still make.
 */
import type { PrepareReclaimManyResponse, ReclaimManyPreviewResponse } from '../index.ts';
import { sol, wholeNumberFromEnv, type CommandContext } from './context.ts';
import type { StateTransaction } from './fleetRelay.ts';

/**
 * Wallets per prepare request. The service's default limits of a deployment (a service given an
 * RPC URL: src/config.ts, src/http/rateLimit.ts), per client and minute, with a 1,000-wallet fleet:
 * - burn requests, 10 a minute: each prepare is one (the relays of prepared messages are not
 *   counted). 1,000 wallets in parts of 200 are 5 prepares: half the budget, so the 4 rounds that
 *   may follow (MAX_ROUNDS, ./reclaimMany.ts) each prepare what did nothing again (one part while
 *   it is at most 200 wallets) and the whole job still fits in one minute's budget. Parts of 100
 *   would spend the whole budget on the first round, and a round prepared again, or a resumed run,
 *   would wait out a 429.
 * - owners named, 10,000 a minute: 1,000, plus those prepared again;
 * - owners per request (MAX_OWNERS_PER_REQUEST), 1,000: a part is 200, so a fleet of any size can
 *   be prepared, where one prepare of all its wallets stops at 1,000;
 * - requests of any kind, 300 a minute: 5 prepares and 25 relay requests (transactions sharing a
 *   relay token, 8 at most, go in one): 30 in test/cli/reclaimFleet.test.ts, plus a status request
 *   per relay request and 5 s for what a relay left pending;
 * - open connections per client, 128: at most RELAYS_AT_ONCE relays and one prepare at once.
 * The try-it mode's budgets (no SOLANA_RPC_URL) are far higher. A fleet past 2,000 wallets makes
 * more than 10 prepares in its first minute: the SDK waits out the 429 as the service says
 * (Retry-After), and the CLI says so on standard error.
 * At the tail, the last part's 40 or so transactions are about 5 relay requests, one wave of
 * RELAYS_AT_ONCE: a smaller part would not make it shorter.
 */
export const PART_OWNERS = 200;

/**
 * CINDER_FLEET_PART_OWNERS (1 to MAX_PART_OWNERS; unset: PART_OWNERS): other parts, for the
 * benchmark's baseline (one prepare of 1,000 wallets, then its relays) and for an operator whose
 * service has other limits. MAX_PART_OWNERS is the service's default MAX_OWNERS_PER_REQUEST.
 */
export const MAX_PART_OWNERS = 1_000;

export const partOwnersOf = (ctx: CommandContext): number => wholeNumberFromEnv(ctx, 'CINDER_FLEET_PART_OWNERS', MAX_PART_OWNERS, PART_OWNERS);

/**
 * The priority fee, in lamports, of a request for `wallets` of a job of `jobWallets`, when the
 * person gave `totalLamports` for the whole job (the API's priorityFee is a total, and so is the
 * command's --priority-fee). Each preview and prepare request, part or round prepared again, asks
 * for its wallets' share, rounded down: the parts together pay at most the total, never the total
 * once per part; and a round prepared again asks only for the shares of the wallets whose
 * transactions did nothing (and so paid nothing). With --priority-fee auto there is no total:
 * each part's prepare asks for "auto" and the command signs no more than the answer states.
 */
export function priorityFeeShareLamports(totalLamports: bigint, jobWallets: number, wallets: number): bigint {
  return (totalLamports * BigInt(wallets)) / BigInt(jobWallets);
}

/** The previews of a job's parts as one answer, as the service would state them for the whole job prepared in those parts. */
export function mergePreviews(parts: readonly ReclaimManyPreviewResponse[]): ReclaimManyPreviewResponse {
  if (parts.length === 1) return parts[0]!;
  const sum = (pick: (p: ReclaimManyPreviewResponse) => string | number) => parts.reduce((total, p) => total + BigInt(pick(p)), 0n);
  const totalReclaimable = sum((p) => p.totalReclaimableLamports);
  const net = sum((p) => p.netLamports);
  return {
    owners: parts.flatMap((p) => p.owners),
    totalReclaimableLamports: totalReclaimable.toString(),
    totalReclaimableSol: sol(totalReclaimable),
    transactions: Number(sum((p) => p.transactions)),
    signatures: Number(sum((p) => p.signatures)),
    feeLamports: sum((p) => p.feeLamports).toString(),
    netLamports: net.toString(),
    netSol: sol(net),
    skippedAccounts: parts.flatMap((p) => p.skippedAccounts),
    priorityFeeLamports: sum((p) => p.priorityFeeLamports).toString(),
  };
}

/** `owners` in consecutive parts of at most `size`, in order. */
export function partsOf<T>(owners: readonly T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < owners.length; i += size) parts.push(owners.slice(i, i + size));
  return parts;
}

export interface RoundSteps {
  /** The service's plan for these owners, from the chain as it is now (null: nothing left to reclaim for them). */
  prepare(owners: string[]): Promise<PrepareReclaimManyResponse | null>;
  /**
   * Checks and signs a part's transactions, and records them in the state file (saved) before it
   * returns: a transaction is relayed only once a resumed run would know to wait for it.
   */
  signAndRecord(prepared: PrepareReclaimManyResponse, owners: string[], part: { index: number; of: number }): Promise<StateTransaction[]>;
  /** Relays a part's transactions through the job's pool; resolves once none of them can still land. */
  relay(records: StateTransaction[]): Promise<void>;
}

/**
 * One round of a job: `owners` in parts, one prepare request in flight at a time (the next one
 * asked for as soon as the previous answered, so that it runs while that part is signed and
 * relayed), each part relayed once signed. Returns once every transaction of the round has settled
 * (landed, failed, or unable to land): what it returns can be judged whole.
 *
 * When a step fails (a transaction refused by the check, the service unreachable), no part is
 * signed after it (the next part's prepare may already be under way: it signs nothing), the relays
 * already handed over are still followed to their end (so the state file says what they did), then
 * the error is thrown. `prepared` is how many parts the service had something for.
 */
export async function runRound(owners: readonly string[], partOwners: number, steps: RoundSteps): Promise<{ records: StateTransaction[]; prepared: number }> {
  const parts = partsOf(owners, partOwners);
  const records: StateTransaction[] = [];
  const relays: Promise<void>[] = [];
  let prepared = 0;
  let failure: { error: unknown } | null = null;
  /** A relay that failed (the service unreachable): no part is signed after it, as none could be relayed. */
  let relayFailed = false;
  let next: Promise<PrepareReclaimManyResponse | null> | null = parts.length > 0 ? steps.prepare(parts[0]!) : null;
  try {
    for (const [index, part] of parts.entries()) {
      const answer = await next!;
      next = null;
      if (relayFailed) break;
      next = index + 1 < parts.length ? steps.prepare(parts[index + 1]!) : null;
      if (answer === null || answer.transactions.length === 0) continue;
      prepared += 1;
      const signed = await steps.signAndRecord(answer, part, { index, of: parts.length });
      records.push(...signed);
      relays.push(
        steps.relay(signed).catch((error: unknown) => {
          relayFailed = true;
          throw error;
        }),
      );
    }
  } catch (error) {
    failure = { error };
  }
  // A prepare asked for ahead and not used (a step failed): its own failure is not this round's to report.
  next?.catch(() => undefined);
  const ends = await Promise.allSettled(relays);
  if (failure) throw failure.error;
  const refused = ends.find((end) => end.status === 'rejected');
  if (refused) throw refused.reason;
  return { records, prepared };
}
