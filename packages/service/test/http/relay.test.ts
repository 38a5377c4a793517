/**
 * POST /api/transactions (the relay) against the real app and the embedded chain: transactions
 * built and signed here with @solana/kit, as a wallet would, checked on the chain to the lamport.
 *
 * Solana facts relied on (checked on the embedded chain, which runs the real programs):
 * - SPL Token CloseAccount of an empty account moves all its lamports (the rent, 2,039,280 for a
 *   165-byte account) to the destination; of an account with a balance it fails with token error
 *   11 (NonNativeHasBalance), spl-token program/src/error.rs;
 * - the fee of a transaction without priority fee is 5,000 lamports per signature;
 * - a transaction's identity is its first signature: the same bytes can land only once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getSetComputeUnitLimitInstruction } from '@solana-program/compute-budget';
import { getCloseAccountInstruction, getTransferInstruction } from '@solana-program/token';
import { extension, getTransferCheckedInstruction as getTransferChecked2022Instruction } from '@solana-program/token-2022';
import { NATIVE_MINT } from '../../src/plan/tokenState.ts';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createFundedSigner, createTestMint, getLamports, mintTokens, sendInstructions } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS, transferFeeExtension, transferWithFee, wrapSol } from '@cinder/testkit';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const TOKEN_ACCOUNT_RENT = 2_039_280n;
const BASE_FEE = 5_000n;

async function relay(body: unknown) {
  return t.app.inject({ method: 'POST', url: '/api/transactions', payload: body as Record<string, unknown> });
}

async function lifetime() {
  return (await t.chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value;
}

/** A kit message paid by `payer` with these instructions and a fresh blockhash. */
async function messageOf(payer: KeyPairSigner, instructions: Instruction[]) {
  const recent = await lifetime();
  return pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(recent, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
}

/** Signed by every signer in the message, as a wallet would, in base64 wire format. */
async function signedWire(payer: KeyPairSigner, instructions: Instruction[]): Promise<{ wire: string; signature: Signature }> {
  const signed = await signTransactionMessageWithSigners(await messageOf(payer, instructions));
  return { wire: getBase64EncodedWireTransaction(signed), signature: getSignatureFromTransaction(signed) };
}

/** An owner with SOL and an empty token account (its ATA of a fresh mint). */
async function ownerWithEmptyAccount() {
  const { signer } = await createFundedSigner(t.chain, 1_000_000_000n);
  const mint = await createTestMint(t.chain, signer, { decimals: 0 });
  const ata = await createAta(t.chain, signer, signer.address, mint);
  return { owner: signer, mint, ata };
}

const closeOf = (owner: KeyPairSigner, account: Address) => getCloseAccountInstruction({ account, destination: owner.address, owner });

async function statusOf(signature: Signature) {
  const { value } = await t.chain.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send();
  return value[0];
}

function assertRefused(response: Awaited<ReturnType<typeof relay>>, code: string, detail: RegExp) {
  assert.equal(response.statusCode, 400, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
  const body = response.json();
  assert.equal(body.code, code, response.body);
  assert.match(body.detail, detail);
  assert.match(body.detail, /Nothing was sent\.$/);
}

describe('POST /api/transactions: relaying a transaction signed with kit', () => {
  it('lands a plain close of an empty token account and answers like a burn; the owner gets the rent minus the fee, to the lamport', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const before = await getLamports(t.chain, owner.address);
    const { wire, signature } = await signedWire(owner, [closeOf(owner, ata)]);

    const response = await relay({ transactions: [wire] });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.transactionId, signature);
    assert.equal(body.tx_hash, signature);
    assert.equal(body.status, 'success');
    assert.equal(body.message, 'Relayed 1 transaction; it landed.');
    assert.deepEqual(body.details.signatures, [signature]);
    assert.equal(body.details.transactions.length, 1);
    assert.deepEqual(
      { ...body.details.transactions[0], slot: undefined },
      { signature, status: 'success', slot: undefined, sponsored: false, fee: BASE_FEE.toString(), walletAdded: { safetyChecks: 0, memo: false }, error: null },
    );
    assert.equal(typeof body.details.transactions[0].slot, 'number');

    assert.equal((await t.chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null, 'the token account is closed');
    assert.equal(await getLamports(t.chain, owner.address), before + TOKEN_ACCOUNT_RENT - BASE_FEE);
    assert.equal((await statusOf(signature))?.err, null);
  });

  it('is idempotent by signature: the same transaction relayed again, or twice at once, lands once and answers with its status', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const before = await getLamports(t.chain, owner.address);
    const { wire, signature } = await signedWire(owner, [closeOf(owner, ata)]);

    const [a, b] = await Promise.all([relay({ transactions: [wire] }), relay({ transactions: [wire] })]);
    for (const response of [a, b]) {
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().transactionId, signature);
      assert.equal(response.json().status, 'success');
    }
    const again = await relay({ transactions: [wire] });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().transactionId, signature);
    assert.equal(again.json().status, 'success');
    assert.equal(again.json().details.transactions[0].slot, a.json().details.transactions[0].slot, 'the slot it landed in, not a new one');
    // Charged once: one fee, one rent.
    assert.equal(await getLamports(t.chain, owner.address), before + TOKEN_ACCOUNT_RENT - BASE_FEE);
  });

  it('relays several transactions in one request, each reported', async () => {
    const first = await ownerWithEmptyAccount();
    const other = await ownerWithEmptyAccount();
    const one = await signedWire(first.owner, [closeOf(first.owner, first.ata)]);
    const two = await signedWire(other.owner, [closeOf(other.owner, other.ata)]);
    const response = await relay({ transactions: [one.wire, two.wire] });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json().details.signatures, [one.signature, two.signature]);
    assert.equal(response.json().status, 'success');
    assert.equal(response.json().message, 'Relayed 2 transactions; all landed.');
  });
});

describe('POST /api/transactions: refusals (nothing is sent)', () => {
  it('refuses an unsigned transaction: TRANSACTION_NOT_SIGNED', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const unsigned = compileTransaction(await messageOf(owner, [closeOf(owner, ata)]));
    const before = await getLamports(t.chain, owner.address);
    assertRefused(await relay({ transactions: [getBase64EncodedWireTransaction(unsigned)] }), 'TRANSACTION_NOT_SIGNED', new RegExp(`is not signed by ${owner.address}`));
    assert.equal(await getLamports(t.chain, owner.address), before);
    assert.notEqual((await t.chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null);
  });

  it('refuses a signature that does not verify (one byte changed, or another key\'s signature): TRANSACTION_NOT_SIGNED', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const { wire } = await signedWire(owner, [closeOf(owner, ata)]);
    const bytes = new Uint8Array(getBase64Encoder().encode(wire));
    bytes[1] = bytes[1]! ^ 0x01; // the first byte of the first signature (after the compact count)
    const tampered = getBase64Decoder().decode(bytes);
    assertRefused(await relay({ transactions: [tampered] }), 'TRANSACTION_NOT_SIGNED', /does not verify for this message/);

    // A real signature by the owner, of another message, placed on this one.
    const other = await signedWire(owner, [getTransferSolInstruction({ source: owner, destination: owner.address, amount: 1n })]);
    const otherBytes = new Uint8Array(getBase64Encoder().encode(other.wire));
    const swapped = new Uint8Array(getBase64Encoder().encode(wire));
    swapped.set(otherBytes.subarray(1, 65), 1);
    assertRefused(await relay({ transactions: [getBase64Decoder().decode(swapped)] }), 'TRANSACTION_NOT_SIGNED', /does not verify/);
    assert.notEqual((await t.chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null);
  });

  it('refuses an instruction of another program (a random program id): PROGRAM_NOT_ALLOWED; a Memo beyond what a wallet adds: INSTRUCTION_NOT_ALLOWED', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    // One short Memo is what a wallet may add (test/http/walletAdditions.test.ts); 300 bytes is not.
    const memo: Instruction = {
      programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'),
      accounts: [],
      data: new TextEncoder().encode('x'.repeat(300)),
    };
    const withMemo = await signedWire(owner, [closeOf(owner, ata), memo]);
    assertRefused(await relay({ transactions: [withMemo.wire] }), 'INSTRUCTION_NOT_ALLOWED', /instruction 1 is a Memo of 300 bytes, more than 256/);

    const random = (await generateKeyPairSigner()).address;
    const withRandom = await signedWire(owner, [{ programAddress: random, accounts: [], data: new Uint8Array([1]) }]);
    assertRefused(await relay({ transactions: [withRandom.wire] }), 'PROGRAM_NOT_ALLOWED', new RegExp(`calls ${random};`));
    // One bad transaction refuses the whole request: the good one beside it is not sent either.
    const good = await signedWire(owner, [closeOf(owner, ata)]);
    assertRefused(await relay({ transactions: [good.wire, withRandom.wire] }), 'PROGRAM_NOT_ALLOWED', /^transactions\.1 /);
    assert.equal(await statusOf(good.signature), null);
    assert.notEqual((await t.chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null);
  });

  it('refuses a transaction that would fail (closing an account that holds tokens): TRANSACTION_REJECTED with the decoded reason', async () => {
    const { owner, mint, ata } = await ownerWithEmptyAccount();
    await mintTokens(t.chain, owner, mint, ata, 7n);
    const before = await getLamports(t.chain, owner.address);
    const { wire, signature } = await signedWire(owner, [closeOf(owner, ata)]);
    assertRefused(await relay({ transactions: [wire] }), 'TRANSACTION_REJECTED', /^transactions\.0 would fail on chain \(.*(NonNativeHasBalance|11).*\)/);
    assert.equal(await statusOf(signature), null, 'never sent');
    assert.equal(await getLamports(t.chain, owner.address), before, 'no fee charged');
  });

  it('refuses what is not a transaction: INVALID_TRANSACTION; and a body outside the schema: 400', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    assertRefused(await relay({ transactions: ['not base64!'] }), 'INVALID_TRANSACTION', /is not base64/);
    assertRefused(await relay({ transactions: [getBase64Decoder().decode(new Uint8Array([1, 2, 3]))] }), 'INVALID_TRANSACTION', /is not a Solana wire transaction/);
    const { wire } = await signedWire(owner, [closeOf(owner, ata)]);
    const longer = getBase64Decoder().decode(new Uint8Array([...getBase64Encoder().encode(wire), 0, 0, 0]));
    assertRefused(await relay({ transactions: [longer] }), 'INVALID_TRANSACTION', /bytes after the end/);

    for (const body of [{}, { transactions: [] }, { transactions: [wire], extra: 1 }, { transactions: Array(9).fill(wire) }]) {
      const response = await relay(body);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.json().code, /^(MISSING_FIELD|UNKNOWN_FIELD|VALIDATION_FAILED)$/);
    }
    assert.notEqual((await t.chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value, null);
  });

  it('a transaction decoded by the relay is the one given: the signature it reports is the wire transaction\'s own', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const { wire } = await signedWire(owner, [closeOf(owner, ata)]);
    const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const response = await relay({ transactions: [wire] });
    assert.equal(response.json().transactionId, getSignatureFromTransaction(decoded));
  });
});

describe('POST /api/transactions relays only what Cinder prepares (no open relay)', () => {
  it('refuses a plain System transfer of 0.123456789 SOL between two unrelated wallets: INSTRUCTION_NOT_ALLOWED, nothing lands', async () => {
    const { signer: sender } = await createFundedSigner(t.chain, 1_000_000_000n);
    const { signer: receiver } = await createFundedSigner(t.chain, 1_000_000_000n);
    const [senderBefore, receiverBefore] = [await getLamports(t.chain, sender.address), await getLamports(t.chain, receiver.address)];
    const { wire, signature } = await signedWire(sender, [getTransferSolInstruction({ source: sender, destination: receiver.address, amount: 123_456_789n })]);
    assertRefused(await relay({ transactions: [wire] }), 'INSTRUCTION_NOT_ALLOWED', /^transactions\.0 has instruction 0 \(System TransferSol\), which is not the repayment of a fee sponsor; this relay lands only what Cinder prepares/);
    assert.equal(await statusOf(signature), null, 'never sent');
    assert.equal(await getLamports(t.chain, sender.address), senderBefore);
    assert.equal(await getLamports(t.chain, receiver.address), receiverBefore);
  });

  it('refuses a token transfer, and a close that pays the rent to someone other than the account\'s authority (a drainer\'s signed message)', async () => {
    const { owner, mint, ata } = await ownerWithEmptyAccount();
    await mintTokens(t.chain, owner, mint, ata, 5n);
    const thief = await createAta(t.chain, owner, (await generateKeyPairSigner()).address, mint);
    const transfer = await signedWire(owner, [getTransferInstruction({ source: ata, destination: thief, authority: owner, amount: 5n })]);
    assertRefused(await relay({ transactions: [transfer.wire] }), 'INSTRUCTION_NOT_ALLOWED', /instruction 0 \(SPL Token Transfer\), which is not a burn, close/);
    const empty = await ownerWithEmptyAccount();
    const drain = await signedWire(empty.owner, [getCloseAccountInstruction({ account: empty.ata, destination: thief, owner: empty.owner })]);
    assertRefused(await relay({ transactions: [drain.wire] }), 'INSTRUCTION_NOT_ALLOWED', /instruction 0 \(SPL Token CloseAccount\), which pays out to an account other than its own authority/);
    assert.equal(await statusOf(transfer.signature), null);
    assert.equal(await statusOf(drain.signature), null);
  });

  it('relays everything Cinder prepares: burn, close, wSOL unwrap, withheld-fee harvest (Token-2022) and excess-rent withdrawal', async () => {
    const { signer: owner } = await createFundedSigner(t.chain, 2_000_000_000n);
    const { signer: sender } = await createFundedSigner(t.chain, 1_000_000_000n);
    // A classic mint with a balance to burn, an empty account, wrapped SOL, a Token-2022 account
    // holding withheld transfer fees (burned and harvested), and a kept account with excess rent.
    const burnMint = await createTestMint(t.chain, owner, { decimals: 0 });
    await mintTokens(t.chain, owner, burnMint, await createAta(t.chain, owner, owner.address, burnMint), 9n);
    await createAta(t.chain, owner, owner.address, await createTestMint(t.chain, owner, { decimals: 0 }));
    await wrapSol(t.chain, owner, 5_000_000n);
    const feeMint = await createMint2022(t.chain, sender, { extensions: [transferFeeExtension(sender.address, 100)] });
    const senderAta = await createAta(t.chain, sender, sender.address, feeMint, TOKEN_2022_PROGRAM_ADDRESS);
    const ownerFeeAta = await createAta(t.chain, sender, owner.address, feeMint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, sender, feeMint, senderAta, 10_000_000n, TOKEN_2022_PROGRAM_ADDRESS);
    await transferWithFee(t.chain, sender, feeMint, senderAta, ownerFeeAta, 10_000_000n, 100_000n);
    const keptMint = await createTestMint(t.chain, owner, { decimals: 0 });
    const kept = await createAta(t.chain, owner, owner.address, keptMint);
    await mintTokens(t.chain, owner, keptMint, kept, 1n);
    await sendInstructions(t.chain, owner, [getTransferSolInstruction({ source: owner, destination: kept, amount: 777_000n })]);

    const prepared = await t.app.inject({
      method: 'POST',
      url: '/api/reclaim_rent/prepare',
      payload: { owner: owner.address, priorityFee: 0.000001, burn: [burnMint, feeMint, NATIVE_MINT], withdrawExcess: true },
    });
    assert.equal(prepared.statusCode, 200, prepared.body);
    const actions = new Set(prepared.json().details.accounts.map((a: { action: string }) => a.action));
    for (const action of ['close', 'burn_and_close', 'unwrap', 'withdraw_excess']) assert.ok(actions.has(action), `the plan has a ${action}`);
    const wires: string[] = [];
    for (const wire of prepared.json().transactions as string[]) {
      const signed = await signTransaction([owner.keyPair], getTransactionDecoder().decode(getBase64Encoder().encode(wire)));
      wires.push(getBase64EncodedWireTransaction(signed));
    }
    const before = await getLamports(t.chain, owner.address);
    const response = await relay({ transactions: wires });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'success', response.json().message);
    assert.equal(await getLamports(t.chain, owner.address), before + BigInt(prepared.json().details.summary.netLamports));
  });

  it('refuses two transactions of one request that take from the same token account (TRANSACTIONS_CONFLICT); nothing is sent', async () => {
    const { owner, ata } = await ownerWithEmptyAccount();
    const before = await getLamports(t.chain, owner.address);
    const one = await signedWire(owner, [closeOf(owner, ata)]);
    const two = await signedWire(owner, [getSetComputeUnitLimitInstruction({ units: 50_000 }), closeOf(owner, ata)]);
    assertRefused(await relay({ transactions: [one.wire, two.wire] }), 'TRANSACTIONS_CONFLICT', new RegExp(`^transactions\\.1 takes from token account ${ata}, as transactions\\.0 does`));
    assert.equal(await statusOf(one.signature), null);
    assert.equal(await statusOf(two.signature), null);
    assert.equal(await getLamports(t.chain, owner.address), before);
  });
});

describe('POST /api/transactions with RELAY_ANY_TRANSACTION=true', () => {
  let anyRelay: TestApp;
  before(async () => {
    anyRelay = await createTestApp({ relayAnyTransaction: true }, { chain: t.chain });
  });
  after(async () => {
    await anyRelay.close();
  });

  it('lands any transaction of the allowed programs (the System transfer the default relay refuses)', async () => {
    const { signer: sender } = await createFundedSigner(t.chain, 1_000_000_000n);
    const receiver = (await generateKeyPairSigner()).address;
    const { wire } = await signedWire(sender, [getTransferSolInstruction({ source: sender, destination: receiver, amount: 123_456_789n })]);
    const response = await anyRelay.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions: [wire] } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'success');
    assert.equal(await getLamports(t.chain, receiver), 123_456_789n);
  });

  it('refuses a program invoked below the top level: a Token-2022 transfer of a mint whose transfer hook is another program (PROGRAM_NOT_ALLOWED, nothing sent)', async () => {
    const { signer: owner } = await createFundedSigner(t.chain, 1_000_000_000n);
    // The hook program: any executable program outside the allow-list; Token-2022 invokes it on every transfer.
    const hookProgram = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
    const mint = await createMint2022(t.chain, owner, { decimals: 0, extensions: [extension('TransferHook', { authority: owner.address, programId: hookProgram })] });
    const source = await createAta(t.chain, owner, owner.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    const destination = await createAta(t.chain, owner, (await generateKeyPairSigner()).address, mint, TOKEN_2022_PROGRAM_ADDRESS);
    await mintTokens(t.chain, owner, mint, source, 10n, TOKEN_2022_PROGRAM_ADDRESS);
    const transfer = getTransferChecked2022Instruction({ source, mint, destination, authority: owner, amount: 3n, decimals: 0 });
    const withHook: Instruction = { ...transfer, accounts: [...transfer.accounts, { address: hookProgram, role: AccountRole.READONLY }] };
    const { wire, signature } = await signedWire(owner, [withHook]);
    const before = await getLamports(t.chain, owner.address);
    const response = await anyRelay.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions: [wire] } });
    assertRefused(response, 'PROGRAM_NOT_ALLOWED', new RegExp(`^transactions\\.0 invokes ${hookProgram}; only Compute Budget, System, SPL Token, Token-2022, Associated Token may run, at any depth`));
    assert.equal(await statusOf(signature), null, 'never sent');
    assert.equal(await getLamports(t.chain, owner.address), before);
  });
});
