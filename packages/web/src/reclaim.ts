/**
 * Prepare → sign in the wallet → relay, with the page told of every step. Nothing is relayed that
 * the wallet did not sign, and nothing whose blockhash may have expired: a person can take longer
 * to approve than a blockhash lives (about a minute), so then the transactions are prepared again
 * and the wallet asked once more, with the reason shown.
 */
import { api, ApiError, fromBase64, toBase64, type PrepareRequest, type Prepared, type RelayRequest, type Relayed } from './api.ts';
import { messageOf, sameBytes } from './wallet.ts';

/** A prepared blockhash is a few seconds old already and lives ~60 s: past this, prepare again rather than relay. */
export const SIGN_WITHIN_MS = 45_000;
const MAX_ATTEMPTS = 3;
/** The relay takes at most 8 transactions and 16 KiB per request. */
const RELAY_MAX_TRANSACTIONS = 8;
const RELAY_MAX_BODY = 15_000;
const POLL_MS = 2_000;
const POLL_MAX = 60;

export type TxState = 'waiting' | 'sending' | 'success' | 'failed' | 'pending';
export interface TxProgress {
  state: TxState;
  signature: string | null;
  error: string | null;
}
export interface Progress {
  stage: 'preparing' | 'signing' | 'sending';
  sponsored: boolean;
  /** Why the wallet is asked again, when it is. */
  note: string | null;
  transactions: TxProgress[];
}
export interface Outcome {
  transactions: TxProgress[];
  allLanded: boolean;
  /** Accounts closed and SOL received net of fees: null when some transactions did not land. */
  closedAccounts: number | null;
  netLamports: bigint | null;
  sponsored: boolean;
}

/** The wallet did not sign (the person refused, or the wallet failed): nothing was sent. */
export class WalletRefused extends Error {}

const EXPIRED_AGAIN =
  'Your wallet took longer to approve than a transaction stays valid (about a minute), so Cinder prepared the transactions again. Please approve them once more.';

/** The relay's words for a blockhash or relayToken that expired before it could send (nothing was sent). */
const isExpiry = (error: unknown) =>
  error instanceof ApiError && (error.code === 'TRANSACTION_REJECTED' || error.code === 'RELAY_TOKEN_INVALID') && /expired/i.test(error.message);

function batches(signed: string[], relayToken: string | undefined): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let size = (relayToken?.length ?? 0) + 64;
  for (const wire of signed) {
    if (current.length > 0 && (current.length === RELAY_MAX_TRANSACTIONS || size + wire.length + 3 > RELAY_MAX_BODY)) {
      out.push(current);
      current = [];
      size = (relayToken?.length ?? 0) + 64;
    }
    current.push(wire);
    size += wire.length + 3;
  }
  if (current.length > 0) out.push(current);
  return out;
}

async function settle(signature: string): Promise<TxProgress> {
  for (let i = 0; i < POLL_MAX; i++) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const status = await api.status(signature).catch(() => null);
    if (status && status.status !== 'pending') return { state: status.status, signature, error: status.status === 'failed' ? status.message : null };
  }
  return { state: 'pending', signature, error: null };
}

/**
 * One relay request; over the rate limit (429: refused before anything was read, so nothing was
 * sent) it waits as long as the server says and asks again: a large wallet's batches may outrun
 * RATE_LIMIT_BURN_PER_MIN. The relay is idempotent by signature, so asking again never acts twice.
 */
async function relayBatch(body: RelayRequest): Promise<Relayed> {
  for (;;) {
    try {
      return await api.relay(body);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 429)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, error.retryAfterSeconds ?? 5) * 1000));
    }
  }
}

const closes = (prepared: Prepared) => prepared.details.accounts.filter((a) => a.action === 'close' || a.action === 'burn_and_close' || a.action === 'unwrap').length;

export async function reclaim(
  request: PrepareRequest,
  sign: (transactions: Uint8Array[]) => Promise<Uint8Array[]>,
  report: (progress: Progress) => void,
): Promise<Outcome> {
  const sponsored = request.feePayer === 'sponsor';
  const done: TxProgress[] = [];
  let closedAccounts: number | null = 0;
  let netLamports: bigint | null = 0n;
  let note: string | null = null;
  for (let attempt = 1; ; attempt++) {
    report({ stage: 'preparing', sponsored, note, transactions: done });
    const prepared = await api.prepare(request);
    const preparedAt = Date.now();
    const unsigned = prepared.transactions.map(fromBase64);
    const mine: TxProgress[] = unsigned.map(() => ({ state: 'waiting', signature: null, error: null }));
    report({ stage: 'signing', sponsored, note, transactions: [...done, ...mine] });

    let signed: Uint8Array[];
    try {
      signed = await sign(unsigned);
    } catch (error) {
      const why = error instanceof Error && error.message ? ` (${error.message})` : '';
      throw new WalletRefused(`The wallet did not sign${why}. Nothing was sent.`);
    }
    // A sponsored message is signed by the sponsor only as Cinder prepared it, byte for byte.
    if (sponsored && signed.some((wire, i) => !sameBytes(messageOf(wire), messageOf(unsigned[i]!)))) {
      throw new WalletRefused(
        'The wallet changed the transactions before signing (some wallets add their own priority fee): the fee sponsor only signs them as Cinder prepared them. Turn that option off in the wallet and try again. Nothing was sent.',
      );
    }
    if (Date.now() - preparedAt > SIGN_WITHIN_MS && attempt < MAX_ATTEMPTS) {
      note = EXPIRED_AGAIN;
      continue;
    }

    const wires = signed.map(toBase64);
    let index = 0;
    try {
      for (const batch of batches(wires, prepared.relayToken)) {
        for (let i = index; i < index + batch.length; i++) mine[i] = { ...mine[i]!, state: 'sending' };
        report({ stage: 'sending', sponsored, note, transactions: [...done, ...mine] });
        const answer = await relayBatch({ transactions: batch, ...(prepared.relayToken ? { relayToken: prepared.relayToken } : {}) });
        for (const [j, t] of answer.details.transactions.entries()) {
          mine[index + j] = t.status === 'pending' ? await settle(t.signature) : { state: t.status, signature: t.signature, error: t.error };
        }
        index += batch.length;
        report({ stage: 'sending', sponsored, note, transactions: [...done, ...mine] });
      }
    } catch (error) {
      // An expired blockhash is refused before anything is sent: what is left is prepared again.
      if (isExpiry(error) && attempt < MAX_ATTEMPTS) {
        done.push(...mine.slice(0, index));
        if (index > 0) [closedAccounts, netLamports] = [null, null];
        note = EXPIRED_AGAIN;
        continue;
      }
      throw error;
    }
    done.push(...mine);
    const allLanded = done.every((t) => t.state === 'success');
    return {
      transactions: done,
      allLanded,
      closedAccounts: allLanded && closedAccounts !== null ? closedAccounts + closes(prepared) : null,
      netLamports: allLanded && netLamports !== null ? netLamports + BigInt(prepared.details.summary.netLamports) : null,
      sponsored,
    };
  }
}
