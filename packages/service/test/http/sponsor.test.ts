/**
 * The fee sponsor (SPONSOR_KEYPAIR) end to end on the embedded chain, to the lamport: wallets with
 * 0 SOL burn and reclaim, the sponsor pays the fee and is repaid in the same transaction, so it
 * ends exactly where it began; keyless prepare → sign with kit → relay; forged messages that name
 * the sponsor as fee payer are refused and cost it nothing.
 *
 * Solana facts relied on (the embedded chain runs the real programs): the fee of a transaction is
 * 5,000 lamports per signature plus ceil(price × limit / 1e6), and the chain's own record of it is
 * `meta.fee` of getTransaction; closing an empty 165-byte SPL Token account returns its rent,
 * 2,039,280 lamports, to the destination; a System transfer from an account that holds no data
 * only needs that account's signature.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  airdropFactory,
  appendTransactionMessageInstructions,
  compileTransaction,
  createKeyPairSignerFromBytes,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  lamports,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type KeyPairSigner,
  type Transaction,
  type TransactionMessageBytes,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { loadSponsor, type Sponsor } from '../../src/keys/sponsor.ts';
import { issueRelayToken } from '../../src/operations/relayToken.ts';
import { createTestApp, metricValue, TEST_SERVER_SECRET, type TestApp, chainFee } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createAta, createAuxTokenAccount, createFundedSigner, createTestMint, getLamports, mintTokens } from '@cinder/testkit';

const TOKEN_ACCOUNT_RENT = 2_039_280n;
const SPONSOR_FUNDING = 5_000_000_000n;

let t: TestApp;
let sponsor: Sponsor;
let keyDir: string;
/** Pays for the test fixtures (mints, accounts): never the owners under test. */
let funder: KeyPairSigner;

async function sponsorFromFile(): Promise<Sponsor> {
  const key = await createTestKey();
  const path = join(keyDir, `${key.address}.json`);
  await writeFile(path, key.keygenJson, { mode: 0o600 });
  return loadSponsor(path);
}

before(async () => {
  keyDir = await mkdtemp(join(tmpdir(), 'cinder-sponsor-'));
  sponsor = await sponsorFromFile();
  t = await createTestApp({}, { sponsor });
  await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({
    recipientAddress: sponsor.signer.address,
    lamports: lamports(SPONSOR_FUNDING),
    commitment: 'confirmed',
  });
  funder = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
});
after(async () => {
  await t.close();
  await rm(keyDir, { recursive: true, force: true });
});

interface BrokeOwner {
  signer: KeyPairSigner;
  base58Key: string;
  mint: Address;
  accounts: Address[];
}

/** An owner that holds 0 SOL and `amount` tokens of a fresh mint (plus `emptyAccounts` more empty accounts of it), all paid by the funder. */
async function brokeOwner(options: { amount?: bigint; emptyAccounts?: number } = {}): Promise<BrokeOwner> {
  const key = await createTestKey();
  const signer = await createKeyPairSignerFromBytes(key.secretKey);
  const mint = await createTestMint(t.chain, funder, { decimals: 0 });
  const ata = await createAta(t.chain, funder, signer.address, mint);
  if ((options.amount ?? 5n) > 0n) await mintTokens(t.chain, funder, mint, ata, options.amount ?? 5n);
  const accounts = [ata];
  for (let i = 0; i < (options.emptyAccounts ?? 0); i++) accounts.push(await createAuxTokenAccount(t.chain, funder, signer.address, mint));
  assert.equal(await getLamports(t.chain, signer.address), 0n, 'the owner holds no SOL');
  return { signer, base58Key: key.base58SecretKey, mint, accounts };
}

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });

/** What a wallet does with a prepared transaction: decode it, add the owner's signature, encode it. */
async function signPrepared(base64Wire: string, owner: KeyPairSigner): Promise<{ wire: string; transaction: Transaction }> {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64Wire));
  const signed = await partiallySignTransaction([owner.keyPair], transaction);
  return { wire: getBase64EncodedWireTransaction(signed), transaction };
}

/** The fee the chain itself recorded for a transaction. */

/** simulateTransaction requests this app has sent to the RPC so far. */
const simulations = () => metricValue(t, 'cinder_rpc_requests_total', 'method="simulateTransaction"');

async function closed(address: Address): Promise<boolean> {
  return (await t.chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value === null;
}

describe('sponsored fees: a wallet with 0 SOL gets its rent back', () => {
  it('keyed burn (POST /api/burn_tokens): the sponsor pays and is repaid; owner ends with reclaimed − fees; sponsor unchanged to the lamport', async () => {
    const owner = await brokeOwner();
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const simulationsBefore = await simulations();
    const response = await post('/api/burn_tokens', { mint: owner.mint, priorityFee: 0.000002, userPrivateKey: owner.base58Key });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'success', body.message);
    // An owner with 0 SOL is not simulated as the fee payer first (the node could only refuse it).
    assert.equal((await simulations()) - simulationsBefore, 1, 'one simulation: the sponsored transaction');
    const fee = await chainFee(t.chain, body.transactionId);
    assert.ok(fee >= 10_000n, 'two signatures: the owner\'s and the sponsor\'s');
    assert.equal(await getLamports(t.chain, owner.signer.address), TOKEN_ACCOUNT_RENT - fee);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    assert.ok(await closed(owner.accounts[0]!));
  });

  it('prepare (feePayer: sponsor) → sign with kit → relay, for a burn: sponsor unchanged, owner gets reclaimed − fees', async () => {
    const owner = await brokeOwner();
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const prepared = await post('/api/burn_tokens/prepare', { mint: owner.mint, owner: owner.signer.address, priorityFee: 0.000003, feePayer: 'sponsor' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const { transactions, relayToken, feePayer } = prepared.json();
    assert.equal(feePayer, sponsor.signer.address);
    assert.equal(typeof relayToken, 'string');
    assert.equal(transactions.length, 1);

    const { wire } = await signPrepared(transactions[0], owner.signer);
    const relayed = await post('/api/transactions', { transactions: [wire], relayToken });
    assert.equal(relayed.statusCode, 200, relayed.body);
    const body = relayed.json();
    assert.equal(body.status, 'success', body.message);
    assert.equal(body.details.transactions[0].sponsored, true);
    const fee = await chainFee(t.chain, body.transactionId);
    assert.equal(await getLamports(t.chain, owner.signer.address), TOKEN_ACCOUNT_RENT - fee);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    assert.ok(await closed(owner.accounts[0]!));

    // Relayed again (same bytes, same token): the same signature and status; nothing moves.
    const again = await post('/api/transactions', { transactions: [wire], relayToken });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().transactionId, body.transactionId);
    assert.equal(again.json().status, 'success');
    // Even once the token has expired, the transaction that landed is reported, not refused.
    const { transaction } = await signPrepared(transactions[0], owner.signer);
    const expired = issueRelayToken(TEST_SERVER_SECRET, [transaction.messageBytes], Date.now() - 1);
    const late = await post('/api/transactions', { transactions: [wire], relayToken: expired });
    assert.equal(late.statusCode, 200, late.body);
    assert.equal(late.json().transactionId, body.transactionId);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    assert.equal(await getLamports(t.chain, owner.signer.address), TOKEN_ACCOUNT_RENT - fee);
  });

  it('prepare (feePayer: sponsor) → sign with kit → relay, for a whole-wallet reclaim of several empty accounts', async () => {
    const owner = await brokeOwner({ amount: 0n, emptyAccounts: 2 });
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const prepared = await post('/api/reclaim_rent/prepare', { owner: owner.signer.address, priorityFee: 0, feePayer: 'sponsor' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const { transactions, relayToken } = prepared.json();
    const signed = await Promise.all(transactions.map((wire: string) => signPrepared(wire, owner.signer)));
    const relayed = await post('/api/transactions', { transactions: signed.map((s) => s.wire), relayToken });
    assert.equal(relayed.statusCode, 200, relayed.body);
    assert.equal(relayed.json().status, 'success', relayed.json().message);
    let fees = 0n;
    for (const signature of relayed.json().details.signatures) fees += await chainFee(t.chain, signature);
    assert.equal(fees, 10_000n * BigInt(transactions.length), 'no priority fee: 5,000 per signature, two signatures');
    assert.equal(await getLamports(t.chain, owner.signer.address), 3n * TOKEN_ACCOUNT_RENT - fees);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    for (const account of owner.accounts) assert.ok(await closed(account));
  });

  it('concurrent sponsored burns (keyed and relayed) never leave the sponsor below its starting balance once all landed', async () => {
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const keyed = await Promise.all(Array.from({ length: 5 }, () => brokeOwner()));
    const keyless = await Promise.all(Array.from({ length: 3 }, () => brokeOwner()));
    const results = await Promise.all([
      ...keyed.map((owner) => post('/api/burn_tokens', { mint: owner.mint, priorityFee: 0.000001, userPrivateKey: owner.base58Key })),
      ...keyless.map(async (owner) => {
        const prepared = await post('/api/burn_tokens/prepare', { mint: owner.mint, owner: owner.signer.address, priorityFee: 0.000001, feePayer: 'sponsor' });
        assert.equal(prepared.statusCode, 200, prepared.body);
        const { wire } = await signPrepared(prepared.json().transactions[0], owner.signer);
        return post('/api/transactions', { transactions: [wire], relayToken: prepared.json().relayToken });
      }),
    ]);
    for (const response of results) {
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'success', response.json().message);
    }
    for (const [i, owner] of [...keyed, ...keyless].entries()) {
      const fee = await chainFee(t.chain, results[i]!.json().transactionId);
      assert.equal(await getLamports(t.chain, owner.signer.address), TOKEN_ACCOUNT_RENT - fee);
    }
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
  });

  it('publishes the sponsor\'s balance as cinder_sponsor_balance_lamports', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    const match = /^cinder_sponsor_balance_lamports (\d+)$/m.exec(response.body);
    assert.ok(match, 'the gauge is published');
    assert.equal(BigInt(match[1]!), await getLamports(t.chain, sponsor.signer.address));
  });
});

describe('the sponsor signs only what this service prepared', () => {
  /** A prepared, sponsored burn of a fresh 0-SOL owner, and the owner-signed transaction. */
  async function preparedBurn() {
    const owner = await brokeOwner();
    const prepared = await post('/api/burn_tokens/prepare', { mint: owner.mint, owner: owner.signer.address, priorityFee: 0, feePayer: 'sponsor' });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const { transactions, relayToken } = prepared.json() as { transactions: string[]; relayToken: string };
    return { owner, relayToken, transaction: getTransactionDecoder().decode(getBase64Encoder().encode(transactions[0]!)) };
  }

  /** The message with the sponsor's repayment (the last instruction, a System transfer) changed to `amount`, signed by the owner. */
  async function withRepayment(transaction: Transaction, owner: KeyPairSigner, amount: bigint): Promise<string> {
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    assert.ok(message.version === 'legacy');
    const instructions = [...message.instructions];
    const repay = instructions.at(-1)!;
    const data = new Uint8Array(repay.data!);
    new DataView(data.buffer).setBigUint64(4, amount, true); // TransferSol: u32 discriminator 2, u64 lamports
    instructions[instructions.length - 1] = { ...repay, data };
    const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...message, instructions }) as TransactionMessageBytes;
    const forged = await partiallySignTransaction([owner.keyPair], { messageBytes, signatures: transaction.signatures });
    return getBase64EncodedWireTransaction(forged);
  }

  it('refuses a message naming the sponsor as fee payer without a relay token, with another message\'s token, or with a forged token; the sponsor pays nothing', async () => {
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const thief = await createTestKey();
    const thiefSigner = await createKeyPairSignerFromBytes(thief.secretKey);
    const { value: recent } = await t.chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    // Pay 1 SOL from the sponsor to the thief, the sponsor as fee payer: the thief signs what it can.
    const drain = compileTransaction(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayerSigner(createNoopSigner(sponsor.signer.address), m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(recent, m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getTransferSolInstruction({ source: createNoopSigner(sponsor.signer.address), destination: thief.address, amount: 1_000_000_000n }),
              getTransferSolInstruction({ source: thiefSigner, destination: sponsor.signer.address, amount: 0n }),
            ],
            m,
          ),
      ),
    );
    const drainWire = getBase64EncodedWireTransaction(await partiallySignTransaction([thiefSigner.keyPair], drain));
    const { relayToken: someToken } = await preparedBurn();
    const forgedToken = `v1.${Date.now() + 60_000}.${Buffer.from(new Uint8Array(32)).toString('base64url')}.${'A'.repeat(43)}`;

    const tokens = [
      [undefined, /fee sponsor, which signs only transactions this service prepared/],
      [someToken, /was not issued by this service for these exact transactions/],
      [forgedToken, /was not issued by this service/],
      [issueRelayToken('another-server-secret-of-32-characters!', [drain.messageBytes], Date.now() + 60_000), /was not issued by this service/],
    ] as const;
    // The default relay refuses the sponsor's transfer as an instruction Cinder never prepares ...
    for (const [relayToken] of tokens) {
      const response = await post('/api/transactions', { transactions: [drainWire], ...(relayToken ? { relayToken } : {}) });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, 'INSTRUCTION_NOT_ALLOWED');
      assert.match(response.json().detail, /instruction 0 \(System TransferSol\), which is not the repayment of a fee sponsor/);
    }
    // ... and a general relay (RELAY_ANY_TRANSACTION) still only lets the sponsor sign what a valid token covers.
    const anyRelay = await createTestApp({ relayAnyTransaction: true }, { chain: t.chain, sponsor });
    try {
      for (const [relayToken, detail] of tokens) {
        const response = await anyRelay.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions: [drainWire], ...(relayToken ? { relayToken } : {}) } });
        assert.equal(response.statusCode, 400, response.body);
        assert.equal(response.json().code, 'RELAY_TOKEN_INVALID');
        assert.match(response.json().detail, detail);
        assert.match(response.json().detail, /Nothing was sent\.$/);
      }
    } finally {
      await anyRelay.close();
    }
    assert.equal(await getLamports(t.chain, thief.address), 0n);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
  });

  it('refuses a prepared message changed after prepare (the repayment lowered), even with its own token; the sponsor pays nothing', async () => {
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const { owner, relayToken, transaction } = await preparedBurn();
    for (const amount of [0n, 1n]) {
      const forged = await withRepayment(transaction, owner.signer, amount);
      const response = await post('/api/transactions', { transactions: [forged], relayToken });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, 'RELAY_TOKEN_INVALID');
    }
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    assert.equal(await getLamports(t.chain, owner.signer.address), 0n);
    assert.ok(!(await closed(owner.accounts[0]!)), 'nothing landed');
  });

  it('behind a valid token too (a prepare bug), the sponsor signs only as fee payer repaid in full', async () => {
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const { owner, transaction } = await preparedBurn();
    const lowered = await withRepayment(transaction, owner.signer, 1n);
    const loweredBytes = getTransactionDecoder().decode(getBase64Encoder().encode(lowered)).messageBytes;
    // A token this service's secret did sign, over the changed message.
    const token = issueRelayToken(TEST_SERVER_SECRET, [loweredBytes], Date.now() + 60_000);
    const response = await post('/api/transactions', { transactions: [lowered], relayToken: token });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'RELAY_TOKEN_INVALID');
    assert.match(response.json().detail, /repays the fee sponsor 0\.000000001 SOL of its 0\.00001 SOL fee/);

    const { value: recent } = await t.chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const spender = compileTransaction(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayerSigner(createNoopSigner(sponsor.signer.address), m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(recent, m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getTransferSolInstruction({ source: createNoopSigner(sponsor.signer.address), destination: owner.signer.address, amount: 1_000_000n }),
              getTransferSolInstruction({ source: owner.signer, destination: sponsor.signer.address, amount: 1_000_000n }),
            ],
            m,
          ),
      ),
    );
    const spenderWire = getBase64EncodedWireTransaction(await partiallySignTransaction([owner.signer.keyPair], spender));
    const spent = await post('/api/transactions', {
      transactions: [spenderWire],
      relayToken: issueRelayToken(TEST_SERVER_SECRET, [spender.messageBytes], Date.now() + 60_000),
    });
    assert.equal(spent.statusCode, 400, spent.body);
    assert.equal(spent.json().code, 'INSTRUCTION_NOT_ALLOWED');
    assert.match(spent.json().detail, /instruction 0 \(System TransferSol\), which is not the repayment of a fee sponsor/);
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
  });

  it('refuses an expired relay token for a transaction that never landed (RELAY_TOKEN_INVALID), and one the owner did not sign (TRANSACTION_NOT_SIGNED)', async () => {
    const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);
    const { owner, relayToken, transaction } = await preparedBurn();
    const signed = await partiallySignTransaction([owner.signer.keyPair], transaction);
    const expired = issueRelayToken(TEST_SERVER_SECRET, [transaction.messageBytes], Date.now() - 1);
    const late = await post('/api/transactions', { transactions: [getBase64EncodedWireTransaction(signed)], relayToken: expired });
    assert.equal(late.statusCode, 400, late.body);
    assert.equal(late.json().code, 'RELAY_TOKEN_INVALID');
    assert.match(late.json().detail, /expired/);

    const unsigned = await post('/api/transactions', { transactions: [getBase64EncodedWireTransaction(transaction)], relayToken });
    assert.equal(unsigned.statusCode, 400, unsigned.body);
    assert.equal(unsigned.json().code, 'TRANSACTION_NOT_SIGNED');
    assert.match(unsigned.json().detail, new RegExp(`is not signed by ${owner.signer.address}`));
    assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
    assert.ok(!(await closed(owner.accounts[0]!)));
  });
});

describe('a sponsor that cannot pay', () => {
  it('answers 503 SPONSOR_UNAVAILABLE with Retry-After (keyed and prepare), never a stuck burn; nothing is sent', async () => {
    const poor = await sponsorFromFile(); // never funded: 0 SOL
    const other = await createTestApp({}, { chain: t.chain, sponsor: poor });
    try {
      const owner = await brokeOwner();
      const keyed = await other.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: { mint: owner.mint, priorityFee: 0, userPrivateKey: owner.base58Key } });
      assert.equal(keyed.statusCode, 503, keyed.body);
      assert.equal(keyed.json().code, 'SPONSOR_UNAVAILABLE');
      assert.ok(Number(keyed.headers['retry-after']) > 0);
      const prepared = await other.app.inject({
        method: 'POST',
        url: '/api/burn_tokens/prepare',
        payload: { mint: owner.mint, owner: owner.signer.address, priorityFee: 0, feePayer: 'sponsor' },
      });
      assert.equal(prepared.statusCode, 503, prepared.body);
      assert.equal(prepared.json().code, 'SPONSOR_UNAVAILABLE');
      assert.ok(!(await closed(owner.accounts[0]!)));
      assert.equal(await getLamports(t.chain, poor.signer.address), 0n);
    } finally {
      await other.close();
    }
  });

  it('the sponsor key file is loaded as a non-extractable key', async () => {
    assert.equal(sponsor.signer.keyPair.privateKey.extractable, false);
  });
});
