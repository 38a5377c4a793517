/**
 * `npm run bench:burn`: burns per second, latency percentiles and RPC calls per burn (by method)
 * through the real HTTP endpoint, at concurrency 1, 32 and 128, without and with a provider budget
 * of 20 requests/s, for the landing engine (src/chain/) and, in the same run against the same chain,
 * the per-request design it replaced (kept below, only here, as the baseline).
 *
 * The chain sits behind a counting proxy on loopback (test/chain/rpcProxy.ts) that gives
 * confirmations real-cluster timing (BENCH_TIMING=cluster, the default: a signature reads as
 * unknown for 0.4 s and as `processed` until 1.2 s after it is first sent; BENCH_TIMING=local: the
 * local chain's own timing) and, in the budget rows, refuses beyond 20 requests/s with 429 +
 * Retry-After: 1, as a free-tier provider does. The engine is then run with SOLANA_RPC_MAX_RPS=20.
 */
import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64Encoder,
  isSolanaError,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type Address,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { buildApp } from '../src/app.ts';
import { createChainAdapter, rpcUnavailable } from '../src/chain/chainAdapter.ts';
import type { ChainAdapter, SignatureStatus } from '../src/chain/types.ts';
import { hasReachedCommitment } from '../src/chain/verdicts.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createWalletGenerator } from '../src/wallets/index.ts';
import { startRpcProxy, type RpcProxy } from '../test/chain/rpcProxy.ts';
import { createTestKey } from '@cinder/testkit';
import { createFundedSigner, sendInstructions, startTestChain, type TestChain } from '@cinder/testkit';

const TIMING = process.env.BENCH_TIMING === 'local' ? 'local' : 'cluster';
const PROVIDER_RPS = 20;
/** Burns per run at each concurrency: 8 one after the other, then one burn per concurrent client. */
const RUNS: { concurrency: number; burns: number }[] = [
  { concurrency: 1, burns: Number(process.env.BENCH_SEQUENTIAL_BURNS ?? 8) },
  { concurrency: 32, burns: 32 },
  { concurrency: 128, burns: 128 },
].filter((r) => !process.env.BENCH_CONCURRENCY || process.env.BENCH_CONCURRENCY.split(',').includes(String(r.concurrency)));
/** BENCH_IMPLEMENTATIONS=engine (or per-request) runs one of the two only. */
const IMPLEMENTATIONS = (['engine', 'per-request'] as const).filter(
  (name) => !process.env.BENCH_IMPLEMENTATIONS || process.env.BENCH_IMPLEMENTATIONS.split(',').includes(name),
);

interface Holder {
  key: string;
  mint: Address;
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
  for (let i = 0; i < count; i += 64) await Promise.all(Array.from({ length: Math.min(64, count - i) }, one));
  return holders;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The baseline: a chain adapter of one request's own, the design a shared landing engine is
 * measured against. Every request reads, fetches a blockhash, polls its own signature
 * (with searchTransactionHistory) and the block height on its own.
 */
function createPerRequestChainAdapter(rpcUrl: string): ChainAdapter {
  const rpc: Rpc<SolanaRpcApi> = createSolanaRpc(rpcUrl);
  const commitment = 'confirmed' as const;
  const signalFor = (deadline: number) => AbortSignal.timeout(Math.max(1, Math.min(10_000, deadline - Date.now())));
  const transient = (error: unknown) => {
    if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
      const retryAfter = Number(error.context.headers?.get?.('retry-after'));
      return { yes: error.context.statusCode === 429 || error.context.statusCode >= 500, after: Number.isFinite(retryAfter) ? retryAfter * 1000 : null };
    }
    return { yes: !isSolanaError(error), after: null };
  };
  async function read<T>(call: (abortSignal: AbortSignal) => Promise<T>, deadline: number): Promise<T> {
    let last: unknown;
    for (let attempt = 0; attempt < 4 && Date.now() < deadline; attempt++) {
      try {
        return await call(signalFor(deadline));
      } catch (error) {
        const t = transient(error);
        if (!t.yes) throw error;
        last = error;
        const backoff = t.after ?? 200 * 2 ** attempt * (0.5 + Math.random());
        if (Date.now() + backoff >= deadline) break;
        await sleep(backoff);
      }
    }
    throw rpcUnavailable(last);
  }
  const base64 = getBase64Encoder();
  const raw = (address: Address, account: { lamports: bigint; owner: Address; data: readonly [string, string] } | null) =>
    account && { address, lamports: account.lamports, owner: account.owner, data: new Uint8Array(base64.encode(account.data[0])) };
  async function getSignatureStatus(signature: Signature, deadline: number): Promise<SignatureStatus | null> {
    const { value } = await read((abortSignal) => rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send({ abortSignal }), deadline);
    const s = value[0];
    return s ? { slot: s.slot, err: s.err, confirmationStatus: s.confirmationStatus } : null;
  }
  return {
    commitment,
    async getAccounts(addresses, deadline) {
      const { value } = await read((abortSignal) => rpc.getMultipleAccounts([...addresses], { encoding: 'base64', commitment }).send({ abortSignal }), deadline);
      return value.map((account, i) => raw(addresses[i]!, account));
    },
    async getTokenAccountsByOwner(owner, filter, deadline) {
      const { value } = await read((abortSignal) => rpc.getTokenAccountsByOwner(owner, filter, { encoding: 'base64', commitment }).send({ abortSignal }), deadline);
      return value.map(({ pubkey, account }) => raw(pubkey, account)!);
    },
    async getBalance(address, deadline) {
      return (await read((abortSignal) => rpc.getBalance(address, { commitment }).send({ abortSignal }), deadline)).value;
    },
    async getLatestBlockhash(deadline) {
      return (await read((abortSignal) => rpc.getLatestBlockhash({ commitment }).send({ abortSignal }), deadline)).value;
    },
    async simulate(wire, deadline, options) {
      const signed = options?.signed === true;
      const { value } = await read(
        (abortSignal) =>
          rpc
            .simulateTransaction(wire, { encoding: 'base64', sigVerify: signed, replaceRecentBlockhash: !signed, commitment } as never)
            .send({ abortSignal }),
        deadline,
      );
      const v = value as { err: unknown; unitsConsumed?: bigint; logs: string[] | null };
      // The baseline does not ask for inner instructions (the bench relays nothing).
      return { err: v.err, unitsConsumed: v.unitsConsumed === undefined ? null : Number(v.unitsConsumed), logs: v.logs ?? [], innerPrograms: [] };
    },
    getSignatureStatuses: (signatures, deadline) => Promise.all(signatures.map((signature) => getSignatureStatus(signature, deadline))),
    getBlockHeight: (deadline) => read((abortSignal) => rpc.getBlockHeight({ commitment }).send({ abortSignal }), deadline),
    getGenesisHash: (deadline) => read((abortSignal) => rpc.getGenesisHash().send({ abortSignal }), deadline),
    async sendAndConfirm({ wire, signature, lastValidBlockHeight }, deadline) {
      let lastBroadcast = 0;
      let delivered = false;
      let polls = 0;
      while (Date.now() < deadline) {
        if (Date.now() - lastBroadcast >= 2000) {
          lastBroadcast = Date.now();
          try {
            await rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight: true, maxRetries: 0n }).send({ abortSignal: signalFor(deadline) });
            delivered = true;
          } catch {
            // the next rebroadcast tries again
          }
        }
        await sleep(Math.min(400, 25 * 2 ** polls++, Math.max(0, deadline - Date.now())));
        if (!delivered) continue;
        try {
          const status = await getSignatureStatus(signature, Math.min(deadline, Date.now() + 10_000));
          if (status && (hasReachedCommitment(status, commitment) || status.err)) return { kind: 'landed', slot: status.slot, err: status.err };
          if (!status && (await rpc.getBlockHeight({ commitment }).send({ abortSignal: signalFor(deadline) })) > lastValidBlockHeight) {
            const final = await getSignatureStatus(signature, deadline);
            return final ? { kind: 'landed', slot: final.slot, err: final.err } : { kind: 'expired' };
          }
        } catch {
          // keep trying until the deadline
        }
      }
      if (!delivered) throw rpcUnavailable();
      return { kind: 'unknown' };
    },
    async isHealthy() {
      return true;
    },
  };
}

async function startCinder(chain: ChainAdapter) {
  const config = loadConfig({
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_BURN_PER_MIN: '1000000',
    RATE_LIMIT_GENERATE_PER_MIN: '1000000',
    RATE_LIMIT_WALLETS_PER_MIN: '1000000000',
    RATE_LIMIT_STATUS_PER_MIN: '1000000',
  });
  const wallets = createWalletGenerator({ vanityTimeoutMs: config.vanityTimeoutMs });
  const app = await buildApp({ config, logger: createLogger(config.logLevel), chain, wallets });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    close: async () => {
      await app.close();
      await wallets.close();
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function run(implementation: string, budget: string, baseUrl: string, holders: Holder[], concurrency: number, proxy: RpcProxy) {
  proxy.reset();
  const latencies: number[] = [];
  const outcomes = new Map<string, number>();
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
      const body = (await res.json()) as { status?: string; code?: string };
      latencies.push(performance.now() - t0);
      const outcome = res.status === 200 ? String(body.status) : `${res.status} ${body.code ?? ''}`.trim();
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const byMethod: Record<string, number> = {};
  for (const r of proxy.requests) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;
  const n = holders.length;
  return {
    row: {
      implementation,
      budget,
      concurrency,
      burns: n,
      succeeded: outcomes.get('success') ?? 0,
      'burns/s': Number((n / seconds).toFixed(2)),
      'p50 ms': Math.round(percentile(latencies, 50)),
      'p99 ms': Math.round(percentile(latencies, 99)),
      'RPC calls/burn': Number((proxy.requests.length / n).toFixed(2)),
      'refused (429)': proxy.refusals.length,
      other: [...outcomes].filter(([k]) => k !== 'success').map(([k, v]) => `${v}× ${k}`).join(', '),
    },
    byMethod: Object.fromEntries(Object.entries(byMethod).map(([m, c]) => [m, Number((c / n).toFixed(2))])),
  };
}

const budgets = [
  { name: 'none', providerRps: undefined, serviceRps: undefined },
  { name: `${PROVIDER_RPS} req/s`, providerRps: PROVIDER_RPS, serviceRps: PROVIDER_RPS },
].filter((b) => !process.env.BENCH_BUDGETS || process.env.BENCH_BUDGETS.split(',').includes(b.providerRps ? 'budget' : 'none'));
console.log(`Timing: ${TIMING}. Each run on a fresh local chain (its getTokenAccountsByOwner scans every token account, so earlier runs' mints would slow later ones).`);
const rows = [];
const methods: Record<string, Record<string, number>> = {};
for (const budget of budgets) {
  for (const { concurrency, burns } of RUNS) {
    for (const implementation of IMPLEMENTATIONS) {
      const chain: TestChain = await startTestChain({ slotIntervalMs: 400 });
      const proxy = await startRpcProxy(
        chain.localnet.rpcUrl,
        TIMING === 'cluster' ? { confirmation: { unknownMs: 400, processedUntilMs: 1200 } } : {},
      );
      const holders = await createHolders(chain, burns);
      proxy.setMaxRps(budget.providerRps);
      const adapter =
        implementation === 'engine'
          ? createChainAdapter({ rpcUrl: proxy.url, commitment: 'confirmed', maxRequestsPerSecond: budget.serviceRps })
          : createPerRequestChainAdapter(proxy.url);
      const cinder = await startCinder(adapter);
      const result = await run(implementation, budget.name, cinder.url, holders, concurrency, proxy);
      await cinder.close();
      await proxy.close();
      await chain.close();
      rows.push(result.row);
      methods[`${implementation} c=${concurrency} budget=${budget.name}`] = result.byMethod;
      console.log(JSON.stringify(result.row));
    }
  }
}
console.table(rows);
console.log('RPC calls per burn, by method:');
console.table(methods);
console.log(
  'engine: budgeted transport, merged account reads, one cached blockhash, one signature tracker for every burn in flight;\n' +
    'per-request: the design it replaced (each burn reads, fetches a blockhash, polls its own signature with history and the block height).',
);
