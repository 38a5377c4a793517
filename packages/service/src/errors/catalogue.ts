/**
 * The catalogue of Cinder's errors: per code its HTTP status, its problem title, its ONE message
 * (written from the code's context, src/errors/contexts.ts) and the members it adds to the problem
 * body. A throw site names a code and gives the facts; it never words the message itself, so a
 * code reads the same wherever it is raised (the model of @solana/kit's SolanaError).
 *
 * Messages are for people and never hold any part of a private key: contexts carry only values
 * that are safe to echo, and a path is shown only when it cannot hold a key.
 */
import type {
  AddressFields,
  BlockedAccounts,
  CinderErrorCode,
  CinderErrorContext,
  CinderProblemMembers,
  FieldProblem,
  ItemRefusal,
  SchemaFields,
  SkippedAccountMember,
  WalletBusy,
} from './contexts.ts';
import { formatNetSol, formatSol } from './format.ts';

/** What a client may send as a key, as said in messages and in the API description. */
export const PRIVATE_KEY_FORMATS =
  'base58 of the 64-byte secret key (Phantom/Solflare export), base58 of the 32-byte seed, ' +
  'or the solana-keygen JSON array of 64 numbers';

type Entry<C extends CinderErrorCode> = {
  status: number;
  title: string;
  message: (context: CinderErrorContext<C>) => string;
} & (C extends keyof CinderProblemMembers
  ? { members: (context: CinderErrorContext<C>) => CinderProblemMembers[C] }
  : { members?: never });

const fieldList = (problems: readonly FieldProblem[]) => problems.map((p) => `${p.field} ${p.message}`).join('; ');

function schemaFields({ problems, more }: SchemaFields): string {
  return fieldList(problems) + (more ? `; and ${more} more` : '');
}

function addressFields({ problems, keyExposed }: AddressFields): string {
  const count = problems.length === 1 ? '' : `${problems.length} fields are wrong: `;
  const exposed = keyExposed ? ' A private key sent where an address belongs has left your machine: move what its wallet holds to a new wallet.' : '';
  return `${count}${fieldList(problems)}.${exposed} Nothing was sent.`;
}

const itemRefusal = ({ field, problem }: ItemRefusal) => `${field} ${problem}. Nothing was sent.`;

const reasons = (skipped: readonly SkippedAccountMember[]) => skipped.map((s) => s.reason).join('; ');

const blocked = ({ skipped }: BlockedAccounts) => `${reasons(skipped)}. Nothing was sent.`;

function blockedMembers(context: BlockedAccounts | { reason: string }): CinderProblemMembers['ACCOUNT_FROZEN'] {
  if (!('skipped' in context)) return {};
  return { accounts: context.skipped.map((s) => s.address), skippedAccounts: [...context.skipped] };
}

function walletBusy({ wallet, holder }: WalletBusy): string {
  return holder === 'sponsored transaction'
    ? `Another sponsored transaction of ${wallet} is landing, or was sent and may still land (for up to about a minute). Nothing was sent by this request; retry shortly.`
    : `Another burn or reclaim of ${wallet} is running, or sent transactions that may still land (for up to about a minute). Nothing was sent by this request; retry shortly.`;
}

/** A 4xx raised by a plugin with its own status: the status in words, never the plugin's message (it may quote the path). */
const refused = (what: string) => `The request was refused: ${what}.`;

/** A path is echoed only when short and free of anything that could be a key (32 bytes or more of base58). */
const shownPath = (path: string) => (path.length <= 100 && !/[1-9A-HJ-NP-Za-km-z]{32,}/.test(path) ? path : '(path not shown)');

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function fieldNames({ fields, more }: { fields: readonly string[]; more: number }): string {
  return fields.join(', ') + (more > 0 ? ` and ${more} more` : '');
}

export const CATALOGUE: { readonly [C in CinderErrorCode]: Entry<C> } = {
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
    message: (c) => (c.reason === 'schema' ? schemaFields(c) : 'signature is not a base58 transaction signature (64 bytes)'),
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
  // 400: the chain state does not allow the operation; nothing was sent
  MINT_NOT_FOUND: {
    status: 400,
    title: 'Mint not found',
    message: (c) =>
      `No account exists at mint address ${c.mint}. Nothing was sent.` +
      (c.localChain
        ? ' Cinder is running on its embedded local chain (no SOLANA_RPC_URL set), which only has the mints created on it; set SOLANA_RPC_URL to use a real cluster.'
        : ''),
  },
  NO_TOKEN_ACCOUNT: {
    status: 400,
    title: 'No token account',
    message: (c) => (c.reason === 'none' ? `${c.owner} has no token account of mint ${c.mint}. Nothing was sent.` : blocked(c)),
    members: blockedMembers,
  },
  ACCOUNT_FROZEN: {
    status: 400,
    title: 'Token account is frozen',
    message: (c) => (c.reason === 'simulation' ? 'A token account is frozen. Nothing was sent.' : blocked(c)),
    members: blockedMembers,
  },
  CLOSE_AUTHORITY_NOT_OWNER: { status: 400, title: 'Close authority is not the owner', message: blocked, members: blockedMembers },
  CONFIDENTIAL_BALANCE_NOT_EMPTY: { status: 400, title: 'Confidential balance not empty', message: blocked, members: blockedMembers },
  INSUFFICIENT_SOL_FOR_FEE: {
    status: 400,
    title: 'Insufficient SOL for fee',
    message: (c) => {
      if (c.reason === 'simulation') return `${c.feePayer} does not hold enough SOL to pay the transaction fee. Nothing was sent.`;
      const of = c.transactions === undefined ? '' : ` of the ${plural(c.transactions, 'transaction')}`;
      return (
        `${c.separateFeePayer ? 'The fee payer ' : ''}${c.feePayer} holds ${formatSol(c.balance)} SOL; the fees${of} are ${formatSol(c.fees)} SOL ` +
        `and a fee payer must keep ${formatSol(c.reserve)} SOL (the rent-exempt minimum) or end at exactly 0, so ${formatSol(c.missing)} SOL more is needed. Nothing was sent.`
      );
    },
    members: (c) =>
      c.reason === 'simulation'
        ? {}
        : {
            balanceLamports: c.balance.toString(),
            feeLamports: c.fees.toString(),
            reserveLamports: c.reserve.toString(),
            missingLamports: c.missing.toString(),
          },
  },
  TRANSACTION_REJECTED: {
    status: 400,
    title: 'Transaction rejected by simulation',
    message: (c) => {
      switch (c.reason) {
        case 'item':
          return itemRefusal(c);
        case 'simulation':
          return `The transaction would fail on chain (${c.error}). Nothing was sent.`;
        case 'owners':
          return (
            `The transaction of owners ${c.owners.join(', ')} would fail on chain (${c.error}); ` +
            'their accounts changed since they were read, or cannot be closed. Preview again. Nothing was sent.'
          );
        case 'accounts':
          return `${[...new Set(c.skipped.map((s) => s.reason))].join('; ')}. Nothing was sent.`;
      }
    },
    members: (c) => (c.reason === 'accounts' ? { skippedAccounts: [...c.skipped] } : {}),
  },
  // the money rules and the whole-wallet reclaim (src/plan, src/operations)
  INVALID_OWNER: {
    status: 400,
    title: 'Invalid owner',
    message: (c) => {
      switch (c.reason) {
        case 'schema':
          return schemaFields(c);
        case 'addresses':
          return addressFields(c);
        case 'notAddress':
          return `${c.field} is not a valid base58 Solana address (32 bytes)`;
      }
    },
  },
  FEE_EXCEEDS_RECLAIM: {
    status: 400,
    title: 'Fees exceed what is reclaimed',
    message: (c) =>
      c.reason === 'sponsorNotRepaid'
        ? 'The fee sponsor only pays for transactions whose reclaimed rent repays it in full, leaving the owner a valid balance; this one would not. Nothing was sent.'
        : `The fees (${formatSol(c.fees)} SOL) are larger than what comes back (${formatSol(c.returns)} SOL): net ${formatNetSol(c.returns - c.fees)} SOL. ` +
          'Lower priorityFee, or send "allowNetLoss": true to accept the loss. Nothing was sent.',
    members: (c) =>
      c.reason === 'sponsorNotRepaid'
        ? {}
        : { reclaimLamports: c.returns.toString(), feeLamports: c.fees.toString(), netLamports: (c.returns - c.fees).toString() },
  },
  MINT_PAUSED: {
    status: 400,
    title: 'Mint is paused',
    message: (c) => (c.reason === 'simulation' ? 'The mint is paused. Nothing was sent.' : blocked(c)),
    members: blockedMembers,
  },
  BURN_NOT_PERMITTED: { status: 400, title: 'Burn not permitted', message: blocked, members: blockedMembers },
  NOTHING_TO_RECLAIM: {
    status: 400,
    title: 'Nothing to reclaim',
    message: (c) => {
      const skipped = c.skipped.length > 0 ? ` Skipped: ${reasons(c.skipped)}.` : '';
      if (c.reason === 'owners') return `None of the ${c.owners} owners has an account to close.${skipped} Nothing was sent.`;
      const asked = [
        'no empty token account to close',
        ...(c.burnListed ? ['no account of the listed mints to burn'] : []),
        ...(c.withdrawExcess ? ['no excess rent to withdraw'] : []),
      ];
      return `${c.owner} has nothing to reclaim: ${asked.join(', ')}.${skipped} Nothing was sent.`;
    },
    members: (c) => ({ skippedAccounts: [...c.skipped] }),
  },
  // the relay of transactions signed elsewhere (src/operations/relay.ts); nothing was sent
  INVALID_TRANSACTION: { status: 400, title: 'Invalid transaction', message: itemRefusal },
  TRANSACTION_NOT_SIGNED: { status: 400, title: 'Transaction not fully signed', message: itemRefusal },
  PROGRAM_NOT_ALLOWED: {
    status: 400,
    title: 'Program not allowed',
    message: (c) =>
      c.reason === 'item'
        ? itemRefusal(c)
        : `A sponsored transaction would invoke ${c.invoked}; the fee sponsor pays only for ${c.allowed.join(', ')} at any depth. Nothing was sent.`,
  },
  RELAY_TOKEN_INVALID: {
    status: 400,
    title: 'Relay token invalid',
    message: (c) => (c.reason === 'token' ? `${c.problem} Nothing was sent.` : `${c.field} ${c.problem}; the fee sponsor does not sign it. Nothing was sent.`),
  },
  INSTRUCTION_NOT_ALLOWED: { status: 400, title: 'Instruction not allowed', message: itemRefusal },
  TRANSACTIONS_CONFLICT: { status: 400, title: 'Transactions conflict', message: itemRefusal },
  // the fee sponsor's policy (src/operations/sponsorPolicy.ts)
  SPONSOR_DECLINED: {
    status: 403,
    title: 'Fee sponsor declines this wallet',
    message: (c) =>
      `The fee sponsor does not pay for ${c.owner} until ${c.until.toISOString()}: ${c.why}. Pay the fee from the wallet itself ` +
      '(send feePayer "owner" after funding it with a little SOL). Nothing was sent.',
    members: (c) => ({ until: c.until.toISOString() }),
  },
  SPONSORED_OPERATION_IN_PROGRESS: {
    status: 409,
    title: 'Sponsored operation in progress',
    message: (c) => {
      if (c.reason === 'busy') return walletBusy(c);
      const one = c.signatures.length === 1;
      const named = c.signatures.length > 0 ? ` (${c.signatures.join(', ')})` : '';
      return (
        `${c.what ?? `A sponsored operation of ${c.owner}`} is in flight: its owner-signed sponsored transaction${one ? '' : 's'}${named} may land until ` +
        `${c.expiresAt.toISOString()} at the latest (until ${one ? 'it lands or expires' : 'they land or expire'}); ` +
        "a wallet has one at a time, so that none of its transactions can make another fail at the sponsor's cost. Nothing was sent; retry once it has landed."
      );
    },
    members: (c) => (c.reason === 'busy' ? {} : { expiresAt: c.expiresAt.toISOString(), signatures: [...c.signatures] }),
  },
  SPONSORED_OPERATION_TOO_LARGE: {
    status: 400,
    title: 'Too large to sponsor',
    message: (c) =>
      `A sponsored operation holds at most ${c.max} transactions; this one needs ${c.transactions} (${c.accounts.toLocaleString('en-US')} accounts). ` +
      `Send the wallet ${formatSol(c.fees)} SOL or more for its fees and prepare again with feePayer "owner": the wallet pays its own fees and gets the whole rent back.`,
  },
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
  // server side
  INTERNAL_ERROR: {
    status: 500,
    title: 'Internal Server Error',
    message: () => 'An unexpected error occurred. The request id identifies it in the server log.',
  },
  RPC_UNAVAILABLE: {
    status: 503,
    title: 'Solana RPC unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'notAnswering':
          return 'The Solana RPC node does not answer.';
        case 'noAnswer':
          return 'The Solana RPC node did not answer; nothing was sent. Try again shortly.';
        case 'cannotSend':
          return 'The Solana RPC node could not be reached to send the transactions; nothing was sent. Try again shortly.';
      }
    },
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    title: 'Service unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'walletCapacity':
          return 'Wallet generation is at capacity; retry in a moment.';
        case 'shuttingDown':
          return 'The server is shutting down.';
        case 'idempotencyRecord':
          return 'The idempotency store is unavailable, so the burn could not be recorded before sending it; nothing was sent. Retry shortly.';
        case 'idempotencyBegin':
          return 'The idempotency store is unavailable, so a burn with an Idempotency-Key cannot be run safely; nothing was sent. Retry shortly.';
        case 'lockStore':
          return 'The lock store (Redis) is unavailable, so this operation cannot be run safely; nothing was sent. Retry shortly.';
        case 'open':
          return `The service has ${c.open} ${c.what} open, its limit (${c.setting}); retry in a moment.`;
      }
    },
  },
  SPONSOR_UNAVAILABLE: {
    status: 503,
    title: 'Fee sponsor unavailable',
    message: (c) => {
      switch (c.reason) {
        case 'cannotPay':
          return 'The fee sponsor cannot pay fees right now. Nothing was sent; try again later.';
        case 'lowBalance':
          return `The fee sponsor holds ${formatSol(c.lamports)} SOL, too little to pay fees now. Nothing was sent; try again later.`;
        case 'notConfigured':
          return 'No fee sponsor is configured on this service (SPONSOR_KEYPAIR is not set), so it pays no fees: send feePayer "owner" and pay the fee from the owner\'s SOL. Nothing was sent.';
        case 'lossBudget': {
          const inFlight = c.atRisk > 0n ? ` and ${formatSol(c.atRisk)} SOL is at risk in sponsored transactions in flight` : '';
          return (
            `The fee sponsor has reached its loss budget of ${formatSol(c.budget)} SOL an hour: ${formatSol(c.lost)} SOL was lost to sponsored transactions that failed on chain in the last hour${inFlight}; ` +
            `it pays again from ${c.until.toISOString()}. Nothing was sent.`
          );
        }
      }
    },
  },
};
