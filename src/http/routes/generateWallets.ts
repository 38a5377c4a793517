import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { AppDeps, CinderApp } from '../types.ts';
import type { Config } from '../../config.ts';
import { CinderError, type FieldProblem } from '../../errors.ts';
import { validationToCinderError } from '../problem.ts';
import type { GeneratedWallets } from '../../wallets/index.ts';

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
        description: `Number of wallets: a base-10 integer from 1 to ${config.maxWalletsPerRequest} (MAX_WALLETS_PER_REQUEST); at most ${config.maxMnemonicWalletsPerRequest} with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST). No sign, exponent, leading zero or space.`,
        examples: ['10'],
      }),
      mnemonic: Type.Optional(
        Type.Union([Type.Literal('12'), Type.Literal('24')], {
          description: "Also return a BIP39 mnemonic of 12 or 24 words for each wallet; the key is the one derived at m/44'/501'/0'/0', as in Phantom and Solflare.",
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
  secretKeyBytes: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), {
      minItems: 64,
      maxItems: 64,
      description: 'With format=keygen: the same 64 bytes as a solana-keygen id.json array',
    }),
  ),
});

export const GenerateWalletsResponseSchema = Type.Object({
  wallets: Type.Array(Type.String(), { description: 'The n addresses; wallets[i] is keypairs[i].address' }),
  keypairs: Type.Array(KeypairSchema),
});

interface QueryString {
  n: string;
  mnemonic?: '12' | '24';
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
  return new CinderError(field === 'n' ? 'INVALID_N' : 'INVALID_PARAMETER', `${field} ${message}`, { errors: [{ field, message }] });
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
  return new CinderError(code, errors.map((p) => `${p.field} ${p.message}`).join('; '), { errors });
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

const problem = Type.Ref('Problem');

export function registerGenerateWalletsRoute(app: CinderApp, { config, wallets }: Pick<AppDeps, 'config' | 'wallets'>): void {
  app.get(
    '/api/generate_wallets',
    {
      // Query problems get this route's own wording and codes (INVALID_N, INVALID_PARAMETER).
      attachValidation: true,
      // A HEAD would generate keys only to throw them away.
      exposeHeadRoute: false,
      schema: {
        summary: 'Generate Solana wallets (ed25519 keypairs)',
        description:
          'Keys come from the operating system CSPRNG (libsodium). Returns n addresses and their keypairs in the format Phantom imports; optionally BIP39 mnemonics, vanity addresses (like `solana-keygen grind`) and solana-keygen arrays. Responses carry `Cache-Control: no-store`; keys are never logged or stored.',
        tags: ['wallets'],
        querystring: generateWalletsQuerySchema(config),
        response: {
          200: GenerateWalletsResponseSchema,
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
      // The pattern guarantees digits only; more than 15 of them is out of range anyway.
      const n = query.n.length > 15 ? Infinity : Number(query.n);
      if (n > config.maxWalletsPerRequest) throw invalid('n', nRuleBroken(query.n, config));
      const mnemonic = query.mnemonic === undefined ? null : query.mnemonic === '12' ? 12 : 24;
      if (mnemonic !== null && n > config.maxMnemonicWalletsPerRequest) {
        throw invalid('n', `must be at most ${config.maxMnemonicWalletsPerRequest} with mnemonic (MAX_MNEMONIC_WALLETS_PER_REQUEST)`);
      }
      const prefix = query.prefix ?? '';
      const suffix = query.suffix ?? '';
      const vanity = prefix !== '' || suffix !== '';
      if (prefix.length + suffix.length > config.maxVanityLength) {
        throw invalid(suffix ? 'suffix' : 'prefix', `and prefix together must have at most ${config.maxVanityLength} characters`);
      }
      if (query.ignoreCase !== undefined && !vanity) throw invalid('ignoreCase', 'applies only with prefix or suffix');
      if (mnemonic !== null && vanity) throw invalid('mnemonic', 'cannot be combined with prefix or suffix');

      const abort = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) abort.abort(new Error('client closed the connection'));
      };
      reply.raw.once('close', onClose);
      const started = performance.now();
      let result: GeneratedWallets;
      try {
        result = await wallets.generate({
          n,
          mnemonic,
          keygen: query.format === 'keygen',
          vanity: vanity ? { prefix, suffix, ignoreCase: query.ignoreCase === 'true' } : null,
          signal: abort.signal,
          client: request.cinderClient,
        });
      } catch (error) {
        if (!abort.signal.aborted) throw error;
        request.log.info('client closed the connection before its wallets were ready');
        return reply.hijack();
      } finally {
        reply.raw.off('close', onClose);
      }
      request.log.debug(
        { wallets: result.count, keysTried: result.keysTried, bytes: result.byteLength, ms: Math.round(performance.now() - started) },
        'wallets generated',
      );
      return sendWallets(reply, result);
    },
  );
}
