/**
 * POST /api/burn_tokens over HTTP against the real app and the embedded local chain (LiteSVM
 * running the real SPL Token program), checking the chain after each call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getBase58Decoder, type Address, type KeyPairSigner } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import {
  createAta,
  createAuxTokenAccount,
  createFundedSigner,
  createTestMint,
  freezeTokenAccount,
  getLamports,
  mintTokens,
  setCloseAuthority,
} from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { formatSol } from '../../src/plan/priorityFee.ts';

let t: TestApp;
/** Every secret handed to the app in this file, to prove none is ever echoed or logged. */
const secretsUsed: string[] = [];
const bodiesSeen: string[] = [];

before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

interface Holder {
  signer: KeyPairSigner;
  secretKey: Uint8Array;
  key: string;
  mint: Address;
  ata: Address;
}

/** An owner holding `amount` of a fresh 6-decimal mint in its associated token account. */
async function createHolder(options: { amount?: bigint; freezeAuthority?: boolean; lamports?: bigint } = {}): Promise<Holder> {
  const { signer, secretKey } = await createFundedSigner(t.chain, options.lamports);
  const mint = await createTestMint(t.chain, signer, {
    decimals: 6,
    ...(options.freezeAuthority ? { freezeAuthority: signer.address } : {}),
  });
  const ata = await createAta(t.chain, signer, signer.address, mint);
  if ((options.amount ?? 1_234_500_000n) > 0n) await mintTokens(t.chain, signer, mint, ata, options.amount ?? 1_234_500_000n);
  const key = getBase58Decoder().decode(secretKey);
  secretsUsed.push(key);
  return { signer, secretKey, key, mint, ata };
}

async function burn(body: unknown, headers: Record<string, string> = {}) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/burn_tokens',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  bodiesSeen.push(response.body);
  return response;
}

async function supplyOf(mint: Address): Promise<bigint> {
  return (await fetchMint(t.chain.rpc, mint)).data.supply;
}

function assertProblem(
  response: Awaited<ReturnType<typeof burn>>,
  status: number,
  code: string,
  detail: string | RegExp,
  errors?: { field: string; message: string }[],
) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  const body = response.json();
  const { detail: actualDetail, ...rest } = body;
  if (typeof detail === 'string') assert.equal(actualDetail, detail);
  else assert.match(actualDetail, detail);
  const expected: Record<string, unknown> = {
    type: `urn:cinder:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title: rest.title,
    status,
    code,
  };
  if (errors) expected.errors = errors;
  for (const key of Object.keys(rest)) if (!(key in expected)) expected[key] = rest[key];
  assert.deepEqual(rest, expected);
  assert.equal(typeof rest.title, 'string');
  return body;
}

describe('POST /api/burn_tokens: success', () => {
  it('burns the whole balance, closes the account and returns the rent minus fees to the owner', async () => {
    const h = await createHolder();
    const [balanceBefore, ataLamports, supplyBefore] = [await getLamports(t.chain, h.signer.address), await getLamports(t.chain, h.ata), await supplyOf(h.mint)];
    assert.equal(ataLamports, 2_039_280n);

    const response = await burn({ mint: h.mint, priorityFee: 0.000001, userPrivateKey: h.key });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    const body = response.json();
    const signature = body.transactionId;
    assert.match(signature, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    const { details } = body;
    assert.deepEqual(body, {
      transactionId: signature,
      status: 'success',
      message: `Burned 1,234.5 of ${h.mint} and closed 1 account; reclaimed 0.00203928 SOL, fees ${formatSol(BigInt(details.feeLamports))} SOL, net +${formatSol(2_039_280n - BigInt(details.feeLamports))} SOL.`,
      tx_hash: signature,
      details: {
        signatures: [signature],
        slot: details.slot,
        owner: h.signer.address,
        mint: h.mint,
        tokenProgram: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
        burnedAmount: '1234500000',
        decimals: 6,
        closedAccounts: [h.ata],
        skippedAccounts: [],
        reclaimedLamports: '2039280',
        reclaimedSol: '0.00203928',
        feeLamports: details.feeLamports,
        netLamports: (2_039_280n - BigInt(details.feeLamports)).toString(),
        netSol: formatSol(2_039_280n - BigInt(details.feeLamports)),
        sponsored: false,
        computeUnitLimit: details.computeUnitLimit,
        computeUnitPriceMicroLamports: details.computeUnitPriceMicroLamports,
        transactions: [
          {
            signature,
            status: 'success',
            slot: details.slot,
            closedAccounts: [h.ata],
            computeUnitLimit: details.computeUnitLimit,
            computeUnitPriceMicroLamports: details.computeUnitPriceMicroLamports,
            feeLamports: details.feeLamports,
            error: null,
          },
        ],
      },
    });
    assert.ok(Number.isInteger(details.slot) && details.slot > 0);
    // 1,000 lamports of priority fee spread over the limit: price = floor(1000 × 1e6 / limit)
    assert.equal(BigInt(details.computeUnitPriceMicroLamports), (1000n * 1_000_000n) / BigInt(details.computeUnitLimit));
    const priorityCharged = (BigInt(details.computeUnitPriceMicroLamports) * BigInt(details.computeUnitLimit) + 999_999n) / 1_000_000n;
    assert.equal(BigInt(details.feeLamports), 5000n + priorityCharged);
    assert.ok(priorityCharged <= 1000n && priorityCharged >= 999n);

    // The chain: account gone, supply reduced, owner up by exactly rent − fee.
    assert.equal(await getLamports(t.chain, h.ata), 0n);
    assert.equal((await t.chain.rpc.getAccountInfo(h.ata, { encoding: 'base64' }).send()).value, null);
    assert.equal(await supplyOf(h.mint), supplyBefore - 1_234_500_000n);
    assert.equal(await getLamports(t.chain, h.signer.address), balanceBefore + 2_039_280n - BigInt(details.feeLamports));
    const status = await t.chain.rpc.getSignatureStatuses([signature]).send();
    assert.equal(status.value[0]?.err, null);
    // The answer's slot is the one the chain reports for the transaction (never the genesis slot 0,
    // which holds no transactions: the first test of a fresh chain lands in slot 1 at the earliest).
    assert.equal(BigInt(details.slot), status.value[0]?.slot);
    // The limit is the units the transaction really used + 10 %, at least + 1,000 CU.
    const landed = await t.chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    const used = Number(landed?.meta?.computeUnitsConsumed);
    assert.equal(details.computeUnitLimit, Math.max(Math.ceil(used * 1.1), used + 1000));
    assert.equal(landed?.meta?.fee, BigInt(details.feeLamports));
  });

  for (const format of ['base58 64-byte secret key', 'base58 32-byte seed', 'solana-keygen JSON array as a string', 'solana-keygen JSON array'] as const) {
    it(`accepts the key as ${format}`, async () => {
      const h = await createHolder({ amount: 5_000_000n });
      const base58 = getBase58Decoder();
      const userPrivateKey =
        format === 'base58 64-byte secret key'
          ? h.key
          : format === 'base58 32-byte seed'
            ? base58.decode(h.secretKey.slice(0, 32))
            : format === 'solana-keygen JSON array as a string'
              ? JSON.stringify([...h.secretKey])
              : [...h.secretKey];
      if (typeof userPrivateKey === 'string') secretsUsed.push(userPrivateKey);
      const response = await burn({ mint: h.mint, priorityFee: 0, userPrivateKey });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'success');
      assert.equal(response.json().details.owner, h.signer.address);
      assert.equal(response.json().details.computeUnitPriceMicroLamports, '0');
      assert.equal(response.json().details.feeLamports, '5000');
      assert.equal(await getLamports(t.chain, h.ata), 0n);
    });
  }

  it('only closes an account with a zero balance', async () => {
    const h = await createHolder({ amount: 0n });
    const before = await getLamports(t.chain, h.signer.address);
    const response = await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'success');
    assert.equal(body.message, `Closed 1 account of ${h.mint} (nothing to burn); reclaimed 0.00203928 SOL, fees 0.000005 SOL, net +0.00203428 SOL.`);
    assert.equal(body.details.burnedAmount, '0');
    assert.equal(await getLamports(t.chain, h.ata), 0n);
    assert.equal(await getLamports(t.chain, h.signer.address), before + 2_039_280n - 5000n);
  });

  it('burns and closes every account of the mint, associated or not', async () => {
    const h = await createHolder({ amount: 3_000_000n });
    const aux = await createAuxTokenAccount(t.chain, h.signer, h.signer.address, h.mint);
    await mintTokens(t.chain, h.signer, h.mint, aux, 2_000_000n);
    const response = await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.message, `Burned 5 of ${h.mint} and closed 2 accounts; reclaimed 0.00407856 SOL, fees 0.000005 SOL, net +0.00407356 SOL.`);
    assert.deepEqual([...body.details.closedAccounts].sort(), [h.ata, aux].sort());
    assert.equal(await supplyOf(h.mint), 0n);
    assert.equal(await getLamports(t.chain, aux), 0n);
  });
});

describe('POST /api/burn_tokens: priority fee arithmetic, checked against what the chain charged', () => {
  for (const priorityFee of [0, 0.000000001, 0.000001, 0.000123457, 0.001, 0.01]) {
    it(`priorityFee ${priorityFee} SOL: charged ≤ asked, within 1 lamport, and exactly what the owner paid`, async () => {
      const h = await createHolder();
      const before = await getLamports(t.chain, h.signer.address);
      // 0.01 SOL is more than the 0.00203928 SOL that comes back: the caller must accept the loss.
      const response = await burn({ mint: h.mint, priorityFee, userPrivateKey: h.key, ...(priorityFee > 0.002 ? { allowNetLoss: true } : {}) });
      assert.equal(response.statusCode, 200, response.body);
      const { details } = response.json();
      const asked = BigInt(Math.round(priorityFee * 1e9));
      assert.equal(BigInt(details.netLamports), 2_039_280n - BigInt(details.feeLamports));
      const limit = BigInt(details.computeUnitLimit);
      const price = BigInt(details.computeUnitPriceMicroLamports);
      assert.equal(price, (asked * 1_000_000n) / limit, 'price = floor(fee × 1e6 / limit)');
      const charged = BigInt(details.feeLamports) - 5000n;
      assert.equal(charged, (price * limit + 999_999n) / 1_000_000n);
      assert.ok(charged <= asked && asked - charged <= 1n, `charged ${charged} for ${asked} asked`);
      // The chain debited exactly base fee + priority fee: owner delta = rent − fee, to the lamport.
      assert.equal(await getLamports(t.chain, h.signer.address), before + 2_039_280n - 5000n - charged);
      // The limit is the simulated units + 10 % (at least + 1,000): tight, not the 200k default.
      assert.ok(details.computeUnitLimit > 1000 && details.computeUnitLimit < 20_000, `limit ${details.computeUnitLimit}`);
    });
  }
});

describe('POST /api/burn_tokens: 400 before anything is sent', () => {
  /** Asserts that the owner's SOL and token account are exactly as before. */
  async function assertNothingSent(h: Holder, run: () => Promise<void>) {
    const [sol, ata] = [await getLamports(t.chain, h.signer.address), await getLamports(t.chain, h.ata)];
    await run();
    assert.equal(await getLamports(t.chain, h.signer.address), sol, 'owner balance unchanged');
    assert.equal(await getLamports(t.chain, h.ata), ata, 'token account untouched');
  }

  it('names every missing field (MISSING_FIELD)', async () => {
    assertProblem(await burn({}), 400, 'MISSING_FIELD', 'Missing required fields: mint, priorityFee, userPrivateKey', [
      { field: 'mint', message: 'is required' },
      { field: 'priorityFee', message: 'is required' },
      { field: 'userPrivateKey', message: 'is required' },
    ]);
    const key = (await createTestKey()).base58SecretKey;
    secretsUsed.push(key);
    assertProblem(await burn({ priorityFee: 0, userPrivateKey: key }), 400, 'MISSING_FIELD', 'Missing required field: mint', [
      { field: 'mint', message: 'is required' },
    ]);
    assertProblem(await burn({ mint: 'So11111111111111111111111111111111111111112', userPrivateKey: key }), 400, 'MISSING_FIELD', 'Missing required field: priorityFee', [
      { field: 'priorityFee', message: 'is required' },
    ]);
    assertProblem(await burn({ mint: 'So11111111111111111111111111111111111111112', priorityFee: 0 }), 400, 'MISSING_FIELD', 'Missing required field: userPrivateKey', [
      { field: 'userPrivateKey', message: 'is required' },
    ]);
  });

  it('rejects unknown fields, naming them (UNKNOWN_FIELD)', async () => {
    const key = (await createTestKey()).base58SecretKey;
    secretsUsed.push(key);
    assertProblem(
      await burn({ mint: 'So11111111111111111111111111111111111111112', priorityFee: 0, userPrivateKey: key, amount: 5 }),
      400,
      'UNKNOWN_FIELD',
      'Unknown field: amount',
      [{ field: 'amount', message: 'is not a known field' }],
    );
  });

  it('rejects a mint that is not an address (INVALID_MINT)', async () => {
    const h = await createHolder();
    await assertNothingSent(h, async () => {
      assertProblem(await burn({ mint: 'not-a-mint', priorityFee: 0, userPrivateKey: h.key }), 400, 'INVALID_MINT', 'mint is not a valid base58 Solana address (32 bytes)', [
        { field: 'mint', message: 'is not a base58 address of 32 bytes' },
      ]);
      assertProblem(await burn({ mint: 42, priorityFee: 0, userPrivateKey: h.key }), 400, 'INVALID_MINT', 'mint must be string', [
        { field: 'mint', message: 'must be string' },
      ]);
    });
  });

  it('rejects an address that is not a mint (INVALID_MINT) and one with no account (MINT_NOT_FOUND)', async () => {
    const h = await createHolder();
    const nobody = (await createTestKey()).address;
    await assertNothingSent(h, async () => {
      assertProblem(
        await burn({ mint: h.signer.address, priorityFee: 0, userPrivateKey: h.key }),
        400,
        'INVALID_MINT',
        `${h.signer.address} is not a mint of the SPL Token or Token-2022 program. Nothing was sent.`,
        [{ field: 'mint', message: 'is not a token mint' }],
      );
      assertProblem(
        await burn({ mint: h.ata, priorityFee: 0, userPrivateKey: h.key }),
        400,
        'INVALID_MINT',
        `${h.ata} is not a mint of the SPL Token or Token-2022 program. Nothing was sent.`,
        [{ field: 'mint', message: 'is not a token mint' }],
      );
      assertProblem(
        await burn({ mint: nobody, priorityFee: 0, userPrivateKey: h.key }),
        400,
        'MINT_NOT_FOUND',
        `No account exists at mint address ${nobody}. Nothing was sent. Cinder is running on its embedded local chain (no SOLANA_RPC_URL set), which only has the mints created on it; set SOLANA_RPC_URL to use a real cluster.`,
      );
    });
  });

  it('rejects a bad priority fee (INVALID_PRIORITY_FEE)', async () => {
    const h = await createHolder();
    await assertNothingSent(h, async () => {
      for (const [priorityFee, message] of [
        [-1, 'must be a number of SOL ≥ 0'],
        [0.02, 'must be at most 0.01 SOL'],
        [0.0000000001, 'has more than 9 decimals (1 lamport = 0.000000001 SOL)'],
      ] as const) {
        assertProblem(await burn({ mint: h.mint, priorityFee, userPrivateKey: h.key }), 400, 'INVALID_PRIORITY_FEE', `priorityFee ${message}`, [
          { field: 'priorityFee', message },
        ]);
      }
      for (const priorityFee of ['0.001', null, true]) {
        // The usual mistake is a fee in quotes: the answer says what to send instead.
        const message = 'must be a JSON number of SOL (e.g. 0.001, without quotes), or "auto" (a fee from the cluster\'s recent fees)';
        assertProblem(await burn({ mint: h.mint, priorityFee, userPrivateKey: h.key }), 400, 'INVALID_PRIORITY_FEE', `priorityFee ${message}`, [
          { field: 'priorityFee', message },
        ]);
      }
    });
  });

  it('rejects a bad private key (INVALID_PRIVATE_KEY) without echoing it', async () => {
    const h = await createHolder();
    const other = await createTestKey();
    const mismatched = getBase58Decoder().decode(new Uint8Array([...h.secretKey.slice(0, 32), ...other.secretKey.slice(32)]));
    secretsUsed.push(mismatched);
    await assertNothingSent(h, async () => {
      const body = assertProblem(
        await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: mismatched }),
        400,
        'INVALID_PRIVATE_KEY',
        /public half of the 64-byte key does not match its private half/,
        [{ field: 'userPrivateKey', message: 'the public half of the 64-byte key does not match its private half' }],
      );
      assert.ok(!JSON.stringify(body).includes(mismatched.slice(0, 10)));
      assertProblem(await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: 'abc' }), 400, 'INVALID_PRIVATE_KEY', /got 3 bytes/);
      assertProblem(await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: 12345 }), 400, 'INVALID_PRIVATE_KEY', 'userPrivateKey is not in any of the accepted forms', [
        { field: 'userPrivateKey', message: 'is not in any of the accepted forms' },
      ]);
      assertProblem(await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: [1, 2, 3] }), 400, 'INVALID_PRIVATE_KEY', 'userPrivateKey is not in any of the accepted forms');
    });
  });

  it('answers NO_TOKEN_ACCOUNT when the key owns no account of the mint', async () => {
    const h = await createHolder();
    const stranger = await createFundedSigner(t.chain);
    const key = getBase58Decoder().decode(stranger.secretKey);
    secretsUsed.push(key);
    await assertNothingSent(h, async () => {
      assertProblem(
        await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: key }),
        400,
        'NO_TOKEN_ACCOUNT',
        `${stranger.signer.address} has no token account of mint ${h.mint}. Nothing was sent.`,
      );
    });
  });

  it('answers INSUFFICIENT_SOL_FOR_FEE when the owner has no SOL', async () => {
    const payer = await createFundedSigner(t.chain);
    const owner = await createTestKey();
    secretsUsed.push(owner.base58SecretKey);
    const mint = await createTestMint(t.chain, payer.signer, { decimals: 0 });
    const ata = await createAta(t.chain, payer.signer, owner.address, mint);
    await mintTokens(t.chain, payer.signer, mint, ata, 10n);
    assertProblem(
      await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey }),
      400,
      'INSUFFICIENT_SOL_FOR_FEE',
      `${owner.address} holds 0 SOL; the fees are 0.000005 SOL and a fee payer must keep 0.00089088 SOL (the rent-exempt minimum) or end at exactly 0, so 0.00089588 SOL more is needed. Nothing was sent.`,
    );
    assert.equal(await getLamports(t.chain, ata), 2_039_280n);
    assert.equal(await supplyOf(mint), 10n);
  });

  it('answers ACCOUNT_FROZEN for a frozen account', async () => {
    const h = await createHolder({ freezeAuthority: true });
    await freezeTokenAccount(t.chain, h.signer, h.ata, h.mint);
    await assertNothingSent(h, async () => {
      assertProblem(
        await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key }),
        400,
        'ACCOUNT_FROZEN',
        `Token account ${h.ata} is frozen by the mint's freeze authority: it can be neither burned nor closed until thawed. Nothing was sent.`,
      );
    });
  });

  it('answers CLOSE_AUTHORITY_NOT_OWNER when another key holds the close authority', async () => {
    const h = await createHolder();
    const other = (await createTestKey()).address;
    await setCloseAuthority(t.chain, h.signer, h.ata, other);
    await assertNothingSent(h, async () => {
      assertProblem(
        await burn({ mint: h.mint, priorityFee: 0, userPrivateKey: h.key }),
        400,
        'CLOSE_AUTHORITY_NOT_OWNER',
        `Token account ${h.ata} has close authority ${other}, not the owner: only that authority can close it. Nothing was sent.`,
      );
    });
  });
});

describe('POST /api/burn_tokens: HTTP edges', () => {
  it('answers 400 INVALID_JSON for a body that is not JSON', async () => {
    assertProblem(await burn('{"mint": '), 400, 'INVALID_JSON', 'The request body is not valid JSON');
    assertProblem(await burn(''), 400, 'INVALID_JSON', 'The request body is empty; a JSON object is expected');
  });

  it('answers 400 when the body is JSON but not an object', async () => {
    assertProblem(await burn('[1,2]'), 400, 'VALIDATION_FAILED', 'body must be object', [{ field: 'body', message: 'must be object' }]);
  });

  it('answers 413 for a body over 16 KiB', async () => {
    assertProblem(await burn({ mint: 'x'.repeat(17 * 1024), priorityFee: 0, userPrivateKey: 'y' }), 413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 16 KiB');
  });

  it('answers 415 for a body that is not application/json', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/burn_tokens', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    assertProblem(response, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as Content-Type: application/json');
    const form = await t.app.inject({ method: 'POST', url: '/api/burn_tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' });
    assertProblem(form, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as Content-Type: application/json');
  });

  it('answers 404 in problem+json for unknown routes, 405 with Allow for a method the route does not have', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/nope?x=1' });
    assertProblem(response, 404, 'NOT_FOUND', 'No route for GET /api/nope');
    const wrongMethod = await t.app.inject({ method: 'GET', url: '/api/burn_tokens' });
    assertProblem(wrongMethod, 405, 'METHOD_NOT_ALLOWED', 'GET is not allowed here; allowed: POST.');
    assert.equal(wrongMethod.headers.allow, 'POST');
  });

  it('gives every response a request id, reusing a safe one from the caller', async () => {
    const given = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(given.headers['x-request-id'], 'abc-123');
    const made = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });
});

describe('private keys never leak', () => {
  it('appear in no response body and no log line of this whole file', () => {
    assert.ok(secretsUsed.length >= 10, 'the file exercised many keys');
    const logs = t.logs();
    assert.ok(logs.includes('burn finished'), 'the log was captured');
    assert.ok(logs.includes('"statusCode":400'), 'failing requests were logged');
    for (const secret of secretsUsed) {
      const probe = secret.slice(0, 16);
      assert.ok(!logs.includes(probe), 'a key fragment appears in the logs');
      for (const body of bodiesSeen) assert.ok(!body.includes(probe), 'a key fragment appears in a response');
    }
  });
});
