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
 */
import { api, ApiError, fromBase64, toBase64, type PrepareRequest, type Prepared, type RelayRequest, type Relayed } from './api.ts';

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
  let feeLamports: bigint | null = 0n;
  const walletAdded = { safetyChecks: 0, memo: false };
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
    if (Date.now() - preparedAt > SIGN_WITHIN_MS && attempt < MAX_ATTEMPTS) {
      note = EXPIRED_AGAIN;
      continue;
    }

    const wires = signed.map(toBase64);
    let index = 0;
    let signedFees = 0n;
    try {
      for (const batch of batches(wires, prepared.relayToken)) {
        for (let i = index; i < index + batch.length; i++) mine[i] = { ...mine[i]!, state: 'sending' };
        report({ stage: 'sending', sponsored, note, transactions: [...done, ...mine] });
        const answer = await relayBatch({ transactions: batch, ...(prepared.relayToken ? { relayToken: prepared.relayToken } : {}) });
        for (const [j, t] of answer.details.transactions.entries()) {
          signedFees += BigInt(t.fee);
          walletAdded.safetyChecks = Math.max(walletAdded.safetyChecks, t.walletAdded.safetyChecks);
          walletAdded.memo ||= t.walletAdded.memo;
          mine[index + j] = t.status === 'pending' ? await settle(t.signature) : { state: t.status, signature: t.signature, error: t.error };
        }
        index += batch.length;
        report({ stage: 'sending', sponsored, note, transactions: [...done, ...mine] });
      }
    } catch (error) {
      // An expired blockhash is refused before anything is sent: what is left is prepared again.
      if (isExpiry(error) && attempt < MAX_ATTEMPTS) {
        done.push(...mine.slice(0, index));
        if (index > 0) [closedAccounts, netLamports, feeLamports] = [null, null, null];
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
    const allLanded = done.every((t) => t.state === 'success');
    // Where the owner pays, a fee the wallet changed changes what the owner receives; a sponsored
    // transaction costs the owner its repayment, as prepared (the relay refuses a fee it does not cover).
    const preparedFees = BigInt(prepared.details.summary.feeLamports);
    const net = BigInt(prepared.details.summary.netLamports) - (sponsored ? 0n : signedFees - preparedFees);
    return {
      transactions: done,
      allLanded,
      closedAccounts: allLanded && closedAccounts !== null ? closedAccounts + closes(prepared) : null,
      netLamports: allLanded && netLamports !== null ? netLamports + net : null,
      sponsored,
      walletAdded,
      feeLamports: allLanded && feeLamports !== null ? feeLamports + (sponsored ? preparedFees : signedFees) : null,
    };
  }
}
