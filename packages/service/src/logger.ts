import { pino, type DestinationStream, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type { LogLevel } from './config.ts';
import { scrubSecretKeys } from './keys/detectSecretKey.ts';

/**
 * Paths that may hold a secret. Cinder never logs request bodies, so these are a second line of
 * defence: if a body or header object ever reaches a log line, the secret is censored.
 */
export const REDACTED_PATHS = [
  'userPrivateKey',
  '*.userPrivateKey',
  'body.userPrivateKey',
  'userPrivateKeys',
  '*.userPrivateKeys',
  'body.userPrivateKeys',
  'feePayerPrivateKey',
  '*.feePayerPrivateKey',
  'body.feePayerPrivateKey',
  'req.body',
  'privateKey',
  '*.privateKey',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
];

/**
 * An error as it may be logged: its type, code, status, message and stack, nothing else. pino's
 * standard serializer copies every enumerable property, and some errors carry request bytes
 * (Node's HTTP parser errors have `rawPacket`, the raw socket data, a pipelined body included).
 * Any 64-byte private key in the message or stack is replaced as a last guard.
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return typeof value === 'string' ? scrubSecretKeys(value) : value;
  const error = value as Error & { code?: unknown; statusCode?: unknown };
  return {
    type: error.name,
    message: scrubSecretKeys(error.message),
    ...(typeof error.code === 'string' || typeof error.code === 'number' ? { code: error.code } : {}),
    ...(typeof error.statusCode === 'number' ? { statusCode: error.statusCode } : {}),
    ...(error.stack ? { stack: scrubSecretKeys(error.stack) } : {}),
    ...(error.cause !== undefined ? { cause: serializeError(error.cause) } : {}),
  };
}

/** A reply in a log line: its status only. */
function serializeResponse(value: unknown): unknown {
  const reply = value as { statusCode?: unknown } | null;
  return reply && typeof reply === 'object' ? { statusCode: reply.statusCode } : value;
}

/**
 * `pretty`: one readable line per event (pino-pretty, in this thread, writing synchronously so the
 * last lines before an exit are not lost), for a person at a terminal. Otherwise one JSON object
 * per line, for supervisors and log collectors. Redaction happens before either.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream, format: { pretty?: boolean } = {}): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError, error: serializeError, res: serializeResponse },
  };
  const stream = format.pretty
    ? // Loaded only for a terminal: JSON lines (supervisors, pipes, the tests) never pay for it.
      (createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty'))({ destination: destination ?? 1, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' })
    : destination;
  return stream ? pino(options, stream) : pino(options);
}
