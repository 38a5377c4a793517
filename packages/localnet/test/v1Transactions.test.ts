/**
 * Version 1 transactions on the embedded chain, held to mainnet's rules.
 *
 * What this relies on, checked against the sources:
 * - solana-message `versions/v1/mod.rs`: V1_PREFIX 0x81, MAX_TRANSACTION_SIZE 4096,
 *   MAX_ADDRESSES 64, MAX_INSTRUCTIONS 64, MAX_SIGNATURES 12; `v1/config.rs`: an unset compute-unit
 *   or loaded-accounts-data limit means 0, the priority fee is a total in lamports; serde camelCase.
 * - @solana/kit 8.4: `createTransactionMessage({ version: 1 })`, `setTransactionMessageConfig`,
 *   `getTransactionSizeLimit` (4096 for v1, 1232 otherwise); its wire encoder puts the message
 *   first and the signatures after it (asserted below). `V1_TRANSACTION_SIZE_LIMIT` exists in
 *   its sources but is not exported by 8.4.0 (its file says "intentionally not exported").
 * - litesvm 1.5: executes v1 when both limits are set; fails one without a loaded-data limit with
 *   MaxLoadedAccountsDataSizeExceeded but does not charge it, where agave commits it fee-only —
 *   the chain adds that charge (asserted below against the payer's balance).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase64Decoder,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  getTransactionEncoder,
  getTransactionSizeLimit,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
  signTransactionMessageWithSigners,
  type Address,
  type Base64EncodedWireTransaction,
  type Instruction,
  type KeyPairSigner,
  type V1TransactionConfig,
} from '@solana/kit';
import * as kit from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createFundedSigner, getLamports, startTestChain, type TestChain } from '@cinder/testkit';
import { FEATURE_PROGRAM, V1_TRANSACTIONS_FEATURE } from '../src/index.ts';

const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
const LIMITS: V1TransactionConfig = { computeUnitLimit: 1_400_000, loadedAccountsDataSizeLimit: 256 * 1024 };
const base64 = getBase64Decoder();

let chain: TestChain;
let payer: KeyPairSigner;

before(async () => {
  chain = await startTestChain({ slotIntervalMs: 0 });
  ({ signer: payer } = await createFundedSigner(chain));
});
after(() => chain.close());

let nonce = 1n;
/** A transaction of `version` paying a self-transfer (unique per call) after `instructions`. */
async function build(version: 'legacy' | 0 | 1, instructions: Instruction[], config?: V1TransactionConfig) {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const base = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions([...instructions, getTransferSolInstruction({ source: payer, destination: payer.address, amount: nonce++ })], m),
  );
  const message = version === 1 && config ? setTransactionMessageConfig(config, base as typeof base & { version: 1 }) : base;
  const transaction = await signTransactionMessageWithSigners(message);
  return { transaction, bytes: new Uint8Array(getTransactionEncoder().encode(transaction)) };
}

const memo = (length: number): Instruction => ({ programAddress: MEMO_PROGRAM, data: new TextEncoder().encode('m'.repeat(length)) });

/** A v1 transaction of exactly `size` bytes: a memo sized to fill it. */
async function v1OfSize(size: number) {
  const probe = await build(1, [memo(1)], LIMITS);
  return build(1, [memo(1 + size - probe.bytes.length)], LIMITS);
}

const send = (bytes: Uint8Array, skipPreflight = false) =>
  chain.rpc.sendTransaction(base64.decode(bytes) as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight }).send();

async function rpcError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    const cause = (err as { cause?: { message?: string }; context?: { __serverMessage?: string }; message: string });
    return cause.context?.__serverMessage ?? cause.message;
  }
  assert.fail('the call was expected to fail');
}

/**
 * A v1 message written field by field (kit's compiler refuses more than 64 addresses, so the
 * over-limit cases are built here): `accounts` after the payer (readonly, unsigned, referenced by
 * no instruction — legal), `count` self-transfers of 0, `signers` extra signer slots.
 */
async function handWrittenV1(opts: { extraAccounts: number; transfers: number; extraSigners?: number }): Promise<Uint8Array> {
  const { value: blockhash } = await chain.rpc.getLatestBlockhash().send();
  const extraSigners = await Promise.all(Array.from({ length: opts.extraSigners ?? 0 }, () => generateKeyPairSigner()));
  const extras = await Promise.all(Array.from({ length: opts.extraAccounts }, async () => (await generateKeyPairSigner()).address));
  const staticAccounts: Address[] = [payer.address, ...extraSigners.map((s) => s.address), SYSTEM_PROGRAM, ...extras];
  const systemIndex = 1 + extraSigners.length;
  const transfer = new Uint8Array(12); // SystemInstruction::Transfer (2), 0 lamports
  transfer[0] = 2;
  const compiled = {
    version: 1 as const,
    header: { numSignerAccounts: 1 + extraSigners.length, numReadonlySignerAccounts: extraSigners.length, numReadonlyNonSignerAccounts: 1 + extras.length },
    configMask: 0b1100,
    configValues: [{ kind: 'u32' as const, value: 200_000 }, { kind: 'u32' as const, value: 64 * 1024 }],
    lifetimeToken: blockhash.blockhash,
    numInstructions: opts.transfers,
    numStaticAccounts: staticAccounts.length,
    staticAccounts,
    instructionHeaders: Array.from({ length: opts.transfers }, () => ({ programAccountIndex: systemIndex, numInstructionAccounts: 2, numInstructionDataBytes: 12 })),
    instructionPayloads: Array.from({ length: opts.transfers }, () => ({ instructionAccountIndices: [0, 0], instructionData: transfer })),
  };
  const messageBytes = new Uint8Array(getCompiledTransactionMessageEncoder().encode(compiled));
  const signatures = await Promise.all([payer, ...extraSigners].map((s) => signBytes(s.keyPair.privateKey, messageBytes)));
  const bytes = new Uint8Array(messageBytes.length + 64 * signatures.length);
  bytes.set(messageBytes);
  signatures.forEach((signature, i) => bytes.set(signature, messageBytes.length + 64 * i));
  return bytes;
}

describe('the format, as kit writes it', () => {
  test('v1 starts with 0x81 and carries its signatures after the message; kit caps v1 at 4,096 bytes and others at 1,232 (through getTransactionSizeLimit only)', async () => {
    const { transaction, bytes } = await build(1, [], LIMITS);
    assert.equal(bytes[0], 0x81);
    const signature = transaction.signatures[payer.address]!;
    assert.deepEqual(bytes.subarray(bytes.length - 64), signature);
    assert.equal((kit as Record<string, unknown>).V1_TRANSACTION_SIZE_LIMIT, undefined, 'kit 8.4.0 keeps the constant internal');
    assert.equal(getTransactionSizeLimit(transaction), 4096);
    assert.equal(getTransactionSizeLimit((await build(0, [])).transaction), 1232);
  });
});

describe('size', () => {
  test('a 4,096-byte v1 transaction is accepted and executes', async () => {
    const { transaction, bytes } = await v1OfSize(4096);
    assert.equal(bytes.length, 4096);
    const signature = await send(bytes);
    assert.equal(signature, getSignatureFromTransaction(transaction));
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.meta?.err, null);
    assert.equal(landed?.version, 1);
  });

  test('a 4,097-byte v1 transaction is refused with the validator\'s error', async () => {
    const { bytes } = await v1OfSize(4097);
    assert.equal(bytes.length, 4097);
    const message = await rpcError(send(bytes));
    assert.match(message, /decoded solana_transaction::versioned::VersionedTransaction too large: 4097 bytes \(max: 4096 bytes\)/);
  });

  test('legacy and v0 keep the 1,232-byte packet', async () => {
    for (const version of ['legacy', 0] as const) {
      // A probe memo past 127 bytes, so the data length's compact-u16 already takes its 2 bytes.
      const probe = await build(version, [memo(200)]);
      const fits = await build(version, [memo(200 + 1232 - probe.bytes.length)]);
      assert.equal(fits.bytes.length, 1232);
      assert.equal(await send(fits.bytes), getSignatureFromTransaction(fits.transaction));
      const over = await build(version, [memo(201 + 1232 - probe.bytes.length)]);
      assert.equal(over.bytes.length, 1233);
      assert.match(await rpcError(send(over.bytes)), /too large: 1233 bytes \(max: 1232 bytes\)/);
    }
  });
});

describe('counts', () => {
  const sanitizeFailure = /invalid transaction: Transaction failed to sanitize accounts offsets correctly/;

  test('64 addresses land; 65 are refused', async () => {
    const at64 = await handWrittenV1({ extraAccounts: 62, transfers: 1 }); // payer + system + 62
    const signature = await send(at64, true);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.transaction.message.accountKeys.length, 64);
    assert.equal(landed?.meta?.err, null);
    assert.match(await rpcError(send(await handWrittenV1({ extraAccounts: 63, transfers: 1 }), true)), sanitizeFailure);
  });

  test('64 instructions land; 65 are refused', async () => {
    const signature = await send(await handWrittenV1({ extraAccounts: 0, transfers: 64 }), true);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.transaction.message.instructions.length, 64);
    assert.equal(landed?.meta?.err, null);
    assert.match(await rpcError(send(await handWrittenV1({ extraAccounts: 0, transfers: 65 }), true)), sanitizeFailure);
  });

  test('12 signatures land; 13 are refused', async () => {
    const balance = await getLamports(chain, payer.address);
    const signature = await send(await handWrittenV1({ extraAccounts: 0, transfers: 1, extraSigners: 11 }), true);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.transaction.signatures.length, 12);
    assert.equal(landed?.meta?.fee, 60_000n);
    assert.equal(balance - (await getLamports(chain, payer.address)), 60_000n);
    assert.match(await rpcError(send(await handWrittenV1({ extraAccounts: 0, transfers: 1, extraSigners: 12 }), true)), sanitizeFailure);
  });
});

describe('fees and limits', () => {
  test('the priority fee is the config\'s total in lamports, recorded and debited', async () => {
    const { bytes } = await build(1, [], { ...LIMITS, priorityFeeLamports: 7_777n });
    const balance = await getLamports(chain, payer.address);
    const signature = await send(bytes);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.meta?.fee, 12_777n);
    assert.equal(balance - (await getLamports(chain, payer.address)), 12_777n);
    const messageBase64 = base64.decode(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(
      setTransactionMessageConfig({ ...LIMITS, priorityFeeLamports: 7_777n }, pipe(
        createTransactionMessage({ version: 1 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: landed!.transaction.message.recentBlockhash, lastValidBlockHeight: 0n }, m),
      )),
    )));
    const { value: quoted } = await chain.rpc.getFeeForMessage(messageBase64 as never).send();
    assert.equal(quoted, 12_777n);
  });

  test('sent without limits (skipping preflight), a v1 transaction fails and is charged its fee, as agave does', async () => {
    const { bytes } = await build(1, [], { priorityFeeLamports: 1_000n });
    const balance = await getLamports(chain, payer.address);
    const signature = await send(bytes, true);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.equal(landed?.meta?.err, 'MaxLoadedAccountsDataSizeExceeded');
    assert.equal(landed?.meta?.fee, 6_000n);
    assert.equal(balance - (await getLamports(chain, payer.address)), 6_000n);
  });

  test('with preflight, the same transaction is refused and costs nothing', async () => {
    const { bytes } = await build(1, []);
    const balance = await getLamports(chain, payer.address);
    assert.match(await rpcError(send(bytes)), /Transaction simulation failed/);
    assert.equal(await getLamports(chain, payer.address), balance);
  });
});

describe('reading v1 back', () => {
  let signature: Awaited<ReturnType<typeof send>>;
  before(async () => {
    signature = await send((await build(1, [], { ...LIMITS, priorityFeeLamports: 5n })).bytes);
  });

  test('getTransaction needs maxSupportedTransactionVersion 1, and shows the version and the config', async () => {
    const tooOld = await rpcError(chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send());
    assert.match(tooOld, /Transaction version \(1\) is not supported by the requesting client.*"maxSupportedTransactionVersion": 1/);
    const parsed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'jsonParsed' }).send();
    assert.equal(parsed?.version, 1);
    const message = parsed?.transaction.message as unknown as { config: unknown; accountKeys: { pubkey: string; signer: boolean }[] };
    assert.deepEqual(message.config, { priorityFee: 5n, computeUnitLimit: 1_400_000n, loadedAccountsDataSizeLimit: 262_144n, heapSize: null });
    assert.deepEqual(message.accountKeys[0], { pubkey: payer.address, writable: true, signer: true, source: 'transaction' });
    const base64Form = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'base64' }).send();
    assert.equal(base64Form?.transaction[0].length !== undefined && Buffer.from(base64Form.transaction[0], 'base64')[0], 0x81);
  });

  test('getBlock shows v1 transactions with maxSupportedTransactionVersion 1 and refuses a client that declares 0', async () => {
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    const slot = landed!.slot;
    const block = await chain.rpc.getBlock(slot, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', rewards: false }).send();
    const ours = block?.transactions.find((t) => t.transaction.signatures[0] === signature);
    assert.equal(ours?.version, 1);
    assert.match(await rpcError(chain.rpc.getBlock(slot, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', rewards: false }).send()), /Transaction version \(1\) is not supported/);
    assert.match(await rpcError(chain.rpc.getBlock(slot, { maxSupportedTransactionVersion: 2 as never, commitment: 'confirmed', rewards: false }).send()), /maxSupportedTransactionVersion/);
  });
});

describe('the feature gate', () => {
  test('is active, stored as agave\'s feature program stores it', async () => {
    const { value } = await chain.rpc.getAccountInfo(V1_TRANSACTIONS_FEATURE, { encoding: 'base64' }).send();
    assert.equal(value?.owner, FEATURE_PROGRAM);
    assert.deepEqual([...Buffer.from(value!.data[0], 'base64')], [1, 0, 0, 0, 0, 0, 0, 0, 0]); // Some(activated at slot 0)
    const { value: rent } = { value: await chain.rpc.getMinimumBalanceForRentExemption(9n).send() };
    assert.equal(value?.lamports, rent);
  });

  test('turned off, the chain has no gate account, refuses v1 and still takes legacy and v0', async () => {
    const off = await startTestChain({ slotIntervalMs: 0, v1Transactions: false });
    try {
      const { value } = await off.rpc.getAccountInfo(V1_TRANSACTIONS_FEATURE).send();
      assert.equal(value, null);
      const { signer } = await createFundedSigner(off);
      const { value: blockhash } = await off.rpc.getLatestBlockhash().send();
      const sign = (version: 'legacy' | 0 | 1) => {
        const base = pipe(
          createTransactionMessage({ version }),
          (m) => setTransactionMessageFeePayerSigner(signer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
          (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: signer, destination: signer.address, amount: version === 1 ? 1n : version === 0 ? 2n : 3n })], m),
        );
        return signTransactionMessageWithSigners(version === 1 ? setTransactionMessageConfig(LIMITS, base as typeof base & { version: 1 }) : base);
      };
      const v1 = await sign(1);
      const refused = await rpcError(off.rpc.sendTransaction(getBase64EncodedWireTransaction(v1), { encoding: 'base64' }).send());
      assert.match(refused, /failed to deserialize solana_transaction::versioned::VersionedTransaction: unsupported transaction format/);
      for (const version of ['legacy', 0] as const) {
        const tx = await sign(version);
        assert.equal(await off.rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send(), getSignatureFromTransaction(tx));
      }
    } finally {
      await off.close();
    }
  });
});

describe('loaded account data', () => {
  test('simulateTransaction reports it as agave counts it (programdata included), and a limit of that size lands', async () => {
    const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    const probe = { programAddress: TOKEN_PROGRAM, accounts: [], data: new Uint8Array([21]) }; // GetAccountDataSize without a mint fails, after loading
    const { bytes } = await build(1, [probe], { computeUnitLimit: 1_400_000, loadedAccountsDataSizeLimit: 64 * 1024 * 1024 });
    const { value } = await chain.rpc.simulateTransaction(base64.decode(bytes) as Base64EncodedWireTransaction, { encoding: 'base64', replaceRecentBlockhash: true }).send();
    const reported = value.loadedAccountsDataSize!;
    const program = await chain.rpc.getAccountInfo(TOKEN_PROGRAM, { encoding: 'base64' }).send();
    const programData = address(getAddressDecoder().decode(Buffer.from(program.value!.data[0], 'base64').subarray(4, 36)));
    const programDataAccount = await chain.rpc.getAccountInfo(programData, { encoding: 'base64' }).send();
    const dataOf = (account: typeof programDataAccount) => BigInt(Buffer.from(account.value!.data[0], 'base64').length);
    // payer (0 bytes), System (its data), Token (36 bytes) and Token's programdata, each + 64.
    const system = await chain.rpc.getAccountInfo(SYSTEM_PROGRAM, { encoding: 'base64' }).send();
    assert.equal(BigInt(reported), 4n * 64n + dataOf(system) + dataOf(program) + dataOf(programDataAccount));
    // Sized from the report, the same transaction gets past loading: it fails in Token's instruction, not for its data.
    const sized = await build(1, [probe], { computeUnitLimit: 10_000, loadedAccountsDataSizeLimit: Math.ceil(reported / 32_768) * 32_768 });
    const signature = await send(sized.bytes, true);
    const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'json' }).send();
    assert.ok(landed?.meta?.err && typeof landed.meta.err === 'object' && 'InstructionError' in landed.meta.err, JSON.stringify(landed?.meta?.err, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
  });
});
