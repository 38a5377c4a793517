import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { CinderError, toProblem, type CinderErrorCode, type CinderErrorContexts, type FieldProblem, type SchemaFields, type StatusRefusal } from '../errors.ts';
import { scrubSecretKeys } from '../keys/detectSecretKey.ts';

/** The problem+json schema shared by every error response (referenced as `Problem#`). */
export const ProblemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'Stable SCREAMING_SNAKE error code' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  additionalProperties: true,
} as const;

/** The codes whose context may be schema failures of fields. */
type SchemaFieldsCode = { [C in CinderErrorCode]: SchemaFields extends CinderErrorContexts[C] ? C : never }[CinderErrorCode];

/** Which error code a schema failure of a given field gets; fields not listed get VALIDATION_FAILED. */
const FIELD_CODES: Record<string, SchemaFieldsCode> = {
  mint: 'INVALID_MINT',
  priorityFee: 'INVALID_PRIORITY_FEE',
  userPrivateKey: 'INVALID_PRIVATE_KEY',
  userPrivateKeys: 'INVALID_PRIVATE_KEY',
  n: 'INVALID_N',
  signature: 'INVALID_SIGNATURE',
};

/**
 * What to send instead, for a field given as the wrong JSON type, where Ajv's "must be number"
 * would leave the client guessing (a fee written "0.001", in quotes, is the usual mistake).
 */
const TYPE_MESSAGES: Record<string, string> = {
  priorityFee: 'must be a JSON number of SOL (e.g. 0.001, without quotes), or "auto" (a fee from the cluster\'s recent fees)',
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** At most this many field problems (and names in a detail) per answer: a body of 16 KiB of unknown fields must not make a 75 KB answer. */
export const MAX_LISTED_FIELDS = 5;

/**
 * A field name as it may be echoed: a client's own unknown field names are shown only when they
 * are short identifiers (a 32-byte key in base58 is 43 characters or more).
 */
export function safeFieldName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]{0,31}(\[[0-9]{1,4}\])?$/.test(name) ? name : '(a field name that is not shown)';
}

/**
 * Lists whose items are each a thing of their own (a wallet, its key, a mint): a problem of an item
 * names its index (`owners[2]`), so that every bad item of a pasted list is found at once. (A key
 * given as an array of 64 numbers is one value, not such a list.)
 */
const ITEM_LISTS = new Set(['owners', 'userPrivateKeys', 'mints', 'burn', 'transactions']);

/** At most this many problems of list items per answer; their number is also bounded by the list's own limit (MAX_OWNERS_PER_REQUEST). */
export const MAX_LISTED_ITEMS = 10_000;

const isItem = (field: string) => /\[[0-9]+\]$/.test(field);

/** In their order: every bad item of a list (up to MAX_LISTED_ITEMS), and at most MAX_LISTED_FIELDS other fields. */
function capped<P extends { field: string }>(problems: readonly P[]): P[] {
  let items = 0;
  let fields = 0;
  return problems.filter((p) => (isItem(p.field) ? ++items <= MAX_LISTED_ITEMS : ++fields <= MAX_LISTED_FIELDS));
}

function fieldOf(error: AjvError): string {
  const [path = '', index] = error.instancePath.replace(/^\//, '').split('/');
  if (error.keyword === 'required') return safeFieldName(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') return safeFieldName(String(error.params.additionalProperty));
  if (path !== '' && index !== undefined && /^[0-9]{1,4}$/.test(index) && ITEM_LISTS.has(path)) return `${path}[${index}]`;
  return path === '' ? '' : safeFieldName(path);
}

/** The names to list (at most MAX_LISTED_FIELDS, each once) and how many more there are: "a, b, c, d, e and 12 more". */
function listedNames(names: string[]): { fields: string[]; more: number } {
  const unique = [...new Set(names)];
  return { fields: unique.slice(0, MAX_LISTED_FIELDS), more: Math.max(0, unique.length - MAX_LISTED_FIELDS) };
}

/**
 * Turns Ajv's schema errors into one CinderError. Ajv messages describe the schema, never the
 * value, so nothing the client sent (such as a key) is echoed.
 */
export function validationToCinderError(errors: AjvError[], context: string): CinderError {
  const missing = errors.filter((e) => e.keyword === 'required').map(fieldOf);
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties').map(fieldOf);
  // One line per field: anyOf yields one error per branch plus a summary, which reads badly.
  const byField = new Map<string, AjvError[]>();
  for (const e of errors) byField.set(fieldOf(e), [...(byField.get(fieldOf(e)) ?? []), e]);
  const problems: FieldProblem[] = [...byField].map(([field, fieldErrors]) => {
    const first = fieldErrors[0]!;
    const message =
      first.keyword === 'required'
        ? 'is required'
        : first.keyword === 'additionalProperties'
          ? 'is not a known field'
          : fieldErrors.some((e) => e.keyword === 'anyOf')
            ? (TYPE_MESSAGES[field] ?? 'is not in any of the accepted forms')
            : ((first.keyword === 'type' ? TYPE_MESSAGES[field] : undefined) ?? first.message ?? 'is invalid');
    return { field: field || context, message };
  });
  const listed = capped(problems);
  if (missing.length > 0) {
    return new CinderError('MISSING_FIELD', listedNames(missing), { errors: listed });
  }
  if (unknown.length > 0) {
    return new CinderError('UNKNOWN_FIELD', listedNames(unknown), { errors: listed });
  }
  const first = problems[0];
  const code = (first && FIELD_CODES[first.field.replace(/\[[0-9]+\]$/, '')]) ?? 'VALIDATION_FAILED';
  return new CinderError(code, { reason: 'schema', problems: listed, more: problems.length - listed.length }, { errors: listed });
}

const FASTIFY_CODES: Record<string, (bodyLimit: number) => CinderError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new CinderError('INVALID_JSON', { reason: 'malformed' }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new CinderError('INVALID_JSON', { reason: 'empty' }),
  // The routes that take many owners accept more (src/http/routes/reclaimMany.ts): the limit said is the route's.
  FST_ERR_CTP_BODY_TOO_LARGE: (bodyLimit) => new CinderError('PAYLOAD_TOO_LARGE', { reason: 'body', limitBytes: bodyLimit }),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new CinderError('UNSUPPORTED_MEDIA_TYPE', { reason: 'notJson' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new CinderError('VALIDATION_FAILED', { reason: 'contentLength' }),
};

/** The codes with a situation of their own for a 4xx raised with a status only. */
type StatusRefusalCode = { [C in CinderErrorCode]: StatusRefusal extends CinderErrorContexts[C] ? C : never }[CinderErrorCode];

/**
 * The code for a 4xx that a plugin (static files, swagger) or Fastify raised with its own status:
 * the status is kept (a 403 of @fastify/static stays a 403), the plugin's message is not (it may
 * quote the path). A 4xx without an entry becomes 400 BAD_REQUEST.
 */
const CODE_OF_STATUS: Record<number, StatusRefusalCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  416: 'RANGE_NOT_SATISFIABLE',
  417: 'EXPECTATION_FAILED',
  431: 'HEADERS_TOO_LARGE',
};

/**
 * The client went away (closed or reset its connection) before the answer. Decided by the state
 * of the client's socket, not by the error's code: an upstream (RPC) connection reset has the same
 * codes and must still be answered.
 */
export function isClientAbort(request: FastifyRequest): boolean {
  const socket = request.raw.socket as { destroyed?: boolean } | null | undefined;
  return socket?.destroyed === true;
}

/** Maps anything thrown while handling a request to the CinderError the client sees. */
export function toCinderError(error: unknown, bodyLimit = 16 * 1024): { cinderError: CinderError; unexpected: boolean } {
  if (error instanceof CinderError) return { cinderError: error, unexpected: false };
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return { cinderError: validationToCinderError(fastifyError.validation, fastifyError.validationContext ?? 'body'), unexpected: false };
  }
  const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) return { cinderError: known(bodyLimit), unexpected: false };
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return { cinderError: new CinderError('INVALID_JSON', { reason: 'malformed' }), unexpected: false };
  }
  const status = fastifyError.statusCode ?? (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { cinderError: new CinderError(CODE_OF_STATUS[status] ?? 'BAD_REQUEST', { reason: 'status' }), unexpected: false };
  }
  return {
    cinderError: new CinderError('INTERNAL_ERROR'),
    unexpected: true,
  };
}

/**
 * The problem body as sent: a last guard on what is echoed. Field lists are capped, field names
 * that could hold a value are hidden, and any 64-byte private key in a text is replaced (routes
 * never put one there; this keeps a future mistake from reaching a client).
 */
function boundedProblem(error: CinderError): Record<string, unknown> {
  const problem = toProblem(error);
  problem.detail = scrubSecretKeys(problem.detail).slice(0, 2_000);
  if (problem.errors) {
    problem.errors = capped(problem.errors).map((e) => ({
      // Field paths the routes write (`transactions[0]`) pass; a name that could be a key does not.
      field: e.field.length <= 64 && !/[1-9A-HJ-NP-Za-km-z]{32,}/.test(e.field) ? e.field : safeFieldName(e.field),
      message: scrubSecretKeys(e.message).slice(0, 500),
    }));
  }
  return problem;
}

export function sendProblem(reply: FastifyReply, error: CinderError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/problem+json; charset=utf-8')
    .send(boundedProblem(error));
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (isClientAbort(request)) {
    // Nobody is left to answer: not an error of the server, not an error answer (the edge's
    // onRequestAbort hook logs it at debug).
    reply.hijack();
    request.raw.destroy();
    return reply;
  }
  const { cinderError, unexpected } = toCinderError(error, request.routeOptions?.bodyLimit);
  if (unexpected) {
    // Only the error's type, message and stack: never the request body. Our own code never puts
    // key material in an error message (see keys/parsePrivateKey.ts).
    request.log.error({ err: error }, 'unexpected error');
  } else if (cinderError.status >= 500) {
    request.log.warn({ code: cinderError.code, detail: cinderError.message }, 'request failed');
  }
  return sendProblem(reply, cinderError);
}
