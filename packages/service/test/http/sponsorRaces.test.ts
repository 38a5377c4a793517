/**
 * The fee sponsor cannot be drained, end to end on the embedded chain, balances to the
 * lamport. Each attack of "What was seen" is played as an attacker would, with a wallet of six
 * empty token accounts and 0 SOL (one sponsored transaction):
 *
 * - through the service (a sponsored message and the owner's own close in one request; the owner's
 *   close, keyed reclaim or sponsored prepare while its signed sponsored message is in flight; a
 *   caller-chosen priority fee): refused, the sponsor loses 0;
 * - straight to the chain (the owner's close sent while the sponsored transaction is in flight,
 *   `holdSendsMs` putting time between the service's simulation and the landing, as on a real
 *   cluster): the first round costs the sponsor that one transaction's fee, at most 20,000
 *   lamports; the wallet is then struck, so three rounds cost no more;
 * - a relay token forged with the test's own SERVER_SECRET over a message whose priority fee hides
 *   in a longer SetComputeUnitPrice is refused by the repayment check on its own;
 * - an honest sponsored reclaim of a 0-SOL wallet lands and repays the sponsor to the lamport.
 *
 * Solana facts relied on: a transaction that fails on chain still charges its fee payer its whole
 * fee (5,000 lamports a signature + ceil(price × limit / 1e6)); closing an empty 165-byte SPL Token
 * account returns 2,039,280 lamports; CloseAccount of an account that no longer exists fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
  type Transaction,
  type TransactionMessageBytes,
} from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { getCloseAccountInstruction } from '@solana-program/token';
import type { Sponsor } from '../../src/keys/sponsor.ts';
import { issueRelayToken } from '../../src/operations/relayToken.ts';
import { metricValue, TEST_SERVER_SECRET, type TestApp, chainFee, waitUntil } from '@cinder/testkit';
import { createSponsoredTestApp, type SponsoredTestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createAuxTokenAccount, createFundedSigner, createTestMint, getLamports, sendInstructions } from '@cinder/testkit';
import { rpcResult } from '@cinder/testkit';

const TOKEN_ACCOUNT_RENT = 2_039_280n;
const MAX_SPONSORED_FEE = 20_000n;
/** Far longer than one HTTP round trip to the local chain: the attacker's close certainly lands first. */
const HOLD_MS = 5_000;

let t: TestApp;
let sponsor: Sponsor;
let sponsored: SponsoredTestApp;
/** Pays for fixtures, and for the attacker's own transactions (the owner holds no SOL). */
let funder: KeyPairSigner;

before(async () => {
  sponsored = await createSponsoredTestApp(5_000_000_000n);
  ({ t, sponsor } = sponsored);
  funder = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
});
after(async () => {
  await rpcResult(t.chain.localnet.rpcUrl, 'localnet_clearFaults');
  await sponsored.close();
});

/** The attacker's wallet: 0 SOL, six empty token accounts of one mint. */
async function attackerWallet(): Promise<{ owner: KeyPairSigner; base58Key: string; accounts: Address[] }> {
  const key = await createTestKey();
  const owner = await createKeyPairSignerFromBytes(key.secretKey);
  const mint = await createTestMint(t.chain, funder, { decimals: 0 });
  const accounts: Address[] = [];
  for (let i = 0; i < 6; i++) accounts.push(await createAuxTokenAccount(t.chain, funder, owner.address, mint));
  assert.equal(await getLamports(t.chain, owner.address), 0n);
  return { owner, base58Key: key.base58SecretKey, accounts };
}

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
const sponsorBalance = () => getLamports(t.chain, sponsor.signer.address);

async function prepareSponsored(owner: Address, priorityFee = 0) {
  return post('/api/reclaim_rent/prepare', { owner, priorityFee, feePayer: 'sponsor' });
}

const decode = (wire: string) => getTransactionDecoder().decode(getBase64Encoder().encode(wire));
async function signed(transaction: Transaction, owner: KeyPairSigner): Promise<string> {
  return getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], transaction));
}

/** The owner's own close of one of its accounts, as base64, paid by the attacker's funded wallet. */
async function ownClose(owner: KeyPairSigner, account: Address): Promise<string> {
  const { value: recent } = await t.chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayerSigner(funder, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(recent, m),
    (m) => appendTransactionMessageInstructions([getCloseAccountInstruction({ account, destination: owner.address, owner })], m),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}



describe('the sponsor chooses its own fee', () => {
  it('a priorityFee over the bound with feePayer "sponsor" is a 400 naming the bound (prepare and keyed); at the bound it is prepared', async () => {
    const { owner, base58Key } = await attackerWallet();
    const before = await sponsorBalance();
    const refused = await prepareSponsored(owner.address, 0.01);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'INVALID_PRIORITY_FEE');
    assert.match(refused.json().detail, /the fee of each transaction is at most 0\.00002 SOL \(two signatures and a priority fee of at most 0\.00001 SOL per transaction/);
    const keyed = await post('/api/reclaim_rent', { priorityFee: 0.01, userPrivateKey: base58Key });
    assert.equal(keyed.statusCode, 400, keyed.body);
    assert.equal(keyed.json().code, 'INVALID_PRIORITY_FEE');
    const atBound = await prepareSponsored(owner.address, 0.00001);
    assert.equal(atBound.statusCode, 200, atBound.body);
    assert.equal(await sponsorBalance(), before);
  });
});

describe('the repayment check stands on its own (a relay token forged with the service\'s own secret)', () => {
  /** The prepared message with its SetComputeUnitPrice replaced by `data`, or another added; signed by the owner. */
  function rewritePrice(transaction: Transaction, data: (old: Uint8Array) => Uint8Array[]): Transaction {
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    assert.ok(message.version === 'legacy');
    const budgetIndex = message.staticAccounts.indexOf(COMPUTE_BUDGET_PROGRAM_ADDRESS);
    const instructions = message.instructions.flatMap((instruction) =>
      instruction.programAddressIndex === budgetIndex && instruction.data?.[0] === 3
        ? data(new Uint8Array(instruction.data)).map((d) => ({ ...instruction, data: d }))
        : [instruction],
    );
    const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...message, instructions }) as TransactionMessageBytes;
    return { messageBytes, signatures: transaction.signatures };
  }
  const priceData = (microLamports: bigint, extra: number[]) => {
    const data = new Uint8Array(9 + extra.length);
    data[0] = 3;
    new DataView(data.buffer).setBigUint64(1, microLamports, true);
    data.set(extra, 9);
    return data;
  };

  it('a priority fee hidden in a 10-byte SetComputeUnitPrice, or in a second one, is read as the runtime reads it and refused; the sponsor pays nothing', async () => {
    const { owner, accounts } = await attackerWallet();
    const prepared = await prepareSponsored(owner.address, 0);
    assert.equal(prepared.statusCode, 200, prepared.body);
    const original = decode(prepared.json().transactions[0]);
    const decoded = getCompiledTransactionMessageDecoder().decode(original.messageBytes);
    assert.ok(decoded.version === 'legacy');
    const limitInstruction = decoded.instructions.find((i) => i.data?.[0] === 2 && i.data.length === 5)!;
    const units = BigInt(new DataView(new Uint8Array(limitInstruction.data!).buffer).getUint32(1, true));
    // About 5,000 lamports of priority fee at this limit: the fee is about 15,000, the repayment stays 10,000.
    const price = (5_000n * 1_000_000n) / units;
    const before = await sponsorBalance();

    const hidden = rewritePrice(original, () => [priceData(price, [0])]);
    const response = await post('/api/transactions', {
      transactions: [await signed(hidden, owner)],
      relayToken: issueRelayToken(TEST_SERVER_SECRET, [hidden.messageBytes], Date.now() + 60_000),
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'RELAY_TOKEN_INVALID');
    assert.match(response.json().detail, /repays the fee sponsor 0\.00001 SOL of its 0\.000015\d* SOL fee: the wallet set a priority fee of \d+ micro-lamports per compute unit .*the fee sponsor does not sign it/);

    const twice = rewritePrice(original, (old) => [old, priceData(price, [])]);
    const duplicate = await post('/api/transactions', {
      transactions: [await signed(twice, owner)],
      relayToken: issueRelayToken(TEST_SERVER_SECRET, [twice.messageBytes], Date.now() + 60_000),
    });
    assert.equal(duplicate.statusCode, 400, duplicate.body);
    // A second compute-budget instruction is no change a wallet may make: refused before the sponsor's policy is asked.
    assert.equal(duplicate.json().code, 'INSTRUCTION_NOT_ALLOWED');
    assert.match(duplicate.json().detail, /repeats a compute-budget instruction \(DuplicateInstruction\)/);

    assert.equal(await sponsorBalance(), before);
    for (const account of accounts) assert.equal(await getLamports(t.chain, account), TOKEN_ACCOUNT_RENT, 'nothing landed');
  });
});

describe('races through the service cost the sponsor 0 lamports', () => {
  it('the sponsored message and the owner\'s own close of one of its accounts in one request: refused; while the owner\'s signed sponsored message is in flight, its own close, its keyed reclaim and its sponsored prepare are 409 naming it; it lands and repays to the lamport', async () => {
    const { owner, base58Key, accounts } = await attackerWallet();
    const before = await sponsorBalance();
    const prepared = await prepareSponsored(owner.address);
    assert.equal(prepared.statusCode, 200, prepared.body);
    const { transactions, relayToken } = prepared.json() as { transactions: string[]; relayToken: string };
    assert.equal(transactions.length, 1);
    const sponsoredWire = await signed(decode(transactions[0]!), owner);
    const close = await ownClose(owner, accounts[0]!);

    const together = await post('/api/transactions', { transactions: [sponsoredWire, close], relayToken });
    assert.equal(together.statusCode, 400, together.body);
    assert.equal(together.json().code, 'TRANSACTIONS_CONFLICT');
    assert.match(together.json().detail, new RegExp(`transactions\\.1 takes from token account ${accounts[0]}, as transactions\\.0 does`));

    // The owner's signed sponsored message goes out, held in flight by the chain.
    const url = t.chain.localnet.rpcUrl;
    const sendsBefore = await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"');
    await rpcResult(url, 'localnet_setFaults', [{ holdSendsMs: HOLD_MS }]);
    const honestRelay = post('/api/transactions', { transactions: [sponsoredWire], relayToken });
    await waitUntil(async () => (await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"')) > sendsBefore, 'the service to send');
    await rpcResult(url, 'localnet_setFaults', [{ holdSendsMs: 0 }]);
    const alone = await post('/api/transactions', { transactions: [close] });
    assert.equal(alone.statusCode, 409, alone.body);
    assert.equal(alone.json().code, 'SPONSORED_OPERATION_IN_PROGRESS');
    // The sponsor's signature, the transaction's id: the one the relay answers with below.
    const [inFlight] = alone.json().signatures as string[];
    assert.match(alone.json().detail, new RegExp(`transactions\\.0 is signed by ${owner.address}, a wallet whose sponsored operation is in flight: its owner-signed sponsored transaction \\(${inFlight}\\)`));
    assert.deepEqual(alone.json().signatures, [inFlight]);
    const keyed = await post('/api/reclaim_rent', { priorityFee: 0, userPrivateKey: base58Key });
    assert.equal(keyed.statusCode, 409, keyed.body);
    assert.equal(keyed.json().code, 'SPONSORED_OPERATION_IN_PROGRESS');
    assert.match(keyed.json().detail, new RegExp(`\\(${inFlight}\\)`));
    const again = await prepareSponsored(owner.address);
    assert.equal(again.statusCode, 409, again.body);
    assert.deepEqual(again.json().signatures, [inFlight]);
    assert.ok(Number(again.headers['retry-after']) > 0);

    const honest = await honestRelay;
    assert.equal(honest.statusCode, 200, honest.body);
    assert.equal(honest.json().status, 'success', honest.json().message);
    assert.equal(honest.json().transactionId, inFlight);
    const fee = await chainFee(t.chain, honest.json().transactionId);
    assert.equal(fee, 10_000n);
    assert.equal(await getLamports(t.chain, owner.address), 6n * TOKEN_ACCOUNT_RENT - fee);
    assert.equal(await sponsorBalance(), before, 'the sponsor ends where it began, to the lamport');
    // Landed: the turn is over, the owner's wallet is free again (it now pays its own fees).
    const next = await post('/api/reclaim_rent/prepare', { owner: owner.address, priorityFee: 0 });
    assert.equal(next.json().code, 'NOTHING_TO_RECLAIM', next.body);
  });

  it('two sponsored prepares of one wallet both answer (a prepare reserves nothing); relaying the first twice at once lands it once; the second\'s transaction, the same plan, is then reported, not sent again', async () => {
    const { owner, accounts } = await attackerWallet();
    const before = await sponsorBalance();
    const [first, second] = await Promise.all([prepareSponsored(owner.address), prepareSponsored(owner.address)]);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 200, second.body);

    const wire = await signed(decode(first.json().transactions[0]), owner);
    const relays = await Promise.all([
      post('/api/transactions', { transactions: [wire], relayToken: first.json().relayToken }),
      post('/api/transactions', { transactions: [wire], relayToken: first.json().relayToken }),
    ]);
    for (const relayed of relays) {
      assert.equal(relayed.statusCode, 200, relayed.body);
      assert.equal(relayed.json().status, 'success', relayed.json().message);
    }
    const late = await post('/api/transactions', { transactions: [await signed(decode(second.json().transactions[0]), owner)], relayToken: second.json().relayToken });
    // Either the very same message (same blockhash: the same signature, reported) or one whose accounts are gone (refused by its simulation).
    if (late.statusCode === 200) assert.equal(late.json().transactionId, relays[0]!.json().transactionId);
    else assert.equal(late.json().code, 'TRANSACTION_REJECTED', late.body);
    for (const account of accounts) assert.equal(await getLamports(t.chain, account), 0n);
    assert.equal(await sponsorBalance(), before);
  });
});

describe('a race straight to the chain is bounded: one failed transaction\'s fee over three rounds from one wallet', () => {
  it('round 1 costs the sponsor that transaction\'s fee (≤ 20,000 lamports), counted, logged and struck; rounds 2 and 3 are declined', async () => {
    const { owner, base58Key, accounts } = await attackerWallet();
    const sponsorBefore = await sponsorBalance();
    const lostBefore = await metricValue(t, 'cinder_sponsor_lamports_lost_total');
    const failedBefore = await metricValue(t, 'cinder_sponsor_failed_transactions_total');
    const url = t.chain.localnet.rpcUrl;
    const outcomes: number[] = [];

    for (let round = 0; round < 3; round++) {
      // The highest fee the sponsor accepts: what an attacker would pick.
      const prepared = await prepareSponsored(owner.address, 0.00001);
      outcomes.push(prepared.statusCode);
      if (prepared.statusCode !== 200) {
        assert.equal(prepared.statusCode, 403, prepared.body);
        assert.equal(prepared.json().code, 'SPONSOR_DECLINED');
        assert.match(prepared.json().detail, new RegExp(`does not pay for ${owner.address} until .*a sponsored transaction of this wallet failed on chain.*Pay the fee from the wallet itself`));
        const keyed = await post('/api/reclaim_rent', { priorityFee: 0, userPrivateKey: base58Key });
        assert.equal(keyed.statusCode, 403, keyed.body);
        assert.equal(keyed.json().code, 'SPONSOR_DECLINED');
        continue;
      }
      const { transactions, relayToken } = prepared.json() as { transactions: string[]; relayToken: string };
      const wire = await signed(decode(transactions[0]!), owner);
      const sendsBefore = await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"');
      // The service's send is held in flight; the owner's own close goes straight to the chain past it.
      await rpcResult(url, 'localnet_setFaults', [{ holdSendsMs: HOLD_MS }]);
      const relayed = post('/api/transactions', { transactions: [wire], relayToken });
      await waitUntil(async () => (await metricValue(t, 'cinder_rpc_requests_total', 'method="sendTransaction"')) > sendsBefore, 'the service to send');
      await rpcResult(url, 'localnet_setFaults', [{ holdSendsMs: 0 }]);
      // Its rent goes to the attacker's other wallet: the owner keeps 0 SOL, a wallet the sponsor is meant for.
      await sendInstructions(t.chain, funder, [getCloseAccountInstruction({ account: accounts[round]!, destination: funder.address, owner })]);
      const response = await relayed;
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'failed', response.json().message);
      assert.equal(response.json().details.transactions[0].sponsored, true);
    }

    assert.deepEqual(outcomes, [200, 403, 403], 'struck after the first loss');
    const lost = sponsorBefore - (await sponsorBalance());
    assert.ok(lost > 0n && lost <= MAX_SPONSORED_FEE, `the sponsor lost ${lost} lamports over three rounds`);
    assert.equal(BigInt(await metricValue(t, 'cinder_sponsor_lamports_lost_total')) - BigInt(lostBefore), lost, 'every lamport lost is counted');
    assert.equal((await metricValue(t, 'cinder_sponsor_failed_transactions_total')) - failedBefore, 1);
    const warning = t
      .logs()
      .split('\n')
      .filter((line) => line.includes('fee sponsor paid its fee and was not repaid'))
      .map((line) => JSON.parse(line) as { level: number; owner: string; lamportsLost: string });
    assert.ok(
      warning.some((w) => w.level === 40 && w.owner === owner.address && BigInt(w.lamportsLost) === lost),
      'a warning names the owner and the lamports lost',
    );
  });
});
