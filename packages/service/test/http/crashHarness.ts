/**
 * The harness of the crash tests (idempotencyCrash*.test.ts; two files, so that each stays within
 * the per-file time limit on a loaded machine). Importing it registers the chain, Redis and
 * cleanup hooks of the file that imports it.
 *
 * Idempotency survives a crash: the real server runs
 * as a child process, a burn with an Idempotency-Key is executed by the chain, the server is
 * killed with SIGKILL before it can answer, a new server starts, and the retry with the same key
 * answers with the signature that landed and its status, never NO_TOKEN_ACCOUNT, never a second
 * transaction. Once with the in-memory store (its journal under STATE_DIR, with the secret it
 * generated there) and once with Redis (SERVER_SECRET shared by both servers).
 *
 * Fault used: `failAfterSend` makes the chain answer 503 to everything once a sendTransaction has
 * been executed, so the server cannot confirm and keeps the request open until it is killed;
 * the moment a plain getSlot answers 503 is the moment the burn was executed.
 * Chain facts relied on: closing a classic token account returns 2,039,280 lamports; one
 * signature without priority fee costs 5,000 lamports.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { after, afterEach, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fetchMint } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTokenHolder, getLamports, startTestChain, type TestChain, type TokenHolder } from '@cinder/testkit';
import { startTestRedis, type TestRedis } from '@cinder/testkit';
import { postRaw, rpcResult } from '@cinder/testkit';

const RENT_LAMPORTS = 2_039_280n;
const FEE_LAMPORTS = 5_000n;

export let chain: TestChain;
export let redis: TestRedis;
const children: ChildProcess[] = [];
const apps: TestApp[] = [];
export const dirs: string[] = [];
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  [chain, redis] = await Promise.all([startTestChain(), startTestRedis()]);
});
afterEach(async () => {
  await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
});
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(apps.map((a) => a.close()));
  await chain.close();
  await redis.stop();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Server {
  url: string;
  child: ChildProcess;
  output(): string;
}

/**
 * The instance that starts after the crash: the real app in this process (cheaper than another
 * child process, and just as new: it knows only what STATE_DIR or Redis kept), on a real port.
 */
export async function restart(overrides: Parameters<typeof createTestApp>[0]): Promise<Pick<Server, 'url' | 'output'>> {
  const app = await createTestApp(overrides, { chain });
  apps.push(app);
  return { url: await app.app.listen({ host: '127.0.0.1', port: 0 }), output: () => app.logs() };
}

export async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../src/server.ts', import.meta.url))], {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? tmpdir(), PORT: String(port), SOLANA_RPC_URL: chain.localnet.rpcUrl, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const match = /Cinder listening on (http:\/\/\S+)/.exec(output);
    if (match) return { url: match[1]!, child, output: () => output };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
    await sleep(50);
  }
}

export async function kill9(server: Server) {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

type Holder = TokenHolder;

export const createHolder = (): Promise<Holder> => createTokenHolder(chain);

export function burn(server: Pick<Server, 'url'>, h: Holder, idempotencyKey: string, priorityFee = 0) {
  return fetch(`${server.url}/api/burn_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ mint: h.mint, priorityFee, userPrivateKey: h.key }),
  });
}

export async function chainState(h: Holder) {
  const signatures = await chain.rpc.getSignaturesForAddress(h.signer.address, { limit: 1000 }).send();
  return {
    owner: await getLamports(chain, h.signer.address),
    supply: (await fetchMint(chain.rpc, h.mint)).data.supply,
    transactions: signatures.length,
    newest: signatures[0]!.signature as string,
  };
}

export async function untilSent(timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await postRaw(chain.localnet.rpcUrl, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }));
    if (status === 503) return;
    if (Date.now() > deadline) throw new Error('the burn was never sent');
    await sleep(20);
  }
}

/**
 * Starts a burn on `first`, kills it with SIGKILL once the chain executed the burn, and checks
 * the chain: one transaction, one fee. Returns the signature that landed.
 */
export async function burnAndCrash(first: Server, h: Holder, key: string) {
  const before = await chainState(h);
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ failAfterSend: true }]);
  let answered = '';
  const lost = burn(first, h, key).then(
    async (response) => {
      answered = `${response.status} ${await response.text()}`;
      return 'answered';
    },
    () => 'connection lost',
  );
  await untilSent().catch((error: unknown) => {
    throw new Error(`${String(error)}; the server answered: ${answered}\n${first.output()}`);
  });
  await kill9(first);
  assert.equal(await lost, 'connection lost', 'the server died before it could answer');
  await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
  const after = await chainState(h);
  assert.deepEqual(
    { owner: after.owner, supply: after.supply, transactions: after.transactions },
    { owner: before.owner + RENT_LAMPORTS - FEE_LAMPORTS, supply: 0n, transactions: before.transactions + 1 },
    'the burn landed once',
  );
  return { signature: after.newest, transactions: after.transactions, owner: after.owner };
}

/** The retry after the crash: the signature that landed, its status, and nothing sent again. */
export async function assertRecovered(server: Pick<Server, 'url'>, h: Holder, key: string, landed: Awaited<ReturnType<typeof burnAndCrash>>) {
  let body: { transactionId: string; status: string; tx_hash: string; message: string; details: { recovered?: boolean; signatures: string[] } } | undefined;
  for (let i = 0; i < 100; i++) {
    const retry = await burn(server, h, key);
    assert.equal(retry.status, 200, await retry.clone().text());
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    body = (await retry.json()) as typeof body;
    if (body!.status !== 'pending') break;
    await sleep(50);
  }
  assert.equal(body!.status, 'success', body!.message);
  assert.equal(body!.transactionId, landed.signature);
  assert.equal(body!.tx_hash, landed.signature);
  assert.deepEqual(body!.details.signatures, [landed.signature]);
  assert.equal(body!.details.recovered, true);
  assert.match(body!.message, /landed successfully/);
  // The same key with another body is still a reuse: the fingerprint survived too.
  const reused = await burn(server, h, key, 0.000001);
  assert.equal(reused.status, 400);
  assert.equal(((await reused.json()) as { code: string }).code, 'IDEMPOTENCY_KEY_REUSED');
  const now = await chainState(h);
  assert.deepEqual({ transactions: now.transactions, owner: now.owner }, { transactions: landed.transactions, owner: landed.owner }, 'the retries sent nothing');
}

let counter = 0;
export const newKey = () => `crash-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`;

