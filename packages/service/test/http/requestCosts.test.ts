/**
 * What a request costs against the rate limits (src/http/rateLimit.ts), on the real app and the
 * embedded chain:
 * - a request the edge refuses (a key in the URL, a target that cannot be normalised) counts
 *   against the client's general budget like any request: probing is not free;
 * - read-only previews have their own budget, and an answer refused before any chain work (a body
 *   that fails validation) costs nothing of the burn budget;
 * - a prepared operation counts once: relaying its transactions is not counted again;
 * - a person following the README on loopback, with the default limits, never meets a 429;
 * - at most PREVIEWS_PER_CLIENT previews of one client run at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  signTransaction,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { loadConfig, type Config } from '../../src/config.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createAta, createTestMint, createTokenHolder, startTestChain, type TestChain } from '@cinder/testkit';

let chain: TestChain;
const apps: TestApp[] = [];
before(async () => {
  chain = await startTestChain();
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await chain.close();
});

async function newApp(overrides: Partial<Config>): Promise<TestApp> {
  const app = await createTestApp(overrides, { chain });
  apps.push(app);
  return app;
}

let clientCounter = 0;
/** A fresh client address per test, so that tests sharing an app do not share counters. */
const newClient = () => `10.9.${(++clientCounter >> 8) & 255}.${clientCounter & 255}`;

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

function assertBudget(response: Response, limit: number, remaining: number): void {
  assert.equal(response.headers['ratelimit-limit'], String(limit), response.body);
  assert.equal(response.headers['ratelimit-remaining'], String(remaining), response.body);
}

function assert429(response: Response, detail: RegExp): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.ok(Number(response.headers['retry-after']) >= 1, `Retry-After ${response.headers['retry-after']}`);
  assert.equal(response.json().code, 'RATE_LIMITED');
  assert.match(response.json().detail, detail);
}

const post = (t: TestApp, url: string, payload: unknown, remoteAddress?: string) =>
  t.app.inject({ method: 'POST', url, remoteAddress, headers: { 'content-type': 'application/json' }, payload: payload as Record<string, unknown> });
const get = (t: TestApp, url: string, remoteAddress?: string) => t.app.inject({ method: 'GET', url, remoteAddress });

/** What a wallet does with a prepared transaction: decode it and add the owner's signature. */
async function sign(wire: string, signer: KeyPairSigner): Promise<string> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  return getBase64EncodedWireTransaction(await signTransaction([signer.keyPair], transaction));
}

describe('requests refused at the edge', () => {
  it('count against the general budget, so that a client probing with them then gets 429', async () => {
    const t = await newApp({ rateLimitStatusPerMin: 5 });
    const client = newClient();
    const key = (await createTestKey()).base58SecretKey;
    const refused = [
      `/api/reclaim_rent?owner=${key}`, // a key in the URL
      `/api/transactions/${key}`,
      '/api/%2Fburn_tokens', // an encoded separator: a target that cannot be normalised
      `/health?k=${key}`, // outside /api too
      '/api/..%2F..%2Fetc',
    ];
    for (const [i, url] of refused.entries()) {
      const response = await get(t, url, client);
      assert.equal(response.statusCode, 400, response.body);
      assert.ok(['PRIVATE_KEY_IN_URL', 'BAD_REQUEST'].includes(response.json().code), response.body);
      assert.ok(!response.body.includes(key), 'the key is never echoed');
      assertBudget(response, 5, 4 - i);
    }
    // Over the budget, a refusal still says what is wrong (a key in the URL must be told)…
    const sixth = await get(t, `/api/reclaim_rent?owner=${key}`, client);
    assert.equal(sixth.json().code, 'PRIVATE_KEY_IN_URL');
    // …and any other request of this client is refused.
    assert429(await get(t, '/api/transactions/1111111111111111111111111111111111111111111111111111111111111111', client), /^Rate limit reached: 5 requests per minute/);
    // Another client is not affected.
    assert.equal((await get(t, '/api/nope', newClient())).statusCode, 404);
  });
});

describe('what each door costs', () => {
  it('previews have their own budget; a body refused by validation costs nothing of the burn budget', async () => {
    const t = await newApp({ rateLimit: { burnPerMin: 3, generatePerMin: 60, walletsPerMin: 1000 }, rateLimitPreviewPerMin: 4, rateLimitStatusPerMin: 100 });
    const client = newClient();
    const owner = (await generateKeyPairSigner()).address;
    for (let i = 1; i <= 4; i++) {
      const preview = await get(t, `/api/reclaim_rent?owner=${owner}`, client);
      assert.equal(preview.statusCode, 200, preview.body);
      assert.equal(preview.json().summary.problem.code, 'NOTHING_TO_RECLAIM');
      assertBudget(preview, 4, 4 - i);
    }
    assert429(await get(t, `/api/reclaim_rent?owner=${owner}`, client), /^Rate limit reached: 4 reclaim previews per minute for this client/);

    // Malformed bodies (a missing field, a wrong type, bad JSON): 400, and the burn budget is whole.
    const malformed = [{ mint: owner, priorityFee: 0 }, { mint: owner, priorityFee: '0.001', userPrivateKey: 'x' }];
    for (const body of malformed) assert.equal((await post(t, '/api/burn_tokens', body, client)).statusCode, 400);
    const badJson = await t.app.inject({ method: 'POST', url: '/api/burn_tokens/prepare', remoteAddress: client, headers: { 'content-type': 'application/json' }, payload: '{"owner":' });
    assert.equal(badJson.json().code, 'INVALID_JSON');
    // Three burns that pass validation (their mint does not exist) use the three burns.
    for (let i = 1; i <= 3; i++) {
      const burn = await post(t, '/api/burn_tokens', { mint: owner, priorityFee: 0, userPrivateKey: (await createTestKey()).base58SecretKey }, client);
      assert.equal(burn.statusCode, 400, burn.body);
      assertBudget(burn, 3, 3 - i);
    }
    assert429(await post(t, '/api/burn_tokens', { mint: owner, priorityFee: 0, userPrivateKey: 'x' }, client), /^Rate limit reached: 3 burn requests/);
  });

  it('a prepared operation counts once: its relays are not counted again (a retry included)', async () => {
    const t = await newApp({ rateLimit: { burnPerMin: 2, generatePerMin: 60, walletsPerMin: 1000 }, rateLimitStatusPerMin: 100 });
    const client = newClient();
    const holder = await createTokenHolder(chain, { amount: 7n });
    const prepared = await post(t, '/api/burn_tokens/prepare', { mint: holder.mint, owner: holder.signer.address, priorityFee: 0 }, client);
    assert.equal(prepared.statusCode, 200, prepared.body);
    assertBudget(prepared, 2, 1);
    const transactions = await Promise.all((prepared.json().transactions as string[]).map((wire) => sign(wire, holder.signer)));
    // The relay, and a retry of it: not counted (the headers are the general budget's).
    for (let i = 0; i < 2; i++) {
      const relayed = await post(t, '/api/transactions', { transactions }, client);
      assert.equal(relayed.statusCode, 200, relayed.body);
      assert.equal(relayed.json().status, 'success', relayed.body);
      assert.equal(relayed.headers['ratelimit-limit'], '100');
    }
    // Beyond that, the same transactions count as any relay: the burn budget still had 1.
    const third = await post(t, '/api/transactions', { transactions }, client);
    assert.equal(third.statusCode, 200, third.body);
    assertBudget(third, 2, 0);
    assert429(await post(t, '/api/transactions', { transactions }, client), /burn requests/);
  });

  it('at most PREVIEWS_PER_CLIENT previews of one client run at once; another client is not affected', async () => {
    const t = await newApp({ previewsPerClient: 1 });
    const holder = await createTokenHolder(chain, { amount: 0n });
    const url = `/api/reclaim_rent?owner=${holder.signer.address}`;
    const client = newClient();
    const answers = await Promise.all([get(t, url, client), get(t, url, client), get(t, url, client), get(t, url, newClient())]);
    const mine = answers.slice(0, 3);
    assert.ok(mine.some((a) => a.statusCode === 200));
    const refused = mine.filter((a) => a.statusCode === 429);
    assert.ok(refused.length > 0, mine.map((a) => a.statusCode).join(','));
    for (const r of refused) assert429(r, /^1 reclaim previews of this client are running; at most 1 at once/);
    assert.equal(answers[3]!.statusCode, 200, answers[3]!.body);
    // Slots are given back: the next preview runs.
    assert.equal((await get(t, url, client)).statusCode, 200);
  });
});

describe('a person following the README on loopback', () => {
  it('never meets a 429 with the default limits: previews, prepares, a few 400s, a burn, a reclaim, a relay', async () => {
    const defaults = loadConfig({});
    const t = await newApp({
      rateLimit: defaults.rateLimit,
      rateLimitStatusPerMin: defaults.rateLimitStatusPerMin,
      rateLimitPreviewPerMin: defaults.rateLimitPreviewPerMin,
      previewsPerClient: defaults.previewsPerClient,
    });
    // npm run demo:token: a wallet with a balance of a token, and an empty account of another mint.
    const holder = await createTokenHolder(chain, { amount: 1_000n });
    const otherMint = await createTestMint(chain, holder.signer);
    await createAta(chain, holder.signer, holder.signer.address, otherMint);
    const owner: Address = holder.signer.address;
    const answers: Response[] = [];
    const ask = async (response: Promise<Response>) => {
      const answer = await response;
      answers.push(answer);
      return answer;
    };

    // The previews of "Whole-wallet rent reclaim", with each option.
    for (const query of ['', '&withdrawExcess=true', `&burn=${holder.mint}`, '&priorityFee=0.000005', '']) {
      assert.equal((await ask(get(t, `/api/reclaim_rent?owner=${owner}${query}`))).statusCode, 200);
    }
    // A few mistakes while copying the examples: a missing field, a number as a string, bad JSON.
    await ask(post(t, '/api/burn_tokens', { mint: holder.mint, userPrivateKey: holder.key }));
    await ask(post(t, '/api/burn_tokens', { mint: holder.mint, priorityFee: '0.000005', userPrivateKey: holder.key }));
    await ask(t.app.inject({ method: 'POST', url: '/api/burn_tokens', headers: { 'content-type': 'application/json' }, payload: `{"mint":"${holder.mint}",}` }));
    // Keyless: prepare a burn and a reclaim, sign, relay one of them.
    const prepared = await ask(post(t, '/api/burn_tokens/prepare', { mint: holder.mint, owner, priorityFee: 0 }));
    await ask(post(t, '/api/reclaim_rent/prepare', { owner, priorityFee: 0 }));
    const signed = await Promise.all((prepared.json().transactions as string[]).map((wire) => sign(wire, holder.signer)));
    await ask(post(t, '/api/transactions', { transactions: signed }));
    await ask(post(t, '/api/transactions', { transactions: signed })); // "relaying the same transactions again answers with their status"
    // The preview again, then the keyed reclaim of what is left, and a burn of a mint already burned.
    await ask(get(t, `/api/reclaim_rent?owner=${owner}`));
    await ask(post(t, '/api/reclaim_rent', { userPrivateKey: holder.key, priorityFee: 0 }));
    await ask(post(t, '/api/burn_tokens', { mint: holder.mint, userPrivateKey: holder.key, priorityFee: 0 }));
    // Wallets and a status lookup.
    for (const query of ['n=3', 'n=2&mnemonic=12', 'n=1&format=keygen']) await ask(get(t, `/api/generate_wallets?${query}`));
    await ask(get(t, `/api/transactions/${'1'.repeat(64)}`));

    const limited = answers.filter((a) => a.statusCode === 429);
    assert.deepEqual(limited.map((a) => a.body), []);
    // The sequence did real work: the relayed burn landed, the reclaim closed the accounts.
    assert.ok(answers.some((a) => a.statusCode === 200 && a.json().status === 'success'));
  });
});
