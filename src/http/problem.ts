import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { CinderError, toProblem, type CinderErrorCode, type FieldProblem } from '../errors.ts';

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

/** Which error code a schema failure of a given field gets; fields not listed get VALIDATION_FAILED. */
const FIELD_CODES: Record<string, CinderErrorCode> = {
  mint: 'INVALID_MINT',
  priorityFee: 'INVALID_PRIORITY_FEE',
  userPrivateKey: 'INVALID_PRIVATE_KEY',
  n: 'INVALID_N',
  signature: 'INVALID_SIGNATURE',
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldOf(error: AjvError): string {
  const path = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  if (error.keyword === 'required') return String(error.params.missingProperty);
  if (error.keyword === 'additionalProperties') return String(error.params.additionalProperty);
  return path;
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
            ? 'is not in any of the accepted forms'
            : (first.message ?? 'is invalid');
    return { field: field || context, message };
  });
  if (missing.length > 0) {
    return new CinderError('MISSING_FIELD', `Missing required field${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`, { errors: problems });
  }
  if (unknown.length > 0) {
    return new CinderError('UNKNOWN_FIELD', `Unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, { errors: problems });
  }
  const first = problems[0];
  const code = (first && FIELD_CODES[first.field]) ?? 'VALIDATION_FAILED';
  const detail = problems.map((p) => `${p.field} ${p.message}`).join('; ');
  return new CinderError(code, detail, { errors: problems });
}

const FASTIFY_CODES: Record<string, () => CinderError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new CinderError('INVALID_JSON', 'The request body is not valid JSON'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new CinderError('INVALID_JSON', 'The request body is empty; a JSON object is expected'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new CinderError('PAYLOAD_TOO_LARGE', 'The request body is larger than 16 KiB'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new CinderError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as Content-Type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new CinderError('VALIDATION_FAILED', 'Content-Length does not match the body'),
};

/** Maps anything thrown while handling a request to the CinderError the client sees. */
export function toCinderError(error: unknown): { cinderError: CinderError; unexpected: boolean } {
  if (error instanceof CinderError) return { cinderError: error, unexpected: false };
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return { cinderError: validationToCinderError(fastifyError.validation, fastifyError.validationContext ?? 'body'), unexpected: false };
  }
  const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) return { cinderError: known(), unexpected: false };
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return { cinderError: new CinderError('INVALID_JSON', 'The request body is not valid JSON'), unexpected: false };
  }
  return {
    cinderError: new CinderError('INTERNAL_ERROR', 'An unexpected error occurred. The request id identifies it in the server log.'),
    unexpected: true,
  };
}

export function sendProblem(reply: FastifyReply, error: CinderError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/problem+json; charset=utf-8')
    .send(toProblem(error));
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { cinderError, unexpected } = toCinderError(error);
  if (unexpected) {
    // Only the error's type, message and stack: never the request body. Our own code never puts
    // key material in an error message (see keys/parsePrivateKey.ts).
    request.log.error({ err: error }, 'unexpected error');
  } else if (cinderError.status >= 500) {
    request.log.warn({ code: cinderError.code, detail: cinderError.message }, 'request failed');
  }
  return sendProblem(reply, cinderError);
}
