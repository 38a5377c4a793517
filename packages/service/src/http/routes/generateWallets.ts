import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import { API_PROBLEMS } from '../routeConfig.ts';
import type { Config } from '../../config.ts';
import { CinderError, toProblem, type FieldProblem } from '../../errors.ts';
import { toCinderError, validationToCinderError } from '../problem.ts';
import type { GeneratedWallets, GenerateWalletsRequest, LineWriter, WalletGenerator } from '../../wallets/index.ts';
import { createRunningCaps, type RunningCaps } from '../../wallets/admission.ts';

const BASE58_CHAR = '[1-9A-HJ-NP-Za-km-z]';
const BASE58_CHARS = 'base58 characters (1-9, A-Z and a-z except 0, O, I and l)';
/** Bodies up to this size are sent as one Buffer with one write; larger ones part by part. */
const ONE_WRITE_MAX_BYTES = 64 * 1024;

export function generateWalletsQuerySchema(config: Config) {
  const vanity = (where: string) =>
    Type.String({
      pattern: `^${BASE58_CHAR}{1,${config.maxVanityLength}}$`,
      description:
        `Vanity: the address ${where} these ${BASE58_CHARS}; prefix and suffix together at most ${config.maxVanityLength} ` +
        'characters (MAX_VANITY_LENGTH). Each character makes the search about 58 times longer (about 29 with ignoreCase); ' +
        'a prefix starting with a character other than 2-9 or A-H is about 17 times rarer still, as 94% of addresses start with one of those. ' +
        'Past VANITY_TIMEOUT_MS the answer is 422 VANITY_TIMEOUT.',
    });
  return Type.Object(
    {
      n: Type.String({
        pattern: '^[1-9][0-9]*$',
        description:
          `Number of wallets: a base-10 integer from 1 to ${config.maxWalletsPerRequest} (MAX_WALLETS_PER_REQUEST); at most ${config.maxMnemonicWalletsPerRequest} with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST). ` +
          `Streamed (Accept: application/x-ndjson), plain and hd wallets: up to ${config.maxWalletsStreamed} (MAX_WALLETS_STREAMED). No sign, exponent, leading zero or space.`,
        examples: ['10'],
      }),
      mnemonic: Type.Optional(
        Type.Union([Type.Literal('12'), Type.Literal('24')], {
          description: "Also return a BIP39 mnemonic of 12 or 24 words for each wallet; the key is the one derived at m/44'/501'/0'/0', as in Phantom and Solflare.",
        }),
      ),
      hd: Type.Optional(
        Type.Union([Type.Literal('12'), Type.Literal('24')], {
          description:
            "One new BIP39 phrase of 12 or 24 words (`mnemonic` at the top of the answer) and n wallets derived from it at m/44'/501'/i'/0', i = 0 … n−1 " +
            '(SLIP-0010 ed25519: the accounts Phantom, Solflare and Backpack show for that phrase); each keypair has its `path`. Not with mnemonic, prefix or suffix.',
        }),
      ),
      prefix: Type.Optional(vanity('starts with')),
      suffix: Type.Optional(vanity('ends with')),
      ignoreCase: Type.Optional(
        Type.Union([Type.Literal('true'), Type.Literal('false')], {
          description: 'Vanity: match prefix and suffix ignoring letter case (default false). Only with prefix or suffix.',
        }),
      ),
      format: Type.Optional(
        Type.Literal('keygen', { description: 'Also return secretKeyBytes, the 64-number array of a solana-keygen id.json file.' }),
      ),
    },
    { additionalProperties: false },
  );
}

const KeypairSchema = Type.Object({
  address: Type.String({ description: 'The wallet address: base58 of the ed25519 public key' }),
  privateKey: Type.String({
    description: 'base58 of the 64-byte secret key (32-byte seed ‖ public key), the format Phantom and Solflare import and burn_tokens accepts as userPrivateKey',
  }),
  mnemonic: Type.Optional(Type.String({ description: "With mnemonic=12|24: the BIP39 phrase; m/44'/501'/0'/0' gives this keypair" })),
  path: Type.Optional(Type.String({ description: "With hd=12|24: the derivation path of this keypair below the answer's mnemonic, m/44'/501'/i'/0'" })),
  secretKeyBytes: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), {
      minItems: 64,
      maxItems: 64,
      description: 'With format=keygen: the same 64 bytes as a solana-keygen id.json array',
    }),
  ),
});

export const GenerateWalletsResponseSchema = Type.Object({
  mnemonic: Type.Optional(Type.String({ description: "With hd=12|24: the one BIP39 phrase every wallet is derived from (keypairs[i].path). Keep it: it restores all of them." })),
  wallets: Type.Array(Type.String(), { description: 'The n addresses; wallets[i] is keypairs[i].address' }),
  keypairs: Type.Array(KeypairSchema),
});

/**
 * One line of the streamed answer (Accept: application/x-ndjson), newline-delimited JSON: the
 * phrase first with hd, then one keypair per line; a vanity search also writes its progress about
 * once a second and at the end; an error after the first line ends the stream with its problem.
 */
export const GenerateWalletsStreamLineSchema = Type.Union(
  [
    Type.Object({ mnemonic: Type.String({ description: 'hd: the first line, the phrase every wallet below is derived from' }) }),
    KeypairSchema,
    Type.Object({ keysTried: Type.Integer({ minimum: 0, description: 'Vanity: keys tried so far (about once a second, and once at the end)' }) }),
    Type.Object({ error: Type.Ref('Problem', { description: 'The last line when the stream cannot finish (VANITY_TIMEOUT past VANITY_MAX_MS, …)' }) }),
  ],
  { description: 'One line of the application/x-ndjson answer' },
);

interface QueryString {
  n: string;
  mnemonic?: '12' | '24';
  hd?: '12' | '24';
  prefix?: string;
  suffix?: string;
  ignoreCase?: 'true' | 'false';
  format?: 'keygen';
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The rule of each other parameter, as its error message says it. */
const FIELD_RULES: Readonly<Record<string, string>> = {
  mnemonic: 'must be 12 or 24',
  hd: 'must be 12 or 24',
  ignoreCase: 'must be true or false',
  format: 'must be keygen',
};
const ONE_BASE58_CHAR = new RegExp(`^${BASE58_CHAR}$`);

/** The rule `n` breaks when it is not a plain integer from 1 to the limit: each its own words, never the value. */
export function nRuleBroken(value: unknown, config: Pick<Config, 'maxWalletsPerRequest'>): string {
  const max = config.maxWalletsPerRequest;
  if (Array.isArray(value)) return 'must be given once';
  const text = String(value ?? '');
  if (text === '') return `is empty: give the number of wallets, a base-10 integer from 1 to ${max}`;
  if (!/^[0-9]+$/.test(text)) return `must be a base-10 integer from 1 to ${max}: digits 0-9 only, without sign, decimal point, exponent, letters or spaces`;
  if (/^0+$/.test(text)) return 'must be at least 1';
  if (text.startsWith('0')) return 'must be written without a leading zero';
  return `must be at most ${max} (MAX_WALLETS_PER_REQUEST)`;
}

/** The rule a vanity pattern breaks: naming the first character that is not base58 (a pattern is not a secret). */
export function vanityRuleBroken(value: unknown, config: Pick<Config, 'maxVanityLength'>): string {
  if (Array.isArray(value)) return 'must be given once';
  const text = String(value ?? '');
  if (text === '') return `is empty: give 1 to ${config.maxVanityLength} ${BASE58_CHARS}`;
  const outside = [...text].find((c) => !ONE_BASE58_CHAR.test(c));
  if (outside !== undefined) return `contains ${JSON.stringify(outside)}, which is not a base58 character (base58 excludes 0, O, I and l; it has 1-9, A-Z and a-z otherwise)`;
  return `must have at most ${config.maxVanityLength} characters (MAX_VANITY_LENGTH)`;
}

function invalid(field: keyof QueryString, message: string): CinderError {
  const problems = [{ field, message }];
  return new CinderError(field === 'n' ? 'INVALID_N' : 'INVALID_PARAMETER', { reason: 'schema', problems }, { errors: problems });
}

/**
 * Schema failures of the query string: missing and unknown fields keep the shared wording;
 * a bad value gets the rule it broke (never the value itself, except the one character of a
 * vanity pattern that is not base58), INVALID_N for n and INVALID_PARAMETER for the others.
 */
function queryError(validation: AjvError[], query: Record<string, unknown>, config: Config): CinderError {
  const shared = validationToCinderError(validation, 'querystring');
  if (shared.code === 'MISSING_FIELD' || shared.code === 'UNKNOWN_FIELD') return shared;
  const errors: FieldProblem[] = [];
  for (const e of validation) {
    const field = e.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (errors.some((p) => p.field === field)) continue;
    const message =
      field === 'n'
        ? nRuleBroken(query.n, config)
        : field === 'prefix' || field === 'suffix'
          ? vanityRuleBroken(query[field], config)
          : // A query value is a string, or an array when the parameter is repeated.
            e.keyword === 'type'
            ? 'must be given once'
            : (FIELD_RULES[field] ?? e.message ?? 'is invalid');
    errors.push({ field, message });
  }
  const code = errors.some((p) => p.field === 'n') ? 'INVALID_N' : 'INVALID_PARAMETER';
  return new CinderError(code, { reason: 'schema', problems: errors }, { errors });
}

function sendWallets(reply: FastifyReply, result: GeneratedWallets) {
  reply.header('cache-control', 'no-store').type('application/json; charset=utf-8');
  if (result.byteLength <= ONE_WRITE_MAX_BYTES) {
    const body = Buffer.concat(result.parts, result.byteLength);
    result.wipe();
    const wipe = () => body.fill(0);
    reply.raw.once('finish', wipe).once('close', wipe);
    return reply.send(body);
  }
  // Large bodies are written part by part (one huge concatenation would stall the event loop);
  // the parts are wiped once the last byte has been handed to the socket, or the client left.
  const wipe = () => result.wipe();
  reply.raw.once('finish', wipe).once('close', wipe);
  reply.header('content-length', result.byteLength);
  return reply.send(Readable.from(result.parts, { objectMode: false }));
}

/**
 * The largest n of a request: streamed plain and hd wallets cost no memory per wallet (up to
 * MAX_WALLETS_STREAMED); the others keep MAX_WALLETS_PER_REQUEST (and mnemonic= its own limit,
 * checked by the route). The wallets budget (rateLimit.ts) counts only what this admits.
 */
export function maxWalletsOf(
  query: { prefix?: unknown; suffix?: unknown; mnemonic?: unknown },
  accept: string | undefined,
  config: Pick<Config, 'maxWalletsPerRequest' | 'maxWalletsStreamed'>,
): number {
  return isStreamable(query, accept) ? Math.max(config.maxWalletsStreamed, config.maxWalletsPerRequest) : config.maxWalletsPerRequest;
}

/** Plain and hd wallets asked for as a stream: no limit but MAX_WALLETS_STREAMED, and charged to the wallets budget as they are made. */
export function isStreamable(query: { prefix?: unknown; suffix?: unknown; mnemonic?: unknown }, accept: string | undefined): boolean {
  return acceptsNdjson(accept) && !query.prefix && !query.suffix && query.mnemonic === undefined;
}

/** True when the Accept header lists application/x-ndjson (with a q above 0): the streamed answer. */
export function acceptsNdjson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((entry) => {
    const [type, ...params] = entry.split(';').map((p) => p.trim().toLowerCase());
    return type === 'application/x-ndjson' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

const NDJSON_HEADERS = {
  'content-type': 'application/x-ndjson; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * The streamed answer: lines written to the socket as the generator makes them, each write
 * awaited until the socket takes more (backpressure), each chunk wiped once flushed. Errors
 * before the first line are the usual problem+json (the generator writes nothing before the
 * request is admitted); after it, a last line `{"error":{…problem…}}` ends the stream. A client
 * that leaves aborts the signal, which stops the work. A client that stays but takes nothing for
 * `readTimeoutMs` (its socket full, no `drain`) is treated as gone: the stream is aborted, which
 * gives back its place in the pool's queue and its stream slot, and the socket is closed. Without
 * this an unread stream would hold its share of the queue for as long as its socket stays open,
 * at no cost to its client; the caps alone can be filled from many addresses.
 */
async function streamAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  wallets: WalletGenerator,
  generateRequest: GenerateWalletsRequest,
  abort: AbortController,
  readTimeoutMs: number,
): Promise<FastifyReply> {
  const { signal } = abort;
  const res = reply.raw;
  let lines = 0;
  let unreadClosed = false;
  const write: LineWriter = (chunk) => {
    if (lines === 0) {
      // From here on the route writes the response itself (Fastify's onSend hooks do not run):
      // the headers set so far (request id, rate limits) and those of every /api answer.
      reply.hijack();
      res.writeHead(200, { ...reply.getHeaders(), ...NDJSON_HEADERS } as Record<string, string | number | string[]>);
    }
    lines++;
    if (res.destroyed || res.writableEnded) {
      chunk.fill(0);
      return Promise.resolve();
    }
    if (res.write(chunk, () => chunk.fill(0))) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        res.off('drain', done).off('close', done);
        resolve();
      };
      const unread = () => {
        unreadClosed = true;
        res.off('drain', done).off('close', done);
        const reason = new Error(`the client read nothing for ${readTimeoutMs} ms`);
        request.log.info({ readTimeoutMs }, 'wallets stream closed: its client read nothing within WALLET_STREAM_READ_TIMEOUT_MS');
        abort.abort(reason);
        res.destroy();
        reject(reason);
      };
      const timer = setTimeout(unread, readTimeoutMs);
      res.once('drain', done).once('close', done);
    });
  };
  try {
    const { count, keysTried } = await wallets.stream(generateRequest, write);
    res.end();
    request.log.debug({ wallets: count, keysTried }, 'wallets streamed');
  } catch (error) {
    if (signal.aborted) {
      // An unread stream closed by the read timeout has said so already.
      if (!unreadClosed) request.log.info('client closed the connection during its wallets stream');
      if (lines === 0) reply.hijack();
      res.destroy();
      return reply;
    }
    if (lines === 0) throw error;
    const { cinderError, unexpected } = toCinderError(error);
    if (unexpected) request.log.error({ err: error }, 'unexpected error during a wallets stream');
    res.end(`${JSON.stringify({ error: toProblem(cinderError) })}\n`);
  }
  return reply;
}

const problem = Type.Ref('Problem');

/** Takes a place in each cap in turn; on a refusal, gives back those taken. Returns the release of all. */
function acquireAll(caps: RunningCaps[], client: string): () => void {
  const releases: (() => void)[] = [];
  try {
    for (const cap of caps) releases.push(cap.acquire(client));
  } catch (error) {
    for (const release of releases) release();
    throw error;
  }
  return () => releases.forEach((release) => release());
}

export function registerGenerateWalletsRoute(app: CinderApp, { config, wallets }: Pick<AppDeps, 'config' | 'wallets'>): void {
  const limits = config.walletLimits;
  // Per process, as the pool they protect is (docs/wallets.md, "Sharing the pool").
  const streams = createRunningCaps({
    perClient: limits.maxStreamsPerClient,
    total: limits.maxStreams,
    what: 'wallet streams',
    perClientName: 'MAX_WALLET_STREAMS_PER_CLIENT',
    totalName: 'MAX_WALLET_STREAMS',
  });
  const searches = createRunningCaps({
    perClient: limits.maxVanitySearchesPerClient,
    total: limits.maxVanitySearches,
    what: 'vanity searches',
    perClientName: 'MAX_VANITY_SEARCHES_PER_CLIENT',
    totalName: 'MAX_VANITY_SEARCHES',
  });
  app.get(
    '/generate_wallets',
    {
      config: {
        budget: 'generate',
        problemCodes: ['MISSING_FIELD', 'UNKNOWN_FIELD', 'INVALID_N', 'INVALID_PARAMETER', 'VANITY_TIMEOUT', 'SERVICE_UNAVAILABLE', ...API_PROBLEMS],
      },
      // Query problems get this route's own wording and codes (INVALID_N, INVALID_PARAMETER).
      attachValidation: true,
      // A HEAD would generate keys only to throw them away.
      exposeHeadRoute: false,
      schema: {
        summary: 'Generate Solana wallets (ed25519 keypairs)',
        description:
          'Keys come from the operating system CSPRNG (libsodium). Returns n addresses and their keypairs in the format Phantom imports; optionally BIP39 mnemonics, ' +
          'wallets derived from one new phrase (hd), vanity addresses (like `solana-keygen grind`) and solana-keygen arrays. Responses carry `Cache-Control: no-store`; keys are never logged or stored. ' +
          'With `Accept: application/x-ndjson` the answer streams one JSON line per wallet as it is made (n up to MAX_WALLETS_STREAMED), and a vanity search streams its progress ' +
          'and each match, for up to VANITY_MAX_MS while the client stays connected; an error after the first line is a last line `{"error": problem}`.',
        tags: ['wallets'],
        querystring: generateWalletsQuerySchema(config),
        response: {
          200: {
            description: 'The wallets: one JSON body, or with `Accept: application/x-ndjson` one JSON line each as they are made',
            content: {
              'application/json': { schema: GenerateWalletsResponseSchema },
              'application/x-ndjson': { schema: GenerateWalletsStreamLineSchema },
            },
          },
          400: problem,
          401: problem,
          422: problem,
          429: problem,
          500: problem,
          503: problem,
        },
      },
    },
    async (request, reply) => {
      if (request.validationError) {
        throw queryError((request.validationError as { validation?: AjvError[] }).validation ?? [], request.query as Record<string, unknown>, config);
      }
      const query = request.query as QueryString;
      const streamed = acceptsNdjson(request.headers.accept);
      // The pattern guarantees digits only; more than 15 of them is out of range anyway.
      const n = query.n.length > 15 ? Infinity : Number(query.n);
      const prefix = query.prefix ?? '';
      const suffix = query.suffix ?? '';
      const vanity = prefix !== '' || suffix !== '';
      const maxWallets = maxWalletsOf(query, request.headers.accept, config);
      if (n > maxWallets) {
        throw invalid('n', maxWallets === config.maxWalletsPerRequest ? nRuleBroken(query.n, config) : `must be at most ${maxWallets} when streamed (MAX_WALLETS_STREAMED)`);
      }
      const mnemonic = query.mnemonic === undefined ? null : query.mnemonic === '12' ? 12 : 24;
      const hd = query.hd === undefined ? null : query.hd === '12' ? 12 : 24;
      if (mnemonic !== null && n > config.maxMnemonicWalletsPerRequest) {
        throw invalid('n', `must be at most ${config.maxMnemonicWalletsPerRequest} with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST)`);
      }
      if (prefix.length + suffix.length > config.maxVanityLength) {
        throw invalid(suffix ? 'suffix' : 'prefix', `and prefix together must have at most ${config.maxVanityLength} characters`);
      }
      if (query.ignoreCase !== undefined && !vanity) throw invalid('ignoreCase', 'applies only with prefix or suffix');
      if (mnemonic !== null && vanity) throw invalid('mnemonic', 'cannot be combined with prefix or suffix');
      if (hd !== null && mnemonic !== null) {
        throw invalid('hd', 'cannot be combined with mnemonic: hd wallets share the one phrase at the top of the answer, mnemonic gives each wallet its own');
      }
      if (hd !== null && vanity) throw invalid('hd', 'cannot be combined with prefix or suffix: derived addresses cannot be searched for');

      // Before any work: a stream and a vanity search each hold a place until they end.
      const release = acquireAll([...(vanity ? [searches] : []), ...(streamed ? [streams] : [])], request.cinderClient);
      reply.raw.once('close', release);
      if (streamed || vanity) request.log.debug({ streamed, vanity }, 'wallets request admitted');
      const abort = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) abort.abort(new Error('client closed the connection'));
      };
      reply.raw.once('close', onClose);
      const started = performance.now();
      const generateRequest: GenerateWalletsRequest = {
        n,
        mnemonic,
        hd,
        keygen: query.format === 'keygen',
        vanity: vanity ? { prefix, suffix, ignoreCase: query.ignoreCase === 'true' } : null,
        signal: abort.signal,
        client: request.cinderClient,
        ...(request.cinderStreamCharge ? { charge: request.cinderStreamCharge } : {}),
        // A streamed search has no answer to hold back: it runs while the client stays, up to VANITY_MAX_MS.
        ...(streamed ? { vanityTimeoutMs: config.vanityMaxMs } : {}),
      };
      if (streamed) {
        try {
          return await streamAnswer(request, reply, wallets, generateRequest, abort, limits.streamReadTimeoutMs);
        } finally {
          reply.raw.off('close', onClose);
          release();
        }
      }
      let result: GeneratedWallets;
      try {
        result = await wallets.generate(generateRequest);
      } catch (error) {
        if (!abort.signal.aborted) throw error;
        request.log.info('client closed the connection before its wallets were ready');
        return reply.hijack();
      } finally {
        reply.raw.off('close', onClose);
        release();
      }
      request.log.debug(
        { wallets: result.count, keysTried: result.keysTried, bytes: result.byteLength, ms: Math.round(performance.now() - started) },
        'wallets generated',
      );
      return sendWallets(reply, result);
    },
  );
}
