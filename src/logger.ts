import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

/**
 * Paths that may hold a secret. Cinder never logs request bodies, so these are a second line of
 * defence: if a body or header object ever reaches a log line, the secret is censored.
 */
export const REDACTED_PATHS = [
  'userPrivateKey',
  '*.userPrivateKey',
  'body.userPrivateKey',
  'req.body',
  'privateKey',
  '*.privateKey',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
