/**
 * `npm run bench:burn`: burns per second, latency percentiles and RPC calls per burn through the
 * real HTTP endpoint against the embedded chain, at concurrency 1 and 32, and the same figures for
 * a straightforward baseline (sequential RPC reads, no simulation, kit's
 * sendAndConfirmTransaction) measured in the same run against the same chain.
 *
 * RPC calls are counted on the wire by a small proxy in front of the chain.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  assertIsSendableTransaction,
  assertIsTransactionWithBlockhashLifetime,
  type Address,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getBurnCheckedInstruction,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import Fastify from 'fastify';
import { buildApp } from '../src/app.ts';
import { createChainAdapter } from '../src/chain/chainAdapter.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createWalletGenerator } from '../src/wallets/index.ts';
import { createTestKey } from '../test/helpers/keys.ts';
import { createFundedSigner, sendInstructions, startTestChain, type TestChain } from '../test/helpers/localChain.ts';

const BURNS_PER_RUN = Number(process.env.BENCH_BURNS ?? 64);

interface Holder {
  key: string;
  mint: Address;
}

/** Counts JSON-RPC calls (batch members included) on their way to the chain. */
async function startCountingProxy(target: string) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      try {
        const parsed = JSON.parse(body.toString('utf8')) as unknown;
        calls += Array.isArray(parsed) ? parsed.length : 1;
      } catch {
        calls += 1;
      }
      const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const n = calls;
      calls = 0;
      return n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One transaction per holder: fund the owner, create a mint, its ATA for the owner, mint tokens. */
async function createHolders(chain: TestChain, count: number): Promise<Holder[]> {
  const { signer: payer } = await createFundedSigner(chain, 1_000_000_000_000n);
  const mintRent = await chain.rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send();
  const holders: Holder[] = [];
  const one = async () => {
    const { secretKey, base58SecretKey } = await createTestKey();
    const owner = await createKeyPairSignerFromBytes(secretKey);
    const mint = await generateKeyPairSigner();
    const [ata] = await findAssociatedTokenPda({ owner: owner.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    await sendInstructions(chain, payer, [
      getTransferSolInstruction({ source: payer, destination: owner.address, amount: 100_000_000n }),
      getCreateAccountInstruction({ payer, newAccount: mint, lamports: mintRent, space: getMintSize(), programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
      getCreateAssociatedTokenIdempotentInstruction({ payer, ata, owner: owner.address, mint: mint.address }),
      getMintToInstruction({ mint: mint.address, token: ata, mintAuthority: payer, amount: 1_000_000n }),
    ]);
    holders.push({ key: base58SecretKey, mint: mint.address });
  };
  for (let i = 0; i < count; i += 16) await Promise.all(Array.from({ length: Math.min(16, count - i) }, one));
  return holders;
}

/** The straightforward implementation most projects would write. */
async function startBaseline(rpcUrl: string, wsUrl: string) {
  const { createSolanaRpcSubscriptions } = await import('@solana/kit');
  const rpc = createSolanaRpc(rpcUrl);
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions: createSolanaRpcSubscriptions(wsUrl) });
  const app = Fastify();
  app.post<{ Body: { mint: Address; userPrivateKey: string } }>('/api/burn_tokens', async (request) => {
    const { getBase58Encoder } = await import('@solana/kit');
    const owner = await createKeyPairSignerFromBytes(new Uint8Array(getBase58Encoder().encode(request.body.userPrivateKey)));
    const mintInfo = await rpc.getAccountInfo(request.body.mint, { encoding: 'base64' }).send();
    const decimals = Buffer.from(mintInfo.value!.data[0], 'base64')[44]!;
    const { value: accounts } = await rpc.getTokenAccountsByOwner(owner.address, { mint: request.body.mint }, { encoding: 'base64' }).send();
    const { value: blockhash } = await rpc.getLatestBlockhash().send();
    const instructions = accounts.flatMap(({ pubkey, account }) => {
      const amount = getTokenDecoder().decode(Buffer.from(account.data[0], 'base64')).amount;
      return [
        getBurnCheckedInstruction({ account: pubkey, mint: request.body.mint, authority: owner, amount, decimals }),
        getCloseAccountInstruction({ account: pubkey, destination: owner.address, owner }),
      ];
    });
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(owner, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    assertIsSendableTransaction(signed);
    assertIsTransactionWithBlockhashLifetime(signed);
    await sendAndConfirm(signed, { commitment: 'confirmed' });
    return { status: 'success' };
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

async function startCinder(rpcUrl: string) {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_BURN_PER_MIN: '1000000',
    RATE_LIMIT_GENERATE_PER_MIN: '1000000',
    RATE_LIMIT_WALLETS_PER_MIN: '1000000000',
  });
  const wallets = createWalletGenerator({ vanityTimeoutMs: config.vanityTimeoutMs });
  const app = await buildApp({ config, logger: createLogger('silent'), chain: createChainAdapter({ rpcUrl, commitment: config.commitment }), wallets });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: async () => { await app.close(); await wallets.close(); } };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function run(name: string, baseUrl: string, holders: Holder[], concurrency: number, takeCalls: () => number) {
  takeCalls();
  const latencies: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < holders.length) {
      const holder = holders[next++]!;
      const t0 = performance.now();
      const res = await fetch(`${baseUrl}/api/burn_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mint: holder.mint, priorityFee: 0.000001, userPrivateKey: holder.key }),
      });
      const body = (await res.json()) as { status?: string; detail?: string };
      latencies.push(performance.now() - t0);
      if (res.status !== 200 || body.status !== 'success') failures.push(`${res.status} ${body.status ?? body.detail}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    implementation: name,
    concurrency,
    burns: holders.length,
    'burns/s': Number((holders.length / seconds).toFixed(1)),
    'p50 ms': Number(percentile(latencies, 50).toFixed(1)),
    'p99 ms': Number(percentile(latencies, 99).toFixed(1)),
    'RPC calls/burn': Number((takeCalls() / holders.length).toFixed(1)),
    failures: failures.length,
  };
}

const chain = await startTestChain({ slotIntervalMs: 400 });
const proxy = await startCountingProxy(chain.localnet.rpcUrl);
const cinder = await startCinder(proxy.url);
const baseline = await startBaseline(proxy.url, chain.localnet.wsUrl);
console.log(`Preparing ${BURNS_PER_RUN * 4} token holders on the local chain...`);
const rows = [];
for (const concurrency of [1, 32]) {
  rows.push(await run('cinder', cinder.url, await createHolders(chain, BURNS_PER_RUN), concurrency, proxy.take));
  rows.push(await run('baseline', baseline.url, await createHolders(chain, BURNS_PER_RUN), concurrency, proxy.take));
}
console.table(rows);
console.log(
  'cinder: simulate for a tight compute-unit limit, priority fee, maxRetries 0 + rebroadcast, confirmation by polling;\n' +
    'baseline: sequential reads, no simulation, no compute budget, kit sendAndConfirmTransaction (WebSocket confirmation).',
);
await cinder.close();
await baseline.close();
await proxy.close();
await chain.close();
