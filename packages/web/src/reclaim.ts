/**
 * Prepare → sign in the wallet → relay, with the page told of every step. Nothing is relayed that
 * the wallet did not sign, and nothing whose blockhash may have expired: a person can take longer
 * to approve than a blockhash lives (about a minute), so then the transactions are prepared again
 * and the wallet asked once more, with the reason shown.
 *
 * Browser wallets change what they sign: Phantom and Solflare add safety checks (Lighthouse
 * assertions), some wallets a Memo or their own compute budget. The transactions are prepared for
 * a wallet signer (room for those additions) and relayed as signed: the relay accepts what wallets
 * add and refuses anything else, with a reason that is shown (docs/wallet-additions.md).
 *
 * Landings are followed as they happen (./follow.ts): the signature of every transaction the owner
 * pays for is known once signed, and one open status request for all of them answers as soon as
 * one lands, while the relay requests still wait for their whole batch.
 */
import { api, ApiError, fromBase64, toBase64, type AccountPreview, type PrepareRequest, type Prepared, type RelayRequest, type Relayed } from './api.ts';
import { containsBytes, decodeBase58, encodeBase58 } from './base58.ts';
import { followLandings, type TxProgress } from './follow.ts';
import { retryingLimits, type Countdown } from './retry.ts';

/** A prepared blockhash is a few seconds old already and lives ~60 s: past this, prepare again rather than relay. */
export const SIGN_WITHIN_MS = 45_000;
const MAX_ATTEMPTS = 3;
/** The relay takes at most 8 transactions and 16 KiB per request. */
const RELAY_MAX_TRANSACTIONS = 8;
const RELAY_MAX_BODY = 15_000;
/**
 * Relay requests in flight at once where the owner pays its own fees: its transactions touch
 * distinct accounts, so none waits for another. The sponsored ones go first, one request at a
 * time, as the sponsor's rule of one sponsored operation per wallet at a time asks.
 */
const OWNER_PAID_RELAYS_AT_ONCE = 4;

// One transaction's progress is defined beside the code that follows its landing.
export type { TxProgress, TxState } from './follow.ts';
export interface Progress {
  stage: 'preparing' | 'signing' | 'sending';
  sponsored: boolean;
  /** Why the wallet is asked again, when it is. */
  note: string | null;
  transactions: TxProgress[];
  /** Accounts closed by landed transactions, of all this job closes. */
  accounts: { closed: number; total: number };
  /** Seconds until a request a limit refused is tried again by itself; null when nothing waits. */
  retryIn: number | null;
}
export interface Outcome {
  transactions: TxProgress[];
  allLanded: boolean;
  /** Accounts closed and SOL received net of fees: null when some transactions did not land. */
  closedAccounts: number | null;
  netLamports: bigint | null;
  /** The accounts whose tokens were burned (and closed): each with its token and amount. Empty when some did not land. */
  burned: AccountPreview[];
  sponsored: boolean;
  /** What the wallet added to the transactions it signed: the most safety checks in one transaction, and whether it added a Memo. */
  walletAdded: { safetyChecks: number; memo: boolean };
  /** The network fees of the transactions as signed (the wallet may have changed the compute budget): null when some did not land. */
  feeLamports: bigint | null;
}

/** The wallet did not sign (the person refused, or the wallet failed): nothing was sent. */
export class WalletRefused extends Error {}

const EXPIRED_AGAIN =
  'Your wallet took longer to approve than a transaction stays valid (about a minute), so Cinder prepared the transactions again. Please approve them once more.';

/** The relay refused what the wallet signed for what it holds (nothing was sent): said as the person's wallet's doing. */
const WALLET_CHANGE_REFUSED = new Set(['INSTRUCTION_NOT_ALLOWED', 'PROGRAM_NOT_ALLOWED']);

/** The relay's words for a blockhash or relayToken that expired before it could send (nothing was sent). */
const isExpiry = (error: unknown) =>
  error instanceof ApiError && (error.code === 'TRANSACTION_REJECTED' || error.code === 'RELAY_TOKEN_INVALID') && /expired/i.test(error.message);

const CLOSING = new Set(['close', 'burn_and_close', 'unwrap']);
const closing = (prepared: Prepared) => prepared.details.accounts.filter((a) => CLOSING.has(a.action));

/** Index ranges of the relay requests: at most 8 transactions and about 15 KB each. */
function batches(wires: string[], relayToken: string | undefined): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  let size = (relayToken?.length ?? 0) + 64;
  for (const [i, wire] of wires.entries()) {
    if (i > start && (i - start === RELAY_MAX_TRANSACTIONS || size + wire.length + 3 > RELAY_MAX_BODY)) {
      out.push([start, i]);
      start = i;
      size = (relayToken?.length ?? 0) + 64;
    }
    size += wire.length + 3;
  }
  if (wires.length > start) out.push([start, wires.length]);
  return out;
}

/**
 * The first signature of a signed wire transaction (its id), or null while it is unsigned (a
 * sponsored transaction's first signer is the sponsor, who signs at relay). Wire format: a
 * compact-u16 count of signatures (one byte below 128), then the 64-byte signatures.
 */
function signatureOf(wire: Uint8Array): string | null {
  const first = wire.subarray(1, 65);
  return wire[0]! > 0 && wire[0]! < 128 && first.some((b) => b !== 0) ? encodeBase58(first) : null;
}

/** How many of the closing accounts each transaction closes: a token account's address is in the one message that closes it. */
function closesPerTransaction(unsigned: Uint8Array[], accounts: AccountPreview[]): number[] {
  const counts = unsigned.map(() => 0);
  for (const account of accounts) {
    const address = decodeBase58(account.address);
    const at = address ? unsigned.findIndex((wire) => containsBytes(wire, address)) : -1;
    if (at >= 0) counts[at]!++;
  }
  return counts;
}

export async function reclaim(
  request: PrepareRequest,
  sign: (transactions: Uint8Array[]) => Promise<Uint8Array[]>,
  report: (progress: Progress) => void,
): Promise<Outcome> {
  const sponsored = request.feePayer === 'sponsor';
  const done: TxProgress[] = [];
  let closedAccounts: number | null = 0;
  let netLamports: bigint | null = 0n;
  let feeLamports: bigint | null = 0n;
  const walletAdded = { safetyChecks: 0, memo: false };
  let note: string | null = null;
  let total = 0;
  let retryIn: number | null = null;
  let mine: TxProgress[] = [];
  let stage: Progress['stage'] = 'preparing';
  const tell = () => {
    const all = [...done, ...mine];
    const closed = all.reduce((sum, t) => sum + (t.state === 'success' ? t.closes : 0), 0);
    report({ stage, sponsored, note, transactions: all, accounts: { closed, total: Math.max(total, closed) }, retryIn });
  };
  const countdown: Countdown = (left) => {
    retryIn = left;
    tell();
  };

  for (let attempt = 1; ; attempt++) {
    stage = 'preparing';
    mine = [];
    tell();
    const prepared = await retryingLimits(() => api.prepare(request), countdown);
    const preparedAt = Date.now();
    const unsigned = prepared.transactions.map(fromBase64);
    const closes = closesPerTransaction(unsigned, closing(prepared));
    // What was closed by an earlier attempt stays counted; this attempt adds what it prepared.
    total = done.reduce((sum, t) => sum + (t.state === 'success' ? t.closes : 0), 0) + closing(prepared).length;
    mine = unsigned.map((_, i) => ({ state: 'waiting', signature: null, error: null, closes: closes[i]! }));
    stage = 'signing';
    tell();

    let signed: Uint8Array[];
    try {
      signed = await sign(unsigned);
    } catch (error) {
      const why = error instanceof Error && error.message ? ` (${error.message})` : '';
      throw new WalletRefused(`The wallet did not sign${why}. Nothing was sent.`);
    }
    if (Date.now() - preparedAt > SIGN_WITHIN_MS && attempt < MAX_ATTEMPTS) {
      note = EXPIRED_AGAIN;
      continue;
    }

    mine = mine.map((t, i) => ({ ...t, state: 'signed', signature: signatureOf(signed[i]!) }));
    stage = 'sending';
    tell();
    const wires = signed.map(toBase64);
    let signedFees = 0n;
    const update = (i: number, change: Partial<TxProgress>) => {
      mine[i] = { ...mine[i]!, ...change };
      tell();
    };
    const follower = followLandings(() => mine, update);

    // The sponsor pays only the first `sponsoredTransactions` (with the relay token); the rest are
    // the owner's, paid from the rent those return, so they go out only after those landed.
    const sponsoredCount = sponsored ? prepared.sponsoredTransactions : 0;
    const sponsoredRanges = batches(wires.slice(0, sponsoredCount), prepared.relayToken);
    const ownerRanges = batches(wires.slice(sponsoredCount), undefined).map(([from, to]): [number, number] => [from + sponsoredCount, to + sponsoredCount]);
    let ranges = sponsoredRanges;
    let next = 0;
    let failure: unknown = null;
    const relayOne = async ([from, to]: [number, number]) => {
      for (let i = from; i < to; i++) update(i, { state: 'sending' });
      const token = from < sponsoredCount && prepared.relayToken ? { relayToken: prepared.relayToken } : {};
      const body: RelayRequest = { transactions: wires.slice(from, to), ...token };
      const answer: Relayed = await retryingLimits(() => api.relay(body), countdown);
      for (const [j, t] of answer.details.transactions.entries()) {
        signedFees += BigInt(t.fee);
        walletAdded.safetyChecks = Math.max(walletAdded.safetyChecks, t.walletAdded.safetyChecks);
        walletAdded.memo ||= t.walletAdded.memo;
        // The follower may have seen the landing first; the relay's answer is the same or later news.
        const known = mine[from + j]!;
        const settled = known.state === 'success' || known.state === 'failed';
        update(from + j, { signature: t.signature, ...(settled && t.status === 'pending' ? {} : { state: t.status, error: t.error }) });
      }
    };
    // Workers take the next request until none is left or one failed; what was not sent stays 'signed'.
    const worker = async () => {
      while (failure === null && next < ranges.length) {
        const range = ranges[next++]!;
        try {
          await relayOne(range);
        } catch (error) {
          failure ??= error;
          // The request was refused before anything of it was sent: its transactions were not relayed.
          for (let i = range[0]; i < range[1]; i++) if (mine[i]!.state === 'sending') update(i, { state: 'signed' });
        }
      }
    };
    // One sponsored request at a time (one sponsored operation per wallet), each answered once landed.
    await Promise.all(Array.from({ length: Math.min(1, ranges.length) }, worker));
    const prefixLanded = mine.slice(0, sponsoredCount).every((t) => t.state === 'success');
    if (failure === null && prefixLanded) {
      [ranges, next] = [ownerRanges, 0];
      await Promise.all(Array.from({ length: Math.min(OWNER_PAID_RELAYS_AT_ONCE, ranges.length) }, worker));
    }
    await follower.finish();

    if (failure !== null) {
      const error = failure;
      const sent = mine.filter((t) => t.state !== 'signed' && t.state !== 'waiting');
      // An expired blockhash is refused before anything is sent: what is left is prepared again.
      if (isExpiry(error) && attempt < MAX_ATTEMPTS) {
        done.push(...sent);
        if (sent.length > 0) [closedAccounts, netLamports, feeLamports] = [null, null, null];
        note = EXPIRED_AGAIN;
        continue;
      }
      if (error instanceof ApiError && WALLET_CHANGE_REFUSED.has(error.code)) {
        throw new ApiError(
          error.status,
          error.code,
          `Cinder did not send what your wallet signed: the wallet changed the transactions beyond what wallets may add (safety checks, one memo, a compute budget). ${error.message}`,
        );
      }
      throw error;
    }
    done.push(...mine);
    mine = [];
    const allLanded = done.every((t) => t.state === 'success');
    // Where the owner pays, a fee the wallet changed changes what the owner receives; a sponsored
    // transaction costs the owner its repayment, as prepared (the relay reports that repayment as
    // its fee and refuses a fee it does not cover), so the same sum holds for a mixed job.
    const preparedFees = BigInt(prepared.details.summary.feeLamports);
    const net = BigInt(prepared.details.summary.netLamports) - (signedFees - preparedFees);
    return {
      transactions: done,
      allLanded,
      closedAccounts: allLanded && closedAccounts !== null ? closedAccounts + closing(prepared).length : null,
      netLamports: allLanded && netLamports !== null ? netLamports + net : null,
      burned: allLanded ? prepared.details.accounts.filter((a) => a.action === 'burn_and_close') : [],
      sponsored,
      walletAdded,
      feeLamports: allLanded && feeLamports !== null ? feeLamports + signedFees : null,
    };
  }
}
