/**
 * Keyless callers and v1 (docs/transaction-versions.md): the `transactionVersions` field of the
 * preview and the prepare, the relay of v1 transactions a wallet signed, and sponsored v1, through
 * the real app and the embedded chain, checked on chain to the lamport.
 *
 * Relied on (checked against the sources; see packages/localnet/test/v1Transactions.test.ts): a v1
 * message's first byte is 0x81; its priority fee is a total in lamports stated in its config, so a v1
 * fee is 5,000 per signature plus it; a limit left unset is 0 (solana-message `v1::TransactionConfig`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createKeyPairSignerFromBytes,
  createNoopSigner,
  createTransactionMessage,
  decompileTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type KeyPairSigner,
  type Signature,
  type Transaction,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createSponsoredTestApp, createTestApp, createTestKey, getLamports, rpcResult, startTestChain, writeEmptyTokenAccounts, type SponsoredTestApp, type TestApp, type TestChain } from '@cinder/testkit';

const ALL = ['legacy', 0, 1] as const;
const messageDecoder = getCompiledTransactionMessageDecoder();
const decodeWire = (wire: string): Transaction => getTransactionDecoder().decode(getBase64Encoder().encode(wire));
const versionOf = (wire: string) => messageDecoder.decode(decodeWire(wire).messageBytes).version;

async function newOwner(app: TestApp, lamports: number, accounts: number): Promise<KeyPairSigner> {
  const key = await createTestKey();
  if (lamports > 0) await rpcResult(app.chain.localnet.rpcUrl, 'localnet_setAccount', [key.address, { lamports }]);
  await writeEmptyTokenAccounts(app.chain, key.address, accounts - Math.floor(accounts / 2));
  await writeEmptyTokenAccounts(app.chain, key.address, Math.floor(accounts / 2), TOKEN_2022_PROGRAM_ADDRESS);
  return createKeyPairSignerFromBytes(key.secretKey);
}

/** What a wallet does with a prepared transaction: add the owner's signature (the sponsor's slot stays empty). */
async function sign(owner: KeyPairSigner, wire: string): Promise<string> {
  return getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], decodeWire(wire)));
}

/** The same instructions and blockhash, in a v1 message of the given config, signed by the owner: a wallet that rewrote the config. */
async function withConfig(owner: KeyPairSigner, wire: string, config: Parameters<typeof setTransactionMessageConfig>[0]): Promise<string> {
  const compiled = messageDecoder.decode(decodeWire(wire).messageBytes);
  const message = decompileTransactionMessage(compiled);
  if (!('blockhash' in message.lifetimeConstraint)) throw new Error('a prepared message has a blockhash lifetime');
  const rebuilt = pipe(
    createTransactionMessage({ version: 1 }),
    (m) => setTransactionMessageFeePayerSigner(createNoopSigner(compiled.staticAccounts[0]!), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(message.lifetimeConstraint as Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0], m),
    (m) => appendTransactionMessageInstructions(message.instructions, m),
    (m) => setTransactionMessageConfig(config, m),
  );
  return getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], compileTransaction(rebuilt)));
}

async function onChain(app: TestApp, signature: string) {
  const tx = await app.chain.rpc.getTransaction(signature as Signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'base64' }).send();
  assert.ok(tx?.meta, `${signature} landed`);
  return { version: tx.version, err: tx.meta.err, fee: tx.meta.fee };
}

const relay = (app: TestApp, transactions: string[], relayToken?: string) =>
  app.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions, ...(relayToken ? { relayToken } : {}) } });

/** Relays one transaction per request (a full v1 transaction is 5,462 base64 characters; a request body is at most 16 KiB). */
async function relayEach(app: TestApp, wires: string[], relayToken?: string): Promise<string[]> {
  const signatures: string[] = [];
  for (const wire of wires) {
    const answer = await relay(app, [wire], relayToken);
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.json().status, 'success', answer.body);
    signatures.push(...(answer.json().details.signatures as string[]));
  }
  return signatures;
}

const preview = async (app: TestApp, query: string) => {
  const answer = await app.app.inject({ method: 'GET', url: `/api/reclaim_rent?${query}` });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json().summary as { transactions: number; netLamports: string; feeLamports: string; sponsored: boolean };
};

const prepare = async (app: TestApp, body: Record<string, unknown>) => {
  const answer = await app.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: body });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json() as { transactions: string[]; sponsoredTransactions?: number; relayToken?: string; details: { summary: { transactions: number; netLamports: string; feeLamports: string } } };
};

describe('keyless v1, gate active', () => {
  let s: SponsoredTestApp;
  let app: TestApp;
  before(async () => {
    s = await createSponsoredTestApp(5_000_000_000n);
    app = s.t;
  });
  after(() => s.close());

  it('a bad transactionVersions is a 400 naming the field, in the prepare body and the preview query', async () => {
    const owner = (await generateKeyPairSigner()).address;
    for (const transactionVersions of [[2], ['legacy', 'v1'], [], ['legacy', 'legacy']]) {
      const answer = await app.app.inject({ method: 'POST', url: '/api/reclaim_rent/prepare', payload: { owner, priorityFee: 0, transactionVersions } });
      assert.equal(answer.statusCode, 400, JSON.stringify(transactionVersions));
      const body = answer.json();
      assert.equal(body.code, 'VALIDATION_FAILED');
      assert.ok(body.errors.some((e: { field: string }) => e.field.startsWith('transactionVersions')), answer.body);
    }
    for (const value of ['2', 'legacy,v1', '', '0,,1']) {
      const answer = await app.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner}&transactionVersions=${encodeURIComponent(value)}` });
      assert.equal(answer.statusCode, 400, value);
      assert.ok(answer.json().errors.some((e: { field: string }) => e.field === 'transactionVersions'), answer.body);
    }
  });

  it('with 1 listed the prepare is v1 and the preview with the same list has its count and net; relayed, each lands as version 1, the owner exact to the lamport', async () => {
    const owner = await newOwner(app, 50_000_000, 130);
    const legacy = await prepare(app, { owner: owner.address, priorityFee: 0.00001, signer: 'wallet' });
    assert.ok(legacy.transactions.every((w) => versionOf(w) === 'legacy'), 'without the field: legacy, as before v1');
    const seen = await preview(app, `owner=${owner.address}&priorityFee=0.00001&signer=wallet&transactionVersions=legacy,0,1`);
    const prepared = await prepare(app, { owner: owner.address, priorityFee: 0.00001, signer: 'wallet', transactionVersions: ALL });
    assert.ok(prepared.transactions.every((w) => versionOf(w) === 1));
    assert.ok(prepared.transactions.length < legacy.transactions.length, `${prepared.transactions.length} v1 against ${legacy.transactions.length} legacy`);
    assert.equal(seen.transactions, prepared.transactions.length);
    assert.equal(seen.netLamports, prepared.details.summary.netLamports);
    assert.equal(seen.feeLamports, prepared.details.summary.feeLamports);
    // v1's fee: each signature's 5,000 plus the priority fee as stated, to the lamport.
    assert.equal(BigInt(prepared.details.summary.feeLamports), 5_000n * BigInt(prepared.transactions.length) + 10_000n);

    const before = await getLamports(app.chain, owner.address);
    const signed = await Promise.all(prepared.transactions.map((w) => sign(owner, w)));
    await relayEach(app, signed);
    for (const wire of signed) {
      const landed = await onChain(app, getSignatureFromTransaction(decodeWire(wire)));
      assert.equal(landed.version, 1);
      assert.equal(landed.err, null);
    }
    assert.equal(await getLamports(app.chain, owner.address), before + BigInt(prepared.details.summary.netLamports));
  });

  it('the relay refuses a v1 transaction with an instruction Cinder never prepares, and sends nothing', async () => {
    const owner = await newOwner(app, 50_000_000, 2);
    const stranger = (await generateKeyPairSigner()).address;
    const prepared = await prepare(app, { owner: owner.address, priorityFee: 0, signer: 'wallet', transactionVersions: ALL });
    const compiled = messageDecoder.decode(decodeWire(prepared.transactions[0]!).messageBytes);
    const message = decompileTransactionMessage(compiled);
    const drainer = pipe(
      createTransactionMessage({ version: 1 }),
      (m) => setTransactionMessageFeePayerSigner(createNoopSigner(owner.address), m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(message.lifetimeConstraint as Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0], m),
      (m) => appendTransactionMessageInstructions([...message.instructions, getTransferSolInstruction({ source: createNoopSigner(owner.address), destination: stranger, amount: 1_000_000n })], m),
      (m) => setTransactionMessageConfig({ computeUnitLimit: 200_000, loadedAccountsDataSizeLimit: 1024 * 1024, priorityFeeLamports: 0n }, m),
    );
    const wire = getBase64EncodedWireTransaction(await partiallySignTransaction([owner.keyPair], compileTransaction(drainer)));
    const before = await getLamports(app.chain, owner.address);
    const answer = await relay(app, [wire]);
    assert.equal(answer.statusCode, 400, answer.body);
    assert.equal(answer.json().code, 'INSTRUCTION_NOT_ALLOWED');
    assert.match(answer.json().detail, /System TransferSol/);
    const [status] = (await app.chain.rpc.getSignatureStatuses([getSignatureFromTransaction(decodeWire(wire))]).send()).value;
    assert.equal(status, null, 'nothing was sent');
    assert.equal(await getLamports(app.chain, owner.address), before);
    assert.equal(await getLamports(app.chain, stranger as Address), 0n);
  });

  it('a wallet that raises the priority fee in the v1 config is relayed, and charged exactly what it stated', async () => {
    const owner = await newOwner(app, 50_000_000, 10);
    const prepared = await prepare(app, { owner: owner.address, priorityFee: 0, signer: 'wallet', transactionVersions: ALL });
    assert.equal(prepared.transactions.length, 1);
    const budget = messageDecoder.decode(decodeWire(prepared.transactions[0]!).messageBytes);
    assert.equal(budget.version, 1);
    const before = await getLamports(app.chain, owner.address);
    // The wallet keeps Cinder's limits and raises the priority fee from 0 to 7,777 lamports.
    const wire = await withConfig(owner, prepared.transactions[0]!, { computeUnitLimit: 300_000, loadedAccountsDataSizeLimit: 4 * 1024 * 1024, priorityFeeLamports: 7_777n });
    const answer = await relay(app, [wire]);
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.json().status, 'success');
    assert.equal(answer.json().details.transactions[0].fee, '12777');
    const landed = await onChain(app, getSignatureFromTransaction(decodeWire(wire)));
    assert.equal(landed.version, 1);
    assert.equal(landed.fee, 12_777n);
    const returned = BigInt(prepared.details.summary.netLamports) + BigInt(prepared.details.summary.feeLamports);
    assert.equal(await getLamports(app.chain, owner.address), before + returned - 12_777n);
  });

  it('sponsored v1: the policy refuses a message whose limits the wallet left unset (nothing signed or sent); as prepared, the sponsor is repaid in the same transaction and ends where it began', async () => {
    const owner = await newOwner(app, 0, 130);
    const sponsorBefore = await getLamports(app.chain, s.sponsor.signer.address);
    const seen = await preview(app, `owner=${owner.address}&signer=wallet&transactionVersions=legacy,0,1`);
    assert.equal(seen.sponsored, true);
    const prepared = await prepare(app, { owner: owner.address, priorityFee: 0, feePayer: 'sponsor', signer: 'wallet', transactionVersions: ALL });
    assert.ok(prepared.relayToken);
    assert.ok(prepared.transactions.every((w) => versionOf(w) === 1));
    assert.equal(seen.transactions, prepared.transactions.length);
    assert.equal(seen.netLamports, prepared.details.summary.netLamports);
    const sponsored = prepared.sponsoredTransactions!;
    assert.ok(sponsored >= 1 && sponsored < prepared.transactions.length, `${sponsored} of ${prepared.transactions.length} sponsored`);

    // A wallet that rewrote the config without its limits: same prepared message (the config is the
    // compute budget, which a wallet may change), so the token covers it, but it would fail and be charged.
    const unset = await withConfig(owner, prepared.transactions[0]!, { priorityFeeLamports: 0n });
    const refused = await relay(app, [unset], prepared.relayToken);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'RELAY_TOKEN_INVALID');
    assert.match(refused.json().detail, /v1 message that leaves its compute-unit limit unset/);
    // The sponsor signs first (its signature is the transaction's id); refused, it never signed, so nothing could be sent.
    assert.ok(Object.values(decodeWire(unset).signatures)[0] === null || Object.values(decodeWire(unset).signatures)[0]!.every((b) => b === 0));
    assert.equal(await getLamports(app.chain, s.sponsor.signer.address), sponsorBefore);

    const signed = await Promise.all(prepared.transactions.map((w) => sign(owner, w)));
    const signatures = [...(await relayEach(app, signed.slice(0, sponsored), prepared.relayToken)), ...(await relayEach(app, signed.slice(sponsored)))];
    assert.equal(signatures.length, prepared.transactions.length);
    const sponsorAccount = s.sponsor.signer.address;
    for (const [i, signature] of signatures.entries()) {
      const tx = await app.chain.rpc.getTransaction(signature as Signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
      assert.ok(tx?.meta);
      assert.equal(tx.version, 1);
      assert.equal(tx.meta.err, null);
      assert.equal(tx.transaction.message.accountKeys[0], i < sponsored ? sponsorAccount : owner.address);
    }
    assert.equal(await getLamports(app.chain, sponsorAccount), sponsorBefore);
    assert.equal(await getLamports(app.chain, owner.address), BigInt(prepared.details.summary.netLamports));
  });
});

describe('keyless v1, gate off', () => {
  let chain: TestChain;
  let app: TestApp;
  before(async () => {
    chain = await startTestChain({ v1Transactions: false });
    app = await createTestApp({}, { chain });
  });
  // The app does not close a chain it was given.
  after(async () => {
    await app.close();
    await chain.close();
  });

  it('1 listed still gets legacy, the preview the same count and net, and they land', async () => {
    const owner = await newOwner(app, 50_000_000, 40);
    const seen = await preview(app, `owner=${owner.address}&signer=wallet&transactionVersions=legacy,0,1`);
    const prepared = await prepare(app, { owner: owner.address, priorityFee: 0, signer: 'wallet', transactionVersions: ALL });
    assert.ok(prepared.transactions.every((w) => versionOf(w) === 'legacy'));
    assert.equal(seen.transactions, prepared.transactions.length);
    assert.equal(seen.netLamports, prepared.details.summary.netLamports);
    const before = await getLamports(app.chain, owner.address);
    await relayEach(app, await Promise.all(prepared.transactions.map((w) => sign(owner, w))));
    assert.equal(await getLamports(app.chain, owner.address), before + BigInt(prepared.details.summary.netLamports));
  });
});
