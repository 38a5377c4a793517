/**
 * The fee recorded for a transaction (getTransaction meta.fee) must be exactly what LiteSVM
 * debited from the payer, for every pricing rule: signatures, precompile signatures, explicit and
 * default compute-unit limits, and failed transactions (which still pay).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Decoder,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, getLamports, rpcCall, rpcResult, startTestChain, type TestChain } from '@cinder/testkit';

let chain: TestChain;
let payer: KeyPairSigner;

before(async () => {
  chain = await startTestChain({ slotIntervalMs: 0 });
  ({ signer: payer } = await createFundedSigner(chain));
});
after(() => chain.close());

const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const ED25519_PROGRAM = address('Ed25519SigVerify111111111111111111111111111');
const SECP256R1_PROGRAM = address('Secp256r1SigVerify1111111111111111111111111');

let nonce = 0n;
/** A self-transfer (unique per call) after `instructions`; the payer's balance only pays the fee. */
async function buildTransaction(instructions: Instruction[]) {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([...instructions, getTransferSolInstruction({ source: payer, destination: payer.address, amount: nonce++ })], m),
  );
  return { message, transaction: await signTransactionMessageWithSigners(message) };
}

/** Sends with skipPreflight (so failing transactions land too); returns recorded fee and payer delta. */
async function landAndMeasure(instructions: Instruction[]) {
  const { message, transaction } = await buildTransaction(instructions);
  const messageBase64 = getBase64Decoder().decode(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(message)));
  const { value: quoted } = await chain.rpc.getFeeForMessage(messageBase64 as never).send();
  const balanceBefore = await getLamports(chain, payer.address);
  await chain.rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', skipPreflight: true }).send();
  const landed = await chain.rpc
    .getTransaction(getSignatureFromTransaction(transaction), { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' })
    .send();
  assert.ok(landed?.meta, 'the transaction landed');
  return { fee: landed.meta.fee, quoted, debited: balanceBefore - (await getLamports(chain, payer.address)), err: landed.meta.err };
}

test('a plain transaction pays 5000 lamports per signature', async () => {
  const r = await landAndMeasure([]);
  assert.deepEqual(r, { fee: 5000n, quoted: 5000n, debited: 5000n, err: null });
});

test('explicit compute-unit limit and price: 5000 + ceil(price × limit / 1e6)', async () => {
  const r = await landAndMeasure([
    getSetComputeUnitLimitInstruction({ units: 300_000 }),
    getSetComputeUnitPriceInstruction({ microLamports: 10_000n }),
  ]);
  assert.deepEqual(r, { fee: 8000n, quoted: 8000n, debited: 8000n, err: null });
  const rounded = await landAndMeasure([
    getSetComputeUnitLimitInstruction({ units: 1_001 }),
    getSetComputeUnitPriceInstruction({ microLamports: 1_000n }),
  ]);
  assert.deepEqual(rounded, { fee: 5002n, quoted: 5002n, debited: 5002n, err: null }); // 1.001 rounds up to 2
});

test('without a limit, builtin instructions reserve 3,000 CU and others 200,000', async () => {
  const builtinsOnly = await landAndMeasure([getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n })]);
  assert.deepEqual(builtinsOnly, { fee: 11_000n, quoted: 11_000n, debited: 11_000n, err: null }); // 2 × 3,000 CU
  const withMemo = await landAndMeasure([
    getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n }),
    { programAddress: MEMO_PROGRAM, data: new TextEncoder().encode('fee probe') },
  ]);
  assert.deepEqual(withMemo, { fee: 211_000n, quoted: 211_000n, debited: 211_000n, err: null }); // 3,000 + 200,000 + 3,000 CU
});

test('precompile signatures are charged like transaction signatures, even when verification fails', async () => {
  const ed25519 = await landAndMeasure([{ programAddress: ED25519_PROGRAM, data: new Uint8Array([2, 0]) }]);
  assert.deepEqual(ed25519.err, { InstructionError: [0n, { Custom: 4n }] }); // kit reads every integer as bigint
  assert.deepEqual({ ...ed25519, err: null }, { fee: 15_000n, quoted: 15_000n, debited: 15_000n, err: null });
  const secp256r1 = await landAndMeasure([{ programAddress: SECP256R1_PROGRAM, data: new Uint8Array([2, 0]) }]);
  assert.deepEqual({ ...secp256r1, err: null }, { fee: 15_000n, quoted: 15_000n, debited: 15_000n, err: null });
});

test('a transaction failing on-chain still pays its fee and changes nothing else', async () => {
  const { address: recipient } = await generateKeyPairSigner();
  const r = await landAndMeasure([getTransferSolInstruction({ source: payer, destination: recipient, amount: 1_000_000_000_000n })]);
  assert.deepEqual(r, { fee: 5000n, quoted: 5000n, debited: 5000n, err: { InstructionError: [0n, { Custom: 1n }] } });
  assert.equal(await getLamports(chain, recipient), 0n);
});

test('a transaction invoking a missing program lands fee-only, as on a real cluster', async () => {
  const r = await landAndMeasure([{ programAddress: address('Missing111111111111111111111111111111111111') }]);
  assert.deepEqual(r, { fee: 5000n, quoted: 5000n, debited: 5000n, err: 'InvalidProgramForExecution' });
});

test('getFeeCalculatorForBlockhash (web3.js v1): 5000 lamports a signature for a recent blockhash, null for an unknown one', async () => {
  const { value: latest } = await chain.rpc.getLatestBlockhash().send();
  const ask = (blockhash: string) => rpcResult<{ context: { slot: number }; value: { feeCalculator: { lamportsPerSignature: number } } | null }>(chain.localnet.rpcUrl, 'getFeeCalculatorForBlockhash', [blockhash, { commitment: 'confirmed' }]);
  assert.deepEqual((await ask(latest.blockhash)).value, { feeCalculator: { lamportsPerSignature: 5000 } });
  const unknown = (await generateKeyPairSigner()).address;
  assert.equal((await ask(unknown)).value, null);
  assert.equal((await rpcCall(chain.localnet.rpcUrl, 'getFeeCalculatorForBlockhash', ['not-a-hash'])).error?.code, -32602);
});
