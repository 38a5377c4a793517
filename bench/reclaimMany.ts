/**
 * Many-wallets reclaim benchmark: `npm run bench:reclaim-many` (a minute or two).
 *
 * On the embedded local chain, with the real app in this process: 100 wallets with no SOL and two
 * empty token accounts each (one SPL Token, one Token-2022) are reclaimed to one destination by one
 * fee payer, (a) in one multi-owner reclaim (owners sharing transactions), and (b) 100 more such
 * wallets one owner per transaction (one request per owner, same fee payer). Both in the same run;
 * printed: transactions per 100 wallets, fees, what arrived at the destination, and the time taken.
 */
import { generateKeyPairSigner, getBase58Decoder, type Address } from '@solana/kit';
import { createTestApp } from '../test/helpers/app.ts';
import { createFundedSigner, createTestMint, getLamports } from '../test/helpers/localChain.ts';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS } from '../test/helpers/tokenKinds.ts';
import { createEmptyWallets, type ManyWallet } from '../test/http/manyFixture.ts';

const WALLETS = 100;
/** Requests of the one-owner-per-transaction run in flight at once. */
const AT_ONCE = 8;

const t = await createTestApp({ logLevel: 'warn' });
try {
  const payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
  const feePayer = await createFundedSigner(t.chain, 10_000_000_000n);
  const feePayerKey = getBase58Decoder().decode(feePayer.secretKey);
  const mints = [
    { mint: await createTestMint(t.chain, payer, { decimals: 0 }) },
    { mint: await createMint2022(t.chain, payer, { decimals: 0 }), tokenProgram: TOKEN_2022_PROGRAM_ADDRESS },
  ];
  console.log(`setting up ${2 * WALLETS} wallets with 2 empty accounts each…`);
  const shared = await createEmptyWallets(t.chain, payer, WALLETS, mints);
  const single = await createEmptyWallets(t.chain, payer, WALLETS, mints);

  async function reclaim(wallets: readonly ManyWallet[], destination: Address) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/reclaim_rent',
      payload: { userPrivateKeys: wallets.map((w) => w.key.base58SecretKey), feePayerPrivateKey: feePayerKey, destination, priorityFee: 0 },
    });
    const body = response.json();
    if (response.statusCode !== 200 || body.status !== 'success') throw new Error(`reclaim failed: ${response.body}`);
    return body.details as { transactions: unknown[]; feeLamports: string };
  }

  async function measure(name: string, run: (destination: Address) => Promise<{ transactions: number; fees: bigint }>) {
    const destination = (await generateKeyPairSigner()).address;
    const before = await getLamports(t.chain, feePayer.signer.address);
    const started = performance.now();
    const { transactions, fees } = await run(destination);
    const seconds = (performance.now() - started) / 1000;
    const paid = before - (await getLamports(t.chain, feePayer.signer.address));
    if (paid !== fees) throw new Error(`${name}: the fee payer paid ${paid}, the answers say ${fees}`);
    const received = await getLamports(t.chain, destination);
    console.log(
      `${name.padEnd(34)} ${String(transactions).padStart(4)} transactions per ${WALLETS} wallets, fees ${fees} lamports, ` +
        `${received} lamports at the destination, ${seconds.toFixed(1)} s`,
    );
    return transactions;
  }

  const many = await measure('multi-owner (owners share txs)', async (destination) => {
    const details = await reclaim(shared, destination);
    return { transactions: details.transactions.length, fees: BigInt(details.feeLamports) };
  });
  const one = await measure('one owner per transaction', async (destination) => {
    let transactions = 0;
    let fees = 0n;
    for (let i = 0; i < single.length; i += AT_ONCE) {
      const answers = await Promise.all(single.slice(i, i + AT_ONCE).map((w) => reclaim([w], destination)));
      for (const details of answers) {
        transactions += details.transactions.length;
        fees += BigInt(details.feeLamports);
      }
    }
    return { transactions, fees };
  });
  console.log(`multi-owner: ${(one / many).toFixed(1)}× fewer transactions`);
} finally {
  await t.close();
}
