/**
 * The catalogue's codes of a request refused as sent (its body, fields, URL, method, limits), before any
 * operation ran. See catalogue.ts.
 */
import type { CinderErrorCode } from './contexts.ts';
import { type Entry, PRIVATE_KEY_FORMATS, addressFields, fieldNames, itemRefusal, refused, schemaFields } from './entry.ts';

type Codes = Extract<
  CinderErrorCode,
  | 'INVALID_JSON'
  | 'VALIDATION_FAILED'
  | 'MISSING_FIELD'
  | 'UNKNOWN_FIELD'
  | 'INVALID_MINT'
  | 'INVALID_PRIORITY_FEE'
  | 'INVALID_PRIVATE_KEY'
  | 'INVALID_N'
  | 'INVALID_PARAMETER'
  | 'INVALID_SIGNATURE'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INVALID_IDEMPOTENCY_KEY'
  | 'BAD_REQUEST'
  | 'PRIVATE_KEY_IN_URL'
>;

export const REQUEST_ERRORS_400: { readonly [C in Codes]: Entry<C> } = {
  // 400: the request itself is wrong
  INVALID_JSON: {
    status: 400,
    title: 'Malformed JSON body',
    message: (c) => (c.reason === 'empty' ? 'The request body is empty; a JSON object is expected' : 'The request body is not valid JSON'),
  },
  VALIDATION_FAILED: {
    status: 400,
    title: 'Invalid request',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'addresses':
          return addressFields(c);
        case 'item':
          return itemRefusal(c);
        case 'contentLength':
          return 'Content-Length does not match the body';
        case 'tooManyTransactions':
          return `These owners need ${c.transactions} transactions; one prepare holds at most ${c.max}. Send fewer owners per request. Nothing was prepared.`;
        case 'sponsorForMany':
          return `feePayer "sponsor" is not available for many owners: ${c.problem}. Nothing was sent.`;
        case 'tooManyItems':
          return `${c.field} ${c.problem}: send them in several requests. Nothing was sent.`;
        case 'bothForms':
          return `The body has both ${c.single} and ${c.many}: ${c.problem}.`;
        case 'relayCount':
          return `transactions must hold 1 to ${c.max} transactions.`;
      }
    },
  },
  MISSING_FIELD: {
    status: 400,
    title: 'Missing required field',
    message: (c) => `Missing required field${c.fields.length + c.more > 1 ? 's' : ''}: ${fieldNames(c)}`,
  },
  UNKNOWN_FIELD: {
    status: 400,
    title: 'Unknown field',
    message: (c) => `Unknown field${c.fields.length + c.more > 1 ? 's' : ''}: ${fieldNames(c)}`,
  },
  INVALID_MINT: {
    status: 400,
    title: 'Invalid mint',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'addresses':
          return addressFields(c);
        case 'notAddress':
          return `${c.field} is not a valid base58 Solana address (32 bytes)`;
        case 'notMint':
          return `${c.mint} is not a mint of the SPL Token or Token-2022 program. Nothing was sent.`;
      }
    },
  },
  INVALID_PRIORITY_FEE: {
    status: 400,
    title: 'Invalid priority fee',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'rule':
          return `priorityFee ${c.problem}`;
        case 'sponsorMax':
          return `priorityFee is too high: ${c.problem}. Lower priorityFee, or pay the fee yourself. Nothing was sent.`;
      }
    },
    members: (c) => (c.reason === 'sponsorMax' ? { maxFeeLamports: c.maxFeeLamports.toString() } : {}),
  },
  INVALID_PRIVATE_KEY: {
    status: 400,
    title: 'Invalid private key',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'addresses':
          return addressFields(c);
        // The problem names the format's fault only, never a byte or character of the key (src/keys/parsePrivateKey.ts).
        case 'unparsable':
          return `userPrivateKey is not a valid private key: ${c.problem}. Accepted: ${PRIVATE_KEY_FORMATS}.`;
        case 'walletAddress':
          return (
            `userPrivateKey looks like a wallet address, not a private key: read as a 32-byte seed it signs for ${c.owner}, ` +
            'a wallet with no SOL and no token accounts. Send the 64-byte secret key (Phantom: Export Private Key) instead.'
          );
        case 'keys':
          return `${c.fields.join(', ')} ${c.problem}. Nothing was sent.`;
      }
    },
  },
  INVALID_N: { status: 400, title: 'Invalid number of wallets', message: schemaFields },
  INVALID_PARAMETER: { status: 400, title: 'Invalid parameter', message: schemaFields },
  INVALID_SIGNATURE: {
    status: 400,
    title: 'Invalid transaction signature',
    message: (c) => {
      if (c.reason === 'schema') return schemaFields(c);
      if (c.reason === 'listedKey') return 'A listed value is a private key, not a signature; it was not used, logged or forwarded.';
      if (c.reason === 'listedNotSignatures')
        return `${c.count === 1 ? 'A listed value is' : `${c.count} listed values are`} not a base58 transaction signature (64 bytes).`;
      return 'signature is not a base58 transaction signature (64 bytes)';
    },
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 400,
    title: 'Idempotency key reused with a different request',
    message: () => 'This Idempotency-Key was used with a different request body in the last 24 hours. Use a new key for a new request.',
  },
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    title: 'Invalid idempotency key',
    message: () => 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID is a good choice).',
  },
  // the HTTP edge (src/http/edge.ts): malformed requests refused before any route runs
  BAD_REQUEST: {
    status: 400,
    title: 'Bad Request',
    message: (c) => {
      switch (c.reason) {
        case 'status':
          return refused('the request is malformed');
        case 'targetNotPath':
          return 'The request target must be a path (or an absolute http URL).';
        case 'targetFragment':
          return 'The request target has a fragment (#), which is never sent to a server.';
        case 'malformedPercent':
          return 'The path has a malformed percent-encoding.';
        case 'encodedSeparator':
          return 'The path has a percent-encoded separator or control character, which is not allowed.';
        case 'noHost':
          return 'An HTTP/1.1 request needs a Host header.';
        case 'invalidUrl':
          return 'The request target is not a valid URL.';
        case 'framing':
          return 'The request body framing (Content-Length / Transfer-Encoding: chunked) is not valid.';
        case 'notHttp':
          return 'The request is not valid HTTP/1.1.';
        case 'pathNotUtf8':
          return 'The path has a percent-encoding that does not decode to UTF-8.';
        case 'unroutable':
          return 'The request could not be routed.';
      }
    },
  },
  PRIVATE_KEY_IN_URL: {
    status: 400,
    title: 'Private key in the URL',
    message: (c) =>
      c.reason === 'signaturePath'
        ? 'The path holds a private key, not a signature; it was not used, logged or forwarded.'
        : 'The URL contains a private key; it was not used, logged or forwarded. A key belongs only in the JSON body of a POST. ' +
          'Treat this key as exposed (URLs are kept by browsers and proxies): move its funds to a new wallet.',
  },
};
