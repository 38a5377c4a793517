/**
 * v1 against legacy: `npm run bench:versions` (a minute or two).
 *
 * A keyed reclaim (POST /api/reclaim_rent, Cinder signs) of a wallet of 200 and of 1,000 empty
 * token accounts (half of each token program), on the embedded chain with the v1 gate active
 * (v1 transactions) and with it off (legacy, as before the gate), each in the same process, one
 * after the other. For each: transactions, fees (lamports, priority fee 0.00001 SOL shared), the
 * net, and the wall time of the request (the chain executes at once in test mode, so the time is
 * the service's and the embedded chain's work, not slots).
 *
 * Then the keyed many-owner reclaim (POST /api/reclaim_rent with userPrivateKeys: one fee payer,
 * the closes of 20 owners × 10 empty accounts to one destination), v0 with the gate off against
 * v1 with it on.
 */
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { generateKeyPairSigner, getBase58Decoder } from '@solana/kit';
import { createFundedSigner, createTestApp, createTestKey, rpcResult, startTestChain, writeEmptyTokenAccounts } from '@cinder/testkit';

const SIZES = [200, 1000];
const PRIORITY_FEE_SOL = 0.00001;
const MANY_OWNERS = 20;
const ACCOUNTS_PER_OWNER = 10;

async function run(accounts: number, v1: boolean) {
  const chain = await startTestChain({ v1Transactions: v1 });
  const t = await createTestApp({}, { chain });
  try {
    const owner = await createTestKey();
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
    await writeEmptyTokenAccounts(chain, owner.address, accounts / 2, TOKEN_PROGRAM_ADDRESS);
    await writeEmptyTokenAccounts(chain, owner.address, accounts / 2, TOKEN_2022_PROGRAM_ADDRESS);
    const started = performance.now();
    const answer = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee: PRIORITY_FEE_SOL } });
    const ms = performance.now() - started;
    const body = answer.json() as { status: string; message: string; details: { transactions: unknown[]; feeLamports: string; netLamports: string; closedAccounts: string[] } };
    if (body.status !== 'success') throw new Error(`reclaim: ${body.message}`);
    return { transactions: body.details.transactions.length, fee: body.details.feeLamports, net: body.details.netLamports, closed: body.details.closedAccounts.length, ms };
  } finally {
    await t.close();
    await chain.close();
  }
}

console.log('accounts  format  transactions  closed  fee (lamports)  net (lamports)  time');
for (const accounts of SIZES) {
  for (const v1 of [false, true]) {
    const r = await run(accounts, v1);
    console.log(`${String(accounts).padStart(8)}  ${(v1 ? 'v1' : 'legacy').padEnd(6)}  ${String(r.transactions).padStart(12)}  ${String(r.closed).padStart(6)}  ${r.fee.padStart(14)}  ${r.net.padStart(14)}  ${(r.ms / 1000).toFixed(2)} s`);
  }
}

async function runMany(v1: boolean) {
  const chain = await startTestChain({ v1Transactions: v1 });
  const t = await createTestApp({}, { chain });
  try {
    const owners = await Promise.all(Array.from({ length: MANY_OWNERS }, () => createTestKey()));
    for (const owner of owners) {
      await writeEmptyTokenAccounts(chain, owner.address, ACCOUNTS_PER_OWNER / 2, TOKEN_PROGRAM_ADDRESS);
      await writeEmptyTokenAccounts(chain, owner.address, ACCOUNTS_PER_OWNER / 2, TOKEN_2022_PROGRAM_ADDRESS);
    }
    const feePayer = await createFundedSigner(chain, 1_000_000_000n);
    const destination = (await generateKeyPairSigner()).address;
    const started = performance.now();
    const answer = await t.app.inject({
      method: 'POST',
      url: '/api/reclaim_rent',
      payload: { userPrivateKeys: owners.map((o) => o.base58SecretKey), feePayerPrivateKey: getBase58Decoder().decode(feePayer.secretKey), destination, priorityFee: PRIORITY_FEE_SOL },
    });
    const ms = performance.now() - started;
    const body = answer.json() as { status: string; message: string; details: { transactions: { closedAccounts: string[] }[]; feeLamports: string; netLamports: string } };
    if (body.status !== 'success') throw new Error(`many-owner reclaim: ${body.message}`);
    const closed = body.details.transactions.reduce((n, tx) => n + tx.closedAccounts.length, 0);
    return { transactions: body.details.transactions.length, fee: body.details.feeLamports, net: body.details.netLamports, closed, ms };
  } finally {
    await t.close();
    await chain.close();
  }
}

console.log(`\nmany owners (${MANY_OWNERS} × ${ACCOUNTS_PER_OWNER} accounts, one fee payer, one destination)`);
console.log('format  transactions  closed  fee (lamports)  net (lamports)  time');
for (const v1 of [false, true]) {
  const r = await runMany(v1);
  console.log(`${(v1 ? 'v1' : 'v0').padEnd(6)}  ${String(r.transactions).padStart(12)}  ${String(r.closed).padStart(6)}  ${r.fee.padStart(14)}  ${r.net.padStart(14)}  ${(r.ms / 1000).toFixed(2)} s`);
}
