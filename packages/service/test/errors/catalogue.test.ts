/**
 * The error catalogue (src/errors/): every code is built from a sample of each of its contexts,
 * and its message, status, title and problem members are the catalogue's; a throw site cannot word
 * a code its own way (there is no constructor that takes a detail);
 * no message echoes a key. The lines marked @ts-expect-error are checked by the type check: a
 * context of the wrong shape for its code does not compile.
 */
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import {
  cinderError,
  CinderError,
  ERROR_CODES,
  isCinderError,
  membersOf,
  messageOf,
  statusOf,
  titleOf,
  toProblem,
  type CinderErrorCode,
  type CinderErrorContext,
} from '../../src/errors.ts';
import { CATALOGUE } from '../../src/errors/catalogue.ts';
import { parsePrivateKey } from '../../src/keys/parsePrivateKey.ts';
import { keyForms } from '../http/leaks.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

const problems = [
  { field: 'mint', message: 'is not a base58 address of 32 bytes' },
  { field: 'owners[2]', message: 'looks like a private key: treat it as exposed' },
];
const skipped = [
  { address: 'Acc1111111111111111111111111111111111111111', code: 'ACCOUNT_FROZEN', reason: 'Acc1… is frozen' },
  { address: 'Acc2222222222222222222222222222222222222222', code: 'ACCOUNT_FROZEN', reason: 'Acc2… is frozen' },
];
const until = new Date('2026-01-02T03:04:05.000Z');
const blocked = { reason: 'blocked', skipped } as const;
const status = { reason: 'status' } as const;

/** A sample of every situation of every code (the type makes a missing code fail to compile). */
const SAMPLES: { [C in CinderErrorCode]: readonly CinderErrorContext<C>[] } = {
  INVALID_JSON: [{ reason: 'malformed' }, { reason: 'empty' }],
  VALIDATION_FAILED: [
    { reason: 'schema', problems, more: 3 },
    { reason: 'addresses', problems, keyExposed: true },
    { reason: 'item', field: 'transactions[1]', problem: 'is not base64' },
    { reason: 'contentLength' },
    { reason: 'tooManyTransactions', transactions: 12, max: 10 },
    { reason: 'sponsorForMany', problem: 'no fee sponsor is configured' },
    { reason: 'tooManyItems', field: 'owners', problem: 'holds more than 100 owners' },
    { reason: 'bothForms', single: 'userPrivateKey', many: 'userPrivateKeys', problem: 'send one of them' },
    { reason: 'relayCount', max: 10 },
  ],
  MISSING_FIELD: [
    { fields: ['mint'], more: 0 },
    { fields: ['a', 'b', 'c', 'd', 'e'], more: 2 },
  ],
  UNKNOWN_FIELD: [{ fields: ['extra'], more: 0 }],
  INVALID_MINT: [
    { reason: 'schema', problems },
    { reason: 'addresses', problems: problems.slice(0, 1), keyExposed: false },
    { reason: 'notAddress', field: 'mint' },
    { reason: 'notMint', mint: 'Mint111111111111111111111111111111111111111' },
  ],
  INVALID_PRIORITY_FEE: [
    { reason: 'schema', problems },
    { reason: 'rule', problem: 'must be at most 0.01 SOL' },
    { reason: 'sponsorMax', problem: 'the fee would be 0.1 SOL', maxFeeLamports: 100_000n },
  ],
  INVALID_PRIVATE_KEY: [
    { reason: 'schema', problems },
    { reason: 'addresses', problems: [{ field: 'userPrivateKeys[1]', message: 'is not a valid private key' }], keyExposed: false },
    { reason: 'unparsable', problem: 'a key array must have 64 numbers, got 3' },
    { reason: 'walletAddress', owner: 'Own1111111111111111111111111111111111111111' },
    { reason: 'keys', fields: ['userPrivateKeys[0]', 'userPrivateKeys[3]'], problem: 'sign for the same wallet' },
  ],
  INVALID_N: [{ reason: 'schema', problems: [{ field: 'n', message: 'must be 1 to 1000' }] }],
  INVALID_PARAMETER: [{ reason: 'schema', problems: [{ field: 'prefix', message: 'must be given once' }] }],
  INVALID_SIGNATURE: [{ reason: 'schema', problems }, { reason: 'notSignature' }],
  IDEMPOTENCY_KEY_REUSED: [{}],
  INVALID_IDEMPOTENCY_KEY: [{}],
  BAD_REQUEST: [
    status,
    ...(['targetNotPath', 'targetFragment', 'malformedPercent', 'encodedSeparator', 'noHost', 'invalidUrl', 'framing', 'notHttp', 'pathNotUtf8', 'unroutable'] as const).map(
      (reason) => ({ reason }),
    ),
  ],
  PRIVATE_KEY_IN_URL: [{ reason: 'url' }, { reason: 'signaturePath' }],
  MINT_NOT_FOUND: [
    { mint: 'Mint111111111111111111111111111111111111111', localChain: false },
    { mint: 'Mint111111111111111111111111111111111111111', localChain: true },
  ],
  NO_TOKEN_ACCOUNT: [blocked, { reason: 'none', owner: 'Own1', mint: 'Mint1' }],
  ACCOUNT_FROZEN: [blocked, { reason: 'simulation' }],
  CLOSE_AUTHORITY_NOT_OWNER: [blocked],
  CONFIDENTIAL_BALANCE_NOT_EMPTY: [blocked],
  INSUFFICIENT_SOL_FOR_FEE: [
    { reason: 'balance', feePayer: 'Own1', separateFeePayer: false, balance: 0n, fees: 5000n, reserve: 890_880n, missing: 895_880n },
    { reason: 'balance', feePayer: 'Pay1', separateFeePayer: true, transactions: 2, balance: 900_000n, fees: 10_000n, reserve: 890_880n, missing: 880n },
    { reason: 'simulation', feePayer: 'Pay1' },
    { reason: 'simulation', feePayer: 'Pay1', field: 'transactions.0' },
  ],
  TRANSACTION_REJECTED: [
    { reason: 'item', field: 'transactions[0]', problem: 'would fail on chain (custom program error 0x11)' },
    { reason: 'simulation', error: 'custom program error 0x11' },
    { reason: 'owners', owners: ['Own1', 'Own2'], error: 'custom program error 0x11' },
    { reason: 'accounts', skipped },
  ],
  INVALID_OWNER: [{ reason: 'schema', problems }, { reason: 'addresses', problems, keyExposed: true }, { reason: 'notAddress', field: 'owner' }],
  FEE_EXCEEDS_RECLAIM: [{ reason: 'net', fees: 2_039_281n, returns: 2_039_280n }, { reason: 'sponsorNotRepaid' }],
  MINT_PAUSED: [blocked, { reason: 'simulation' }],
  BURN_NOT_PERMITTED: [blocked],
  NOTHING_TO_RECLAIM: [
    { reason: 'owner', owner: 'Own1', burnListed: true, withdrawExcess: true, skipped },
    { reason: 'owner', owner: 'Own1', burnListed: false, withdrawExcess: false, skipped: [] },
    { reason: 'owners', owners: 3, skipped },
  ],
  INVALID_TRANSACTION: [{ reason: 'item', field: 'transactions[0]', problem: 'is not base64' }],
  TRANSACTION_NOT_SIGNED: [{ reason: 'item', field: 'transactions[0]', problem: 'is not signed by Own1' }],
  PROGRAM_NOT_ALLOWED: [
    { reason: 'item', field: 'transactions[0]', problem: 'calls Prog1; only Token instructions are relayed' },
    { reason: 'sponsored', invoked: 'Prog1', allowed: ['Token', 'Token-2022'] },
  ],
  RELAY_TOKEN_INVALID: [
    { reason: 'token', problem: 'The relay token has expired.' },
    { reason: 'field', field: 'relayToken', problem: 'names another message' },
  ],
  INSTRUCTION_NOT_ALLOWED: [{ reason: 'item', field: 'transactions[0]', problem: 'holds what a wallet may not add' }],
  TRANSACTIONS_CONFLICT: [{ reason: 'item', field: 'transactions[1]', problem: 'takes from token account Acc1, as transactions[0] does' }],
  SPONSOR_DECLINED: [{ owner: 'Own1', until, why: 'its sponsored transactions failed twice' }],
  SPONSORED_OPERATION_IN_PROGRESS: [
    { reason: 'busy', wallet: 'this wallet', holder: 'sponsored transaction' },
    { reason: 'inFlight', owner: 'Own1', signatures: ['sig1'], expiresAt: until },
    { reason: 'inFlight', owner: 'Own1', what: 'A reclaim of Own1', signatures: [], expiresAt: until },
  ],
  SPONSORED_OPERATION_TOO_LARGE: [{ max: 8, transactions: 9, accounts: 2100, fees: 45_000n }],
  UNAUTHORIZED: [status, { reason: 'noApiKey' }, { reason: 'badApiKey' }, { reason: 'metricsToken' }],
  FORBIDDEN: [status, { reason: 'metricsLoopback' }],
  NOT_FOUND: [status, { reason: 'noRoute', method: 'GET', path: '/nowhere' }],
  METHOD_NOT_ALLOWED: [status, { reason: 'connect' }, { reason: 'notAllowed', method: 'PUT', allowed: ['GET', 'HEAD'] }],
  NOT_ACCEPTABLE: [status],
  REQUEST_TIMEOUT: [status, { reason: 'slowRequest', timeoutMs: 30_000 }],
  TRANSACTION_NOT_FOUND: [{ signature: 'Sig1' }],
  REQUEST_IN_PROGRESS: [{ reason: 'lost' }, { reason: 'running' }],
  BURN_IN_PROGRESS: [{ reason: 'busy', wallet: 'this wallet', holder: 'burn or reclaim' }],
  RECLAIM_IN_PROGRESS: [{ reason: 'busy', wallet: 'Own1', holder: 'burn or reclaim' }],
  PAYLOAD_TOO_LARGE: [status, { reason: 'body', limitBytes: 16 * 1024 }],
  UNSUPPORTED_MEDIA_TYPE: [status, { reason: 'notJson' }, { reason: 'charset' }],
  URI_TOO_LONG: [status, { reason: 'pathParameter' }],
  RANGE_NOT_SATISFIABLE: [status],
  EXPECTATION_FAILED: [status, { reason: 'expect' }],
  HEADERS_TOO_LARGE: [status, { reason: 'overflow' }],
  VANITY_TIMEOUT: [{ found: 1, n: 3, prefix: 'abc', suffix: undefined, ignoreCase: true, timeoutMs: 2000, keysTried: 123_456 }],
  RATE_LIMITED: [
    { reason: 'bucket', max: 10, what: 'burn requests', resetSeconds: 42 },
    { reason: 'overBudget', what: 'owners', n: 200, max: 100 },
    { reason: 'overBudget', what: 'wallets', n: 200, max: 100 },
    { reason: 'budget', what: 'owners', n: 20, max: 100, left: 5, resetSeconds: 9 },
    { reason: 'budget', what: 'wallets', n: 20, max: 100, left: 5, resetSeconds: 9 },
    { reason: 'previews', running: 2, perClient: 2 },
    { reason: 'queuedWallets', queued: 900, share: 1000 },
    { reason: 'open', open: 2, what: 'wallet streams', perClient: 2, setting: 'MAX_STREAMS_PER_CLIENT' },
  ],
  INTERNAL_ERROR: [{}],
  RPC_UNAVAILABLE: [{ reason: 'notAnswering' }, { reason: 'noAnswer' }, { reason: 'cannotSend' }],
  SERVICE_UNAVAILABLE: [
    ...(['walletCapacity', 'shuttingDown', 'idempotencyRecord', 'idempotencyBegin', 'lockStore'] as const).map((reason) => ({ reason })),
    { reason: 'open', open: 50, what: 'wallet streams', setting: 'MAX_STREAMS' },
  ],
  SPONSOR_UNAVAILABLE: [
    { reason: 'cannotPay' },
    { reason: 'notConfigured' },
    { reason: 'lowBalance', lamports: 1000n },
    { reason: 'lossBudget', budget: 1_000_000n, lost: 1_000_000n, atRisk: 5000n, until },
  ],
};

const samples = Object.entries(SAMPLES).flatMap(([code, contexts]) =>
  (contexts as readonly CinderErrorContext<CinderErrorCode>[]).map((context) => ({ code: code as CinderErrorCode, context })),
);

describe('the catalogue', () => {
  it('has one entry per code, with an HTTP error status and a title', () => {
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      assert.ok(statusOf(code) >= 400 && statusOf(code) <= 599, code);
      assert.ok(titleOf(code).length > 0, code);
    }
  });

  it('words every code from its context with the catalogue entry; the problem body has its members', () => {
    for (const { code, context } of samples) {
      const error = new CinderError(code, context, { errors: [{ field: 'f', message: 'm' }], headers: { 'retry-after': '3' } });
      const entry = CATALOGUE[code] as { message: (c: unknown) => string; members?: (c: unknown) => Record<string, unknown> };
      assert.equal(error.message, entry.message(context), code);
      assert.equal(error.message, messageOf(code, context), code);
      assert.ok(error.message.length > 10 && !/undefined|\[object|NaN/.test(error.message), `${code}: ${error.message}`);
      assert.equal(error.status, statusOf(code));
      assert.equal(error.context, context);
      assert.deepEqual(error.headers, { 'retry-after': '3' });

      const members = entry.members ? entry.members(context) : {};
      assert.deepEqual(membersOf(code, context), members);
      const body = JSON.parse(JSON.stringify(toProblem(error))) as Record<string, unknown>;
      assert.deepEqual(body, {
        ...members,
        type: `urn:cinder:problem:${code.toLowerCase().replaceAll('_', '-')}`,
        title: titleOf(code),
        status: statusOf(code),
        detail: error.message,
        code,
        errors: [{ field: 'f', message: 'm' }],
      });
    }
  });

  it('gives different situations of one code different words, and one situation the same words', () => {
    for (const code of ERROR_CODES) {
      const messages = SAMPLES[code].map((context) => messageOf(code, context as never));
      assert.equal(new Set(messages).size, messages.length, `${code}: ${messages.join(' | ')}`);
    }
    const again = new CinderError('TRANSACTION_NOT_FOUND', { signature: 'Sig1' });
    assert.equal(again.message, cinderError('TRANSACTION_NOT_FOUND', { signature: 'Sig1' }).message);
  });

  it('writes amounts as SOL in the message and as decimal strings of lamports in the body', () => {
    const owner = new CinderError('INSUFFICIENT_SOL_FOR_FEE', SAMPLES.INSUFFICIENT_SOL_FOR_FEE[0]!);
    assert.equal(
      owner.message,
      'Own1 holds 0 SOL; the fees are 0.000005 SOL and a fee payer must keep 0.00089088 SOL (the rent-exempt minimum) or end at exactly 0, so 0.00089588 SOL more is needed. Nothing was sent.',
    );
    assert.deepEqual(toProblem(owner).missingLamports, '895880');
    const payer = new CinderError('INSUFFICIENT_SOL_FOR_FEE', SAMPLES.INSUFFICIENT_SOL_FOR_FEE[1]!);
    assert.match(payer.message, /^The fee payer Pay1 holds 0\.0009 SOL; the fees of the 2 transactions are 0\.00001 SOL .* so 0\.00000088 SOL more is needed\. Nothing was sent\.$/);
    const net = new CinderError('FEE_EXCEEDS_RECLAIM', { reason: 'net', fees: 2_039_281n, returns: 2_039_280n });
    assert.match(net.message, /net −0\.000000001 SOL/);
    assert.equal(net.extensions.netLamports, '-1');
  });

  it('keeps the errors and headers a site gives, and narrows by code', () => {
    const error: unknown = new CinderError('VANITY_TIMEOUT', SAMPLES.VANITY_TIMEOUT[0]!);
    assert.ok(isCinderError(error, 'VANITY_TIMEOUT'));
    const tried: number = error.extensions.keysTried;
    assert.equal(tried, 123_456);
    assert.equal(error.context?.prefix, 'abc');
    assert.equal(isCinderError(error, 'RATE_LIMITED'), false);
    assert.equal(new CinderError('INTERNAL_ERROR').message, 'An unexpected error occurred. The request id identifies it in the server log.');
  });
});

describe('what a site may not do', () => {
  it('compiles only with the context of its code (checked by tsc; never run)', () => {
    const wrong = [
      // @ts-expect-error TRANSACTION_NOT_FOUND needs the signature
      () => new CinderError('TRANSACTION_NOT_FOUND', {}),
      // @ts-expect-error a reason that RPC_UNAVAILABLE does not have
      () => new CinderError('RPC_UNAVAILABLE', { reason: 'busy' }),
      // @ts-expect-error amounts are bigint in code
      () => cinderError('FEE_EXCEEDS_RECLAIM', { reason: 'net', fees: '1', returns: 2n }),
      // @ts-expect-error a code that is not in the catalogue
      () => cinderError('NO_SUCH_CODE', {}),
      // @ts-expect-error a site never words its own detail: the message is the catalogue's
      () => new CinderError('TRANSACTION_NOT_FOUND', 'The chain has no record of it.'),
    ];
    assert.equal(wrong.length, 5);
  });

  it('builds every error of the service from its code\'s context: no file words its own detail', () => {
    // The compiler says what each `new CinderError(...)` is given: a string where the context goes
    // would be a site wording its own message (a code whose context has no member accepts one).
    const config = ts.readConfigFile(fileURLToPath(new URL('../../../../tsconfig.json', import.meta.url)), (f) => ts.sys.readFile(f));
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, fileURLToPath(new URL('../../../../', import.meta.url)));
    const program = ts.createProgram([join(SRC, 'index.ts'), join(SRC, 'server.ts')], options);
    const checker = program.getTypeChecker();
    const worded = new Map<string, number>();
    let contexts = 0;
    for (const source of program.getSourceFiles()) {
      if (!source.fileName.startsWith(SRC)) continue;
      const visit = (node: ts.Node): void => {
        if (ts.isNewExpression(node) && node.expression.getText(source) === 'CinderError') {
          const given = node.arguments?.[1];
          if (given && checker.getTypeAtLocation(given).flags & ts.TypeFlags.StringLike) {
            const file = relative(SRC, source.fileName);
            worded.set(file, (worded.get(file) ?? 0) + 1);
          } else contexts++;
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.ok(contexts > 50, `${contexts} errors built from a context`);
    assert.deepEqual([...worded.keys()], [], 'files that word their own detail');
  });
});

describe('no message holds a key', () => {
  it('a path that could hold a key is not echoed', () => {
    const { forms } = keyForms('key', crypto.getRandomValues(new Uint8Array(64)));
    const error = new CinderError('NOT_FOUND', { reason: 'noRoute', method: 'GET', path: `/api/${forms[0]}` });
    assert.equal(error.message, 'No route for GET (path not shown)');
    for (const form of forms) assert.ok(!error.message.includes(form));
  });

  it('a key that does not parse is described, never quoted; the message is the catalogue\'s', async () => {
    const key = '5'.repeat(87) + '0'; // the length of a base58 64-byte key, with a character base58 does not have
    const error: unknown = await parsePrivateKey(key).then(
      () => assert.fail('parsed'),
      (rejection: unknown) => rejection,
    );
    assert.ok(isCinderError(error, 'INVALID_PRIVATE_KEY'));
    assert.equal(error.message, messageOf('INVALID_PRIVATE_KEY', error.context!));
    assert.ok(!error.message.includes(key.slice(0, 32)), error.message);
  });
});
