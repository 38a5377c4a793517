/** Sending, confirming, simulating and looking up transactions with @solana/kit's own functions. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  airdropFactory,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  getAddressEncoder,
  assertIsTransactionWithBlockhashLifetime,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isSolanaError,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, getLamports, startTestChain, type TestChain } from '@cinder/testkit';
import { rpcCall, rpcResult } from '@cinder/testkit';

let chain: TestChain;
let payer: KeyPairSigner;

before(async () => {
  // No slot timer: slots move only with landed transactions and warps, so slot-exact assertions
  // (finality depth, replacement blockhash) cannot race a timer on a busy machine.
  chain = await startTestChain({ slotIntervalMs: 0 });
  ({ signer: payer } = await createFundedSigner(chain, 100_000_000_000n));
});
after(() => chain.close());

async function signedTransfer(amount: bigint, opts: { blockhash?: { blockhash: Blockhash; lastValidBlockHeight: bigint }; extra?: Instruction[]; to?: string } = {}) {
  const blockhash = opts.blockhash ?? (await chain.rpc.getLatestBlockhash().send()).value;
  // Default: to the payer itself, so any amount works without rent-exemption concerns.
  const destination = (opts.to ?? payer.address) as KeyPairSigner['address'];
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions([...(opts.extra ?? []), getTransferSolInstruction({ source: payer, destination, amount })], m),
    ),
  );
  assertIsTransactionWithBlockhashLifetime(transaction);
  return transaction;
}

const wire = (tx: Parameters<typeof getBase64EncodedWireTransaction>[0]) => getBase64EncodedWireTransaction(tx);

test('airdropFactory funds an address and the airdrop signature has a status', async () => {
  const { address } = await generateKeyPairSigner();
  const signature = await airdropFactory({ rpc: chain.rpc, rpcSubscriptions: chain.rpcSubscriptions })({
    recipientAddress: address,
    lamports: lamports(2_500_000_000n),
    commitment: 'confirmed',
  });
  assert.equal(await getLamports(chain, address), 2_500_000_000n);
  const { value: [status] } = await chain.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send();
  assert.equal(status?.err, null);
  assert.equal(status?.confirmationStatus, 'confirmed');
  // Two identical requests in a row are two distinct airdrops.
  await rpcResult(chain.localnet.rpcUrl, 'requestAirdrop', [address, 1]);
  await rpcResult(chain.localnet.rpcUrl, 'requestAirdrop', [address, 1]);
  assert.equal(await getLamports(chain, address), 2_500_000_002n);
});

test('sendAndConfirmTransactionFactory confirms a transfer; status and transaction are recorded', async () => {
  const recipient = await generateKeyPairSigner();
  const tx = await signedTransfer(1_000_000n, {
    to: recipient.address,
    extra: [getSetComputeUnitLimitInstruction({ units: 10_000 }), getSetComputeUnitPriceInstruction({ microLamports: 250_000n })],
  });
  const before = await getLamports(chain, payer.address);
  await sendAndConfirmTransactionFactory({ rpc: chain.rpc, rpcSubscriptions: chain.rpcSubscriptions })(tx, { commitment: 'confirmed' });
  const signature = getSignatureFromTransaction(tx);
  assert.equal(await getLamports(chain, recipient.address), 1_000_000n);
  const debited = before - (await getLamports(chain, payer.address));

  const { value: [status] } = await chain.rpc.getSignatureStatuses([signature]).send();
  assert.ok(status);
  assert.deepEqual({ err: status.err, status: status.status, confirmationStatus: status.confirmationStatus }, { err: null, status: { Ok: null }, confirmationStatus: 'confirmed' });

  const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send();
  assert.ok(landed?.meta);
  assert.equal(landed.slot, status.slot);
  assert.equal(landed.version, 0);
  assert.equal(landed.meta.fee, 5000n + 2500n); // ceil(250,000 µL × 10,000 CU / 1e6) = 2,500
  assert.equal(landed.meta.fee + 1_000_000n, debited);
  assert.equal(landed.meta.preBalances[0]! - landed.meta.postBalances[0]!, debited);
  assert.deepEqual(landed.meta.status, { Ok: null });
  assert.equal(landed.meta.computeUnitsConsumed, 450n);
  assert.deepEqual(landed.meta.logMessages?.slice(-2), ['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success']);
  assert.deepEqual(landed.meta.loadedAddresses, { writable: [], readonly: [] });
  assert.deepEqual(landed.transaction.signatures, [signature]);
  assert.deepEqual(landed.transaction.message.accountKeys.slice(0, 2), [payer.address, recipient.address]);
  assert.equal(typeof landed.blockTime, 'bigint');

  const asBase64 = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'base64', commitment: 'confirmed' }).send();
  assert.deepEqual(asBase64?.transaction, [wire(tx), 'base64']);
  // A version-0 transaction needs maxSupportedTransactionVersion, as on the validator.
  assert.equal((await rpcCall(chain.localnet.rpcUrl, 'getTransaction', [signature, { commitment: 'confirmed' }])).error?.code, -32015);
  // Not finalized yet; it is once 32 slots deep.
  assert.equal(await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'finalized', encoding: 'json' }).send(), null);
  await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [32]);
  const { value: [finalized] } = await chain.rpc.getSignatureStatuses([signature]).send();
  assert.deepEqual([finalized?.confirmationStatus, finalized?.confirmations], ['finalized', null]);

  const fees = await chain.rpc.getRecentPrioritizationFees([recipient.address]).send();
  assert.deepEqual(fees.filter((f) => f.prioritizationFee > 0n).map((f) => [f.slot, f.prioritizationFee]), [[status.slot, 250_000n]]);
});

test('a preflight failure is -32002 with the decoded error and logs, and nothing lands', async () => {
  const tx = await signedTransfer(1_000_000_000_000_000n);
  const reply = await rpcCall(chain.localnet.rpcUrl, 'sendTransaction', [wire(tx), { encoding: 'base64' }]);
  assert.deepEqual(reply.error, {
    code: -32002,
    message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
    data: {
      accounts: null,
      err: { InstructionError: [0, { Custom: 1 }] },
      innerInstructions: null,
      logs: [
        'Program 11111111111111111111111111111111 invoke [1]',
        `Transfer: insufficient lamports ${await getLamports(chain, payer.address) - 5000n}, need 1000000000000000`,
        'Program 11111111111111111111111111111111 failed: custom program error: 0x1',
      ],
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed: 150,
    },
  });
  const { value: [status] } = await chain.rpc.getSignatureStatuses([getSignatureFromTransaction(tx)]).send();
  assert.equal(status, null);
  // kit decodes it: a preflight-failure SolanaError whose cause is the custom program error.
  await assert.rejects(chain.rpc.sendTransaction(wire(tx), { encoding: 'base64' }).send(), (err: unknown) => {
    assert.ok(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE));
    assert.equal(err.context.unitsConsumed, 150n);
    const cause = err.cause;
    assert.ok(isSolanaError(cause, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM));
    assert.deepEqual([cause.context.code, cause.context.index], [1, 0]);
    return true;
  });
});

test('a bad signature is -32003 and never lands, even with skipPreflight', async () => {
  const tx = await signedTransfer(1n);
  const signatures = { ...tx.signatures };
  const forged = new Uint8Array(signatures[payer.address]!);
  forged[0]! ^= 0xff;
  const bad = { ...tx, signatures: { ...signatures, [payer.address]: forged } } as typeof tx;
  assert.deepEqual((await rpcCall(chain.localnet.rpcUrl, 'sendTransaction', [wire(bad), { encoding: 'base64' }])).error, {
    code: -32003,
    message: 'Transaction signature verification failure',
  });
  await assert.rejects(chain.rpc.sendTransaction(wire(bad), { encoding: 'base64' }).send(), (err: unknown) =>
    isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE));
  const signature = await chain.rpc.sendTransaction(wire(bad), { encoding: 'base64', skipPreflight: true }).send();
  assert.equal(signature, getBase58Decoder().decode(forged));
  assert.deepEqual((await chain.rpc.getSignatureStatuses([signature]).send()).value, [null]);
});

test('an unsigned transaction (all-zero signature) is -32003 and never lands', async () => {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const unsigned = wire(compileTransaction(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: payer.address, amount: 11n })], m),
  )));
  assert.equal((await rpcCall(chain.localnet.rpcUrl, 'sendTransaction', [unsigned, { encoding: 'base64' }])).error?.code, -32003);
  const balance = await getLamports(chain, payer.address);
  const signature = await chain.rpc.sendTransaction(unsigned, { encoding: 'base64', skipPreflight: true }).send();
  assert.equal(signature, '1'.repeat(64));
  assert.deepEqual((await chain.rpc.getSignatureStatuses([signature]).send()).value, [null]);
  assert.equal(await getLamports(chain, payer.address), balance);
  const simulated = await chain.rpc.simulateTransaction(unsigned, { encoding: 'base64', sigVerify: true }).send();
  assert.equal(simulated.value.err, 'SignatureFailure');
});

test('malformed transactions are -32602', async () => {
  const url = chain.localnet.rpcUrl;
  assert.deepEqual((await rpcCall(url, 'sendTransaction', ['AQID', { encoding: 'base64' }])).error?.code, -32602);
  assert.deepEqual((await rpcCall(url, 'sendTransaction', ['not base64!', { encoding: 'base64' }])).error?.code, -32602);
  assert.deepEqual((await rpcCall(url, 'sendTransaction', ['AQID', { encoding: 'json' }])).error?.code, -32602);
  const huge = Buffer.alloc(1300).toString('base64');
  assert.match((await rpcCall(url, 'sendTransaction', [huge, { encoding: 'base64' }])).error?.message ?? '', /too large/);
});

test('base58-encoded transactions (the default encoding) are accepted', async () => {
  const tx = await signedTransfer(5n);
  const signature = await rpcResult<Signature>(chain.localnet.rpcUrl, 'sendTransaction', [getBase58Decoder().decode(Buffer.from(wire(tx), 'base64'))]);
  assert.equal(signature, getSignatureFromTransaction(tx));
});

test('sending a landed transaction again is AlreadyProcessed', async () => {
  const tx = await signedTransfer(7n);
  await chain.rpc.sendTransaction(wire(tx), { encoding: 'base64' }).send();
  const again = await rpcCall(chain.localnet.rpcUrl, 'sendTransaction', [wire(tx), { encoding: 'base64' }]);
  assert.equal(again.error?.code, -32002);
  assert.equal(again.error?.message, 'Transaction simulation failed: This transaction has already been processed');
  assert.equal((again.error?.data as { err: unknown }).err, 'AlreadyProcessed');
  // With skipPreflight the duplicate is silently dropped: same signature, no second debit.
  const balance = await getLamports(chain, payer.address);
  assert.equal(await chain.rpc.sendTransaction(wire(tx), { encoding: 'base64', skipPreflight: true }).send(), getSignatureFromTransaction(tx));
  assert.equal(await getLamports(chain, payer.address), balance);
});

test('an expired blockhash is BlockhashNotFound and the transaction never lands', async () => {
  const { value: old } = await chain.rpc.getLatestBlockhash().send();
  const tx = await signedTransfer(3n, { blockhash: old });
  await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [151]);
  assert.equal((await chain.rpc.isBlockhashValid(old.blockhash).send()).value, false);
  const reply = await rpcCall(chain.localnet.rpcUrl, 'sendTransaction', [wire(tx), { encoding: 'base64' }]);
  assert.deepEqual(reply.error, {
    code: -32002,
    message: 'Transaction simulation failed: Blockhash not found',
    data: { accounts: null, err: 'BlockhashNotFound', innerInstructions: null, logs: [], replacementBlockhash: null, returnData: null, unitsConsumed: 0 },
  });
  const balance = await getLamports(chain, payer.address);
  const signature = await chain.rpc.sendTransaction(wire(tx), { encoding: 'base64', skipPreflight: true }).send();
  await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [2]);
  assert.deepEqual((await chain.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send()).value, [null]);
  assert.equal(await getLamports(chain, payer.address), balance);
});

test('with skipPreflight a failing transaction lands with its error and pays the fee', async () => {
  const tx = await signedTransfer(1_000_000_000_000_000n);
  const balance = await getLamports(chain, payer.address);
  const signature = await chain.rpc.sendTransaction(wire(tx), { encoding: 'base64', skipPreflight: true }).send();
  const { value: [status] } = await chain.rpc.getSignatureStatuses([signature]).send();
  assert.deepEqual([status?.err, status?.status], [{ InstructionError: [0n, { Custom: 1n }] }, { Err: { InstructionError: [0n, { Custom: 1n }] } }]);
  const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send();
  assert.equal(landed?.meta?.fee, 5000n);
  assert.equal(await getLamports(chain, payer.address), balance - 5000n);
});

test('simulateTransaction: replaceRecentBlockhash, sigVerify, and requested accounts', async () => {
  const recipient = await generateKeyPairSigner();
  // Unsigned, with a blockhash the chain never produced.
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM' as Blockhash, lastValidBlockHeight: 0n }, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 1_000_000n })], m),
  );
  const unsigned = wire(compileTransaction(message));
  const stale = await chain.rpc.simulateTransaction(unsigned, { encoding: 'base64' }).send();
  assert.equal(stale.value.err, 'BlockhashNotFound');

  const { value: latest } = await chain.rpc.getLatestBlockhash().send();
  const simulated = await chain.rpc
    .simulateTransaction(unsigned, { encoding: 'base64', replaceRecentBlockhash: true, accounts: { addresses: [recipient.address], encoding: 'base64' } })
    .send();
  assert.equal(simulated.value.err, null);
  assert.equal(simulated.value.unitsConsumed, 150n);
  assert.equal(simulated.value.returnData, null);
  assert.equal(simulated.value.replacementBlockhash?.blockhash, latest.blockhash);
  assert.equal(simulated.value.replacementBlockhash?.lastValidBlockHeight, latest.lastValidBlockHeight);
  assert.equal(simulated.value.accounts?.[0]?.lamports, 1_000_000n);
  assert.equal(await getLamports(chain, recipient.address), 0n, 'simulation changes nothing');

  const verifyAndReplace = await rpcCall(chain.localnet.rpcUrl, 'simulateTransaction', [unsigned, { encoding: 'base64', sigVerify: true, replaceRecentBlockhash: true }]);
  assert.deepEqual(verifyAndReplace.error, { code: -32602, message: 'sigVerify may not be used with replaceRecentBlockhash' });
  const signed = await signedTransfer(1n);
  const verified = await chain.rpc.simulateTransaction(wire(signed), { encoding: 'base64', sigVerify: true }).send();
  assert.equal(verified.value.err, null);
  const unsignedVerified = await chain.rpc.simulateTransaction(unsigned, { encoding: 'base64', sigVerify: true }).send();
  assert.equal(unsignedVerified.value.err, 'BlockhashNotFound');
});

test('getFeeForMessage quotes the fee, and null for an unknown blockhash', async () => {
  const tx = await signedTransfer(1n, { extra: [getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n })] });
  const messageBase64 = Buffer.from(tx.messageBytes).toString('base64');
  assert.equal((await rpcResult<{ value: number }>(chain.localnet.rpcUrl, 'getFeeForMessage', [messageBase64])).value, 11_000);
  const stale = await signedTransfer(1n, { blockhash: { blockhash: '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM' as Blockhash, lastValidBlockHeight: 0n } });
  assert.equal((await rpcResult<{ value: null }>(chain.localnet.rpcUrl, 'getFeeForMessage', [Buffer.from(stale.messageBytes).toString('base64')])).value, null);
});

test('v0 transactions loading accounts from an address lookup table', async () => {
  const { address: recipient } = await generateKeyPairSigner();
  const { address: table } = await generateKeyPairSigner();
  // Lookup-table state: discriminator 1, deactivation slot u64::MAX, extended at slot 0, then addresses.
  const data = new Uint8Array(56 + 32);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true);
  data.set(getAddressEncoder().encode(recipient), 56);
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [
    table,
    { lamports: 10_000_000, data: Buffer.from(data).toString('base64'), owner: 'AddressLookupTab1e1111111111111111111111111' },
  ]);
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const message = compressTransactionMessageUsingAddressLookupTables(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient, amount: 2_000_000n })], m),
    ),
    { [table]: [recipient] },
  );
  const tx = await signTransactionMessageWithSigners(message);
  const signature = await chain.rpc.sendTransaction(wire(tx), { encoding: 'base64' }).send();
  assert.equal(await getLamports(chain, recipient), 2_000_000n);
  const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send();
  assert.deepEqual(landed?.meta?.loadedAddresses, { writable: [recipient], readonly: [] });
  const lookups = (landed?.transaction.message as { addressTableLookups?: unknown }).addressTableLookups;
  assert.deepEqual(lookups, [{ accountKey: table, readonlyIndexes: [], writableIndexes: [0] }]);
  const keys = landed!.transaction.message.accountKeys.length;
  assert.equal(landed!.meta!.postBalances.length, keys + 1);
  assert.equal(landed!.meta!.postBalances[keys], 2_000_000n);
});
