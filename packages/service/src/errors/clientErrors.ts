/**
 * The catalogue's other client errors (401 to 431: auth, routing, timeouts, a busy wallet, rate limits).
 * See catalogue.ts.
 */
import type { CinderErrorCode } from './contexts.ts';
import { type Entry, refused, shownPath, walletBusy } from './entry.ts';

type Codes = Extract<
  CinderErrorCode,
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'REQUEST_TIMEOUT'
  | 'TRANSACTION_NOT_FOUND'
  | 'REQUEST_IN_PROGRESS'
  | 'BURN_IN_PROGRESS'
  | 'RECLAIM_IN_PROGRESS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'URI_TOO_LONG'
  | 'RANGE_NOT_SATISFIABLE'
  | 'EXPECTATION_FAILED'
  | 'HEADERS_TOO_LARGE'
  | 'VANITY_TIMEOUT'
  | 'RATE_LIMITED'
>;

export const CLIENT_ERRORS: { readonly [C in Codes]: Entry<C> } = {
  // other client errors
  UNAUTHORIZED: {
    status: 401,
    title: 'Unauthorized',
    message: (c) => {
      switch (c.reason) {
        case 'status':
          return refused('UNAUTHORIZED');
        case 'noApiKey':
          return 'This API requires an API key: send it as Authorization: Bearer <key> or X-API-Key: <key>.';
        case 'badApiKey':
          return 'The API key is not valid.';
        case 'metricsToken':
          return 'GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.';
      }
    },
  },
  FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    message: (c) =>
      c.reason === 'status'
        ? refused('access to this path is forbidden')
        : 'GET /metrics is served to loopback clients only; set METRICS_TOKEN to read it from elsewhere.',
  },
  NOT_FOUND: {
    status: 404,
    title: 'Not Found',
    message: (c) => (c.reason === 'status' ? refused('nothing is found at this path') : `No route for ${c.method} ${shownPath(c.path)}`),
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method Not Allowed',
    message: (c) => {
      switch (c.reason) {
        case 'status':
          return refused('the method is not allowed here');
        case 'connect':
          return 'CONNECT is not supported: this is not a proxy.';
        case 'notAllowed':
          return `${c.method} is not allowed here; allowed: ${c.allowed.join(', ')}.`;
      }
    },
  },
  NOT_ACCEPTABLE: { status: 406, title: 'Not Acceptable', message: () => refused('no representation matches the Accept header') },
  REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request Timeout',
    message: (c) =>
      c.reason === 'status'
        ? refused('REQUEST_TIMEOUT')
        : `The request did not arrive in time: headers and body must be complete within ${c.timeoutMs / 1000} s.`,
  },
  TRANSACTION_NOT_FOUND: { status: 404, title: 'Transaction not found', message: (c) => `The chain has no record of transaction ${c.signature}.` },
  REQUEST_IN_PROGRESS: {
    status: 409,
    title: 'Request in progress',
    message: (c) =>
      c.reason === 'lost'
        ? 'Another request with this Idempotency-Key is in progress; this one sent nothing. Retry to get its answer.'
        : 'A request with this Idempotency-Key is still in progress. Retry when it has finished to get its answer.',
  },
  BURN_IN_PROGRESS: { status: 409, title: 'Burn in progress', message: walletBusy },
  RECLAIM_IN_PROGRESS: { status: 409, title: 'Reclaim in progress', message: walletBusy },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    title: 'Payload Too Large',
    // The routes that take many owners accept more (src/http/routes/reclaimMany.ts): the limit said is the route's.
    message: (c) => (c.reason === 'status' ? refused('PAYLOAD_TOO_LARGE') : `The request body is larger than ${Math.floor(c.limitBytes / 1024)} KiB`),
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported Media Type',
    message: (c) => {
      switch (c.reason) {
        case 'status':
          return refused('UNSUPPORTED_MEDIA_TYPE');
        case 'notJson':
          return 'Send the request body as Content-Type: application/json';
        case 'charset':
          return 'Send the request body as Content-Type: application/json (UTF-8; no other charset).';
      }
    },
  },
  URI_TOO_LONG: {
    status: 414,
    title: 'URI Too Long',
    message: (c) => (c.reason === 'status' ? refused('URI_TOO_LONG') : 'A path parameter is longer than 100 characters.'),
  },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range Not Satisfiable', message: () => refused('the requested range cannot be served') },
  EXPECTATION_FAILED: {
    status: 417,
    title: 'Expectation Failed',
    message: (c) => (c.reason === 'status' ? refused('EXPECTATION_FAILED') : 'Only "Expect: 100-continue" is supported.'),
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Request Header Fields Too Large',
    message: (c) =>
      c.reason === 'status' ? refused('HEADERS_TOO_LARGE') : 'The request line and headers are larger than the server accepts (16 KiB).',
  },
  VANITY_TIMEOUT: {
    status: 422,
    title: 'Vanity search timed out',
    message: (c) => {
      const what = [c.prefix && `prefix "${c.prefix}"`, c.suffix && `suffix "${c.suffix}"`].filter(Boolean).join(' and ');
      return (
        `Found ${c.found} of ${c.n} addresses with ${what}${c.ignoreCase ? ' (ignoring case)' : ''} in ${c.timeoutMs} ms; ` +
        `${c.keysTried} keys tried. Use a shorter pattern, ignoreCase=true or a smaller n.`
      );
    },
    members: (c) => ({ keysTried: c.keysTried }),
  },
  RATE_LIMITED: {
    status: 429,
    title: 'Too Many Requests',
    message: (c) => {
      switch (c.reason) {
        case 'bucket':
          return `Rate limit reached: ${c.max} ${c.what} per minute for this client. Retry in ${c.resetSeconds} s.`;
        case 'overBudget':
          return c.what === 'owners'
            ? `This request names ${c.n} owners, more than the budget of ${c.max} owners per minute per client (RATE_LIMIT_OWNERS_PER_MIN). Send fewer owners.`
            : `n=${c.n} is more than the budget of ${c.max} wallets per minute per client. Ask for fewer wallets.`;
        case 'budget':
          return c.what === 'owners'
            ? `Owner budget reached: ${c.max} owners per minute for this client, ${c.left} left in this window and ${c.n} named. Retry in ${c.resetSeconds} s.`
            : `Wallet budget reached: ${c.max} wallets per minute for this client, ${c.left} left in this window and n=${c.n} asked. Retry in ${c.resetSeconds} s.`;
        case 'previews':
          return `${c.running} reclaim previews of this client are running; at most ${c.perClient} at once. Retry when one has answered.`;
        case 'queuedWallets':
          return (
            `This client already has ${c.queued} wallets being generated or searched for; its share is ${c.share} at once. ` +
            'Retry when one of its requests has answered.'
          );
        case 'open':
          return `This client has ${c.open} ${c.what} open; at most ${c.perClient} at once per client (${c.setting}). Retry when one has ended.`;
      }
    },
  },
};
