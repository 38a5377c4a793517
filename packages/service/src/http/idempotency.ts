/**
 * `Idempotency-Key` on the routes that sign and send with the caller's key, POST /api/burn_tokens
 * and POST /api/reclaim_rent (docs/api-keys-and-limits.md, "Idempotency-Key": the same key with the
 * same body within 24 h returns the first answer without touching the chain again).
 *
 * Hooked onto every route whose config says `idempotent: true` (src/http/routeConfig.ts: an
 * onRoute hook adds a route-level preHandler and onSend), so the route only declares it:
 *
 * - preHandler (the body is parsed and valid): no header → nothing to do. Otherwise the record
 *   key is HMAC-SHA256(SERVER_SECRET, cluster, client, owner, Idempotency-Key):
 *     · cluster: the genesis hash of the chain (read once from the RPC, by the first keyed
 *       request: 503 RPC_UNAVAILABLE, nothing sent, while it cannot be read), so that a record made on
 *       devnet can never answer for mainnet, even in one Redis or one STATE_DIR;
 *     · client: the API key's id when API keys are on, else one shared value (so that a retry from
 *       another IP address, the usual case after a network failure, still finds its record);
 *     · owner: the wallet address the body's key controls, so that one owner's keys never collide
 *       with another's: a client that happens to pick the same Idempotency-Key as someone else
 *       (a counter, a fixed string) starts its own record and learns nothing of theirs. A body
 *       whose key cannot be read gets no record: the route refuses it and sends nothing.
 *   The fingerprint is HMAC-SHA256(SERVER_SECRET, record key, the body's values with its keys
 *   sorted): the body itself is never stored, and without the secret a record cannot confirm a
 *   guessed private key.
 *     · first use → a `pending` record; the burn runs;
 *     · same key, same body, finished → the stored answer, with `Idempotent-Replayed: true`;
 *     · same key, same body, still running, nothing sent yet → 409 REQUEST_IN_PROGRESS (Retry-After: 1);
 *     · same key, same body, transactions sent but no answer stored (the request is still
 *       landing them, or its instance crashed) → an answer rebuilt from the chain: the signatures
 *       and their current status, `Idempotent-Replayed: true`; never a second burn;
 *     · same key, another body → 400 IDEMPOTENCY_KEY_REUSED;
 *     · store unreachable (Redis) → 503 SERVICE_UNAVAILABLE, nothing sent: fails closed, so a
 *       burn can never run twice.
 * - request.cinderRecordSent(signatures, lastValidBlockHeight): the keyed door hands it to the
 *   pipeline as its "record sent" callback (src/http/routes/keyedOperation.ts), which calls it right
 *   before sending; the signatures go into the record durably (Redis, or the journal of the memory
 *   store) and the record then lives 24 h. If that fails, the burn sends nothing (503).
 * - onSend: a 200 (status success, failed or pending: something was sent, so running the request
 *   again is never right) is stored for 24 h. Any other answer (a 400 of validation or of chain
 *   state, a 503 RPC_UNAVAILABLE, a 500) means nothing was sent: the record is dropped, so a retry
 *   runs again and sees the chain as it is then.
 */
import { createHmac } from 'node:crypto';
import type { Signature } from '@solana/kit';
import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { CinderApp } from './types.ts';
import type { ChainAdapter } from '../chain/types.ts';
import { overallStatus, readSentVerdicts, reportOf, type OperationStatus } from '../chain/verdicts.ts';
import { CinderError } from '../errors.ts';
import { parsePrivateKey, type PrivateKeyInput } from '../keys/parsePrivateKey.ts';
import type { Metrics } from '../metrics.ts';
import type { IdempotencyStore, SentMark } from '../store/idempotencyStore.ts';
import { throttledLog } from '../store/redis.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** This request answered from a stored idempotency record. */
    cinderIdempotentReplay: boolean;
    /** This request was refused because the idempotency store is unreachable. */
    cinderIdempotencyUnavailable: boolean;
    /** This request owns a pending idempotency record. */
    cinderIdempotency: { key: string; token: string; fingerprint: string } | null;
    /**
     * Writes the signatures about to be sent into this request's idempotency record, durably;
     * resolves at once without an Idempotency-Key. Rejects (503, or 409 when the record was taken
     * over) when they cannot be recorded: then nothing may be sent.
     */
    cinderRecordSent(signatures: readonly string[], lastValidBlockHeight: bigint): Promise<void>;
  }
}

export interface IdempotencyDeps {
  config: Pick<Config, 'apiKeys' | 'operationDeadlineMs'>;
  logger: Logger;
  metrics: Metrics;
  store: IdempotencyStore;
  /** HMAC key of record names and fingerprints (SERVER_SECRET). */
  secret: string;
  /** Answers a retry whose transactions were sent but whose answer was never stored; names the cluster of a record. */
  chain: Pick<ChainAdapter, 'commitment' | 'getSignatureStatuses' | 'getBlockHeight' | 'getGenesisHash'>;
}

/**
 * The wallet address the body's key controls, or null when it is not a key (the route answers 400
 * INVALID_PRIVATE_KEY). A reclaim of many wallets is scoped by its fee payer's key (the body's
 * fingerprint covers every owner's key).
 */
async function ownerOf(body: unknown): Promise<string | null> {
  const fields = body as { userPrivateKey?: PrivateKeyInput; feePayerPrivateKey?: PrivateKeyInput } | null;
  const key = fields?.userPrivateKey ?? fields?.feePayerPrivateKey;
  if (key === undefined) return null;
  try {
    return (await parsePrivateKey(key)).address;
  } catch {
    return null;
  }
}

/** JSON with object keys sorted, so that field order and spacing do not make another request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

type TransactionState = { signature: string; status: OperationStatus; slot: number | null; error: string | null };

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function registerIdempotency(app: CinderApp, deps: IdempotencyDeps): void {
  const { config, metrics, store, chain } = deps;
  const hmac = (...parts: string[]) => createHmac('sha256', deps.secret).update(parts.join('\n'), 'utf8').digest('hex');
  // A pending record outlives the longest burn, then frees the key if its instance died.
  const lockMs = config.operationDeadlineMs + 30_000;
  const logFailure = throttledLog(deps.logger);
  // The cluster's genesis hash is read by the first request with an Idempotency-Key (the preHandler
  // below), not at start: a start makes no RPC call, so it loads no HTTP client and needs no RPC up;
  // that one request waits for one read (the adapter keeps it for every later one).

  app.decorateRequest('cinderIdempotentReplay', false);
  app.decorateRequest('cinderIdempotencyUnavailable', false);
  app.decorateRequest('cinderIdempotency', null);
  app.decorateRequest('cinderRecordSent', async function recordSent(this: FastifyRequest, signatures: readonly string[], lastValidBlockHeight: bigint) {
    const owned = this.cinderIdempotency;
    if (!owned) return;
    const sent: SentMark = { signatures: [...signatures], lastValidBlockHeight: lastValidBlockHeight.toString() };
    let marked: 'marked' | 'lost';
    try {
      marked = await store.markSent(owned.key, owned.token, owned.fingerprint, sent, IDEMPOTENCY_TTL_MS);
    } catch (error) {
      unavailable(this, error, 'before sending a burn: nothing sent, answering 503');
      throw new CinderError('SERVICE_UNAVAILABLE', { reason: 'idempotencyRecord' }, { headers: { 'retry-after': '5' } });
    }
    if (marked === 'lost') {
      // Our pending record expired and another request took the key: it decides, we send nothing.
      this.cinderIdempotency = null;
      throw new CinderError('REQUEST_IN_PROGRESS', { reason: 'lost' }, { headers: { 'retry-after': '1' } });
    }
  });

  /** The answer to a retry whose transactions were sent but whose answer is not stored. */
  async function rebuiltAnswer(request: FastifyRequest, sent: SentMark): Promise<string> {
    const deadline = Date.now() + 10_000;
    const body = request.body as { mint?: unknown };
    let transactions: TransactionState[];
    let lookedUp = true;
    try {
      const lastValidBlockHeight = BigInt(sent.lastValidBlockHeight);
      const verdicts = await readSentVerdicts(chain, sent.signatures.map((signature) => ({ signature: signature as Signature, lastValidBlockHeight })), deadline);
      transactions = sent.signatures.map((signature, i) => {
        const { status, slot, error } = reportOf(verdicts[i]!);
        return { signature, status, slot: slot === null ? null : Number(slot), error };
      });
    } catch {
      lookedUp = false;
      transactions = sent.signatures.map((signature) => ({ signature, status: 'pending' as const, slot: null, error: null }));
    }
    const status = overallStatus(transactions.map((t) => t.status));
    const count = transactions.length === 1 ? 'Its transaction' : `Its ${transactions.length} transactions`;
    const first = transactions[0]!.signature;
    const operation = request.routeOptions.url === '/api/reclaim_rent' ? 'reclaim' : 'burn';
    const what =
      status === 'success'
        ? `${count} landed successfully.`
        : status === 'pending'
          ? `${count} ${lookedUp ? 'has not landed yet' : 'could not be looked up now (Solana RPC unavailable)'}: check GET /api/transactions/${first}; do not send the ${operation} again.`
          : `${transactions.length === 1 ? 'Its transaction' : `At least one of its ${transactions.length} transactions`} failed: ${transactions.find((t) => t.status === 'failed')!.error}.` +
            (transactions.every((t) => t.status === 'failed' && t.slot === null) ? ` Nothing landed: send the ${operation} again with a new Idempotency-Key.` : '');
    const slots = transactions.map((t) => t.slot).filter((s): s is number => s !== null);
    request.log.info({ signatures: sent.signatures, status }, `${operation} answered from the signatures of its idempotency record (no stored answer)`);
    return JSON.stringify({
      transactionId: first,
      status,
      message: `This ${operation} was already sent for this Idempotency-Key; its full answer was not stored (the request is still running, or the server stopped before answering), so this one is rebuilt from the chain. ${what}`,
      tx_hash: first,
      details: {
        recovered: true,
        signatures: sent.signatures,
        slot: slots.length > 0 ? Math.max(...slots) : null,
        ...(typeof body?.mint === 'string' ? { mint: body.mint } : {}),
        transactions,
      },
    });
  }

  function unavailable(request: FastifyRequest, error: unknown, when: string) {
    metrics.redisErrors.inc({ operation: 'idempotency' });
    const err = error instanceof Error ? { type: error.name, message: error.message } : { message: String(error) };
    logFailure({ err, reqId: request.id }, `idempotency store unavailable (Redis) ${when}`);
  }

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header)) {
      throw new CinderError('INVALID_IDEMPOTENCY_KEY', {}, { errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }] });
    }
    const owner = await ownerOf(request.body);
    if (owner === null) return;
    // Throws RPC_UNAVAILABLE (nothing sent) while the RPC cannot say which cluster this is.
    const cluster = await chain.getGenesisHash(Date.now() + 10_000);
    const client = config.apiKeys.length > 0 ? request.cinderClient : 'anonymous';
    const key = hmac('cinder-idempotency-key', cluster, client, owner, header);
    const fingerprint = hmac('cinder-idempotency-body', key, canonicalJson(request.body));

    let begun: Awaited<ReturnType<IdempotencyStore['begin']>>;
    try {
      begun = await store.begin(key, fingerprint, lockMs);
    } catch (error) {
      unavailable(request, error, 'before a burn: answering 503');
      metrics.idempotency.inc({ result: 'unavailable' });
      request.cinderIdempotencyUnavailable = true;
      throw new CinderError('SERVICE_UNAVAILABLE', { reason: 'idempotencyBegin' }, { headers: { 'retry-after': '5' } });
    }
    switch (begun.kind) {
      case 'started':
        metrics.idempotency.inc({ result: 'executed' });
        request.cinderIdempotency = { key, token: begun.token, fingerprint };
        return;
      case 'replay':
        metrics.idempotency.inc({ result: 'replayed' });
        request.cinderIdempotentReplay = true;
        request.log.info('burn answered from its idempotency record; the chain was not touched');
        return reply
          .code(begun.response.status)
          .header('idempotent-replayed', 'true')
          .header('content-type', begun.response.contentType)
          .send(begun.response.body);
      case 'sent':
        metrics.idempotency.inc({ result: 'replayed' });
        request.cinderIdempotentReplay = true;
        return reply
          .code(200)
          .header('idempotent-replayed', 'true')
          .header('content-type', 'application/json; charset=utf-8')
          .send(await rebuiltAnswer(request, begun.sent));
      case 'in_progress':
        metrics.idempotency.inc({ result: 'in_progress' });
        throw new CinderError('REQUEST_IN_PROGRESS', { reason: 'running' }, { headers: { 'retry-after': '1' } });
      case 'mismatch':
        metrics.idempotency.inc({ result: 'reused' });
        throw new CinderError('IDEMPOTENCY_KEY_REUSED');
    }
  };

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const owned = request.cinderIdempotency;
    if (!owned) return payload;
    request.cinderIdempotency = null;
    try {
      if (reply.statusCode === 200 && typeof payload === 'string') {
        const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
        await store.complete(owned.key, owned.token, owned.fingerprint, { status: 200, contentType, body: payload }, IDEMPOTENCY_TTL_MS);
      } else {
        await store.release(owned.key, owned.token);
      }
    } catch (error) {
      // The answer goes out all the same (hiding a burn that ran would be worse). The pending
      // record stays until it expires: retries get 409 (or 503 while Redis is down), never a second burn.
      unavailable(request, error, `after a burn (status ${reply.statusCode}): its answer is not stored`);
    }
    return payload;
  };

  app.addHook('onRoute', (route: RouteOptions) => {
    // The routes that sign and send with the caller's key say so in their config (src/http/routeConfig.ts).
    if (!route.config?.idempotent) return;
    route.preHandler = [...asArray(route.preHandler), preHandler as preHandlerHookHandler];
    route.onSend = [...asArray(route.onSend), onSend as onSendHookHandler];
  });
}
