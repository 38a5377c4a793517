/** Pure pieces of the local chain, and robustness of the path from RPC bytes into LiteSVM. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  address,
  appendTransactionMessageInstructions,
  AccountRole,
  type Blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageConfig,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { Chain } from '../src/chain.ts';
import { epochPosition } from '../src/epochs.ts';
import { stringifyJson } from '../src/json.ts';
import { uiAmountString } from '../src/jsonParsed.ts';
import { simulateTransaction, submitTransaction } from '../src/transactions.ts';
import { transactionErrorMessage } from '../src/txErrors.ts';
import { parseWireTransaction, WireError, withBlockhash } from '../src/wire.ts';

test('stringifyJson writes bigint as bare integers and otherwise matches JSON.stringify', () => {
  assert.equal(stringifyJson({ a: 18446744073709551615n, b: [1n, undefined, 'x'], c: undefined, d: null, e: 0.5 }), '{"a":18446744073709551615,"b":[1,null,"x"],"d":null,"e":0.5}');
  fc.assert(fc.property(fc.jsonValue(), (value) => stringifyJson(value) === JSON.stringify(value)));
});

test('uiAmountString trims like the validator', () => {
  assert.deepEqual(
    [[0n, 6], [1_500_000n, 6], [1_000_000n, 6], [7n, 6], [123n, 0], [18446744073709551615n, 9]].map(([a, d]) => uiAmountString(a as bigint, d as number)),
    ['0', '1.5', '1', '0.000007', '123', '18446744073.709551615'],
  );
});

test('epochs follow the warm-up schedule', () => {
  const schedule = { slotsPerEpoch: 432_000n, warmup: true, firstNormalEpoch: 14n, firstNormalSlot: 524_256n };
  assert.deepEqual(epochPosition(schedule, 31n), { epoch: 0n, slotIndex: 31n, slotsInEpoch: 32n });
  assert.deepEqual(epochPosition(schedule, 32n), { epoch: 1n, slotIndex: 0n, slotsInEpoch: 64n });
  assert.deepEqual(epochPosition(schedule, 524_255n), { epoch: 13n, slotIndex: 262_143n, slotsInEpoch: 262_144n });
  assert.deepEqual(epochPosition(schedule, 956_257n), { epoch: 15n, slotIndex: 1n, slotsInEpoch: 432_000n });
  assert.deepEqual(epochPosition({ ...schedule, warmup: false }, 432_001n), { epoch: 1n, slotIndex: 1n, slotsInEpoch: 432_000n });
});

test('error messages match the validator wording', () => {
  assert.equal(transactionErrorMessage({ InstructionError: [1, { Custom: 17 }] }), 'Error processing Instruction 1: custom program error: 0x11');
  assert.equal(transactionErrorMessage({ InstructionError: [0, 'InvalidAccountData'] }), 'Error processing Instruction 0: invalid account data for instruction');
  assert.equal(transactionErrorMessage('BlockhashNotFound'), 'Blockhash not found');
});

/**
 * kit decodes a v0 message whose lookup count is missing at its end as one without lookups; LiteSVM's
 * bincode needs that byte. A non-minimal length elsewhere (12 written as 0x8c 0x00) adds the byte back,
 * so the pair has the size of a canonical message: refused all the same, as is each alone.
 */
test('a v0 message missing its lookup count is refused, even when a long length makes up its size', async () => {
  const payer = await generateKeyPairSigner();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash, lastValidBlockHeight: 150n }, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: address('11111111111111111111111111111112'), amount: 1n })], m),
  );
  const bytes = new Uint8Array(getTransactionEncoder().encode(await signTransactionMessageWithSigners(message)));
  assert.equal(parseWireTransaction(bytes).message.version, 0);
  // The message ends with the transfer's data (its length 12, then 12 bytes) and the lookup count 0.
  const lengthAt = bytes.length - 1 - 12 - 1;
  assert.deepEqual([bytes[lengthAt], bytes.at(-1)], [12, 0]);
  const withoutLookupCount = bytes.slice(0, -1);
  const longLength = Uint8Array.from([...bytes.slice(0, lengthAt), 0x8c, 0x00, ...bytes.slice(lengthAt + 1)]);
  const both = longLength.slice(0, -1);
  assert.equal(both.length, bytes.length);
  for (const [name, malformed] of Object.entries({ withoutLookupCount, longLength, both })) {
    assert.throws(() => parseWireTransaction(malformed), (err: unknown) => err instanceof WireError && /non-canonical/.test(err.message), name);
  }
});

test('withBlockhash gives what decoding the transaction with the other blockhash gives, in every version', async () => {
  const payer = await generateKeyPairSigner();
  const replacement = '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi' as Blockhash;
  for (const version of ['legacy', 0, 1] as const) {
    const base = pipe(
      createTransactionMessage({ version }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash, lastValidBlockHeight: 150n }, m),
      (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: address('11111111111111111111111111111112'), amount: 1n })], m),
    );
    const message = version === 1 ? setTransactionMessageConfig({ computeUnitLimit: 200_000 }, base as typeof base & { version: 1 }) : base;
    const wire = parseWireTransaction(new Uint8Array(getTransactionEncoder().encode(await signTransactionMessageWithSigners(message))));
    const replaced = withBlockhash(wire, replacement);
    const decoded = parseWireTransaction(new Uint8Array(getTransactionEncoder().encode(await signTransactionMessageWithSigners(setTransactionMessageLifetimeUsingBlockhash({ blockhash: replacement, lastValidBlockHeight: 150n }, message)))));
    assert.equal(replaced.message.lifetimeToken, replacement, String(version));
    // The signatures stay those of the original; everything else is what the other blockhash gives.
    assert.deepEqual(replaced.message, decoded.message, String(version));
    assert.deepEqual(new Uint8Array(replaced.transaction.messageBytes), new Uint8Array(decoded.transaction.messageBytes), String(version));
    const expectedBytes = new Uint8Array(wire.bytes);
    expectedBytes.set(decoded.transaction.messageBytes, wire.messageOffset);
    assert.deepEqual(replaced.bytes, expectedBytes, String(version));
    assert.deepEqual(parseWireTransaction(replaced.bytes).message, replaced.message, String(version));
    assert.equal(replaced.signature, wire.signature);
  }
});

/**
 * LiteSVM's native code aborts the process on bytes it cannot deserialize, so every mutation of a
 * valid transaction must either be rejected as a WireError or run through LiteSVM without crashing.
 */
test('mutated transactions never reach LiteSVM in a form that crashes it', async () => {
  const silent = { info() {}, warn() {}, error() {} };
  const chain = new Chain(silent);
  const payer = await generateKeyPairSigner();
  const other = await generateKeyPairSigner();
  chain.svm.airdrop(payer.address, lamports(1_000_000_000_000n));
  const bases = await Promise.all((['legacy', 0, 1] as const).map(async (version) => {
    const base = pipe(
      createTransactionMessage({ version }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ ...chain.latestBlockhash(), lastValidBlockHeight: 150n }, m),
      (m) => appendTransactionMessageInstructions([
        getSetComputeUnitPriceInstruction({ microLamports: 5n }),
        getTransferSolInstruction({ source: payer, destination: other.address, amount: 1_000_000n }),
        { programAddress: address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'), accounts: [{ address: other.address, role: AccountRole.WRITABLE }], data: new Uint8Array([3, 1, 2]) },
      ], m),
    );
    // v1 (message first): its limits set, so that a mutation that decodes also executes.
    const message = version === 1 ? setTransactionMessageConfig({ computeUnitLimit: 200_000, loadedAccountsDataSizeLimit: 1_048_576 }, base as typeof base & { version: 1 }) : base;
    return new Uint8Array(getTransactionEncoder().encode(await signTransactionMessageWithSigners(message)));
  }));
  let reachedLiteSvm = 0;
  fc.assert(
    fc.property(
      fc.record({
        base: fc.constantFrom(...bases),
        edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        cut: fc.option(fc.nat()),
        skipPreflight: fc.boolean(),
      }),
      ({ base, edits, cut, skipPreflight }) => {
        let bytes = new Uint8Array(base);
        // Mostly mutate the message (after the 1 + 64 signature bytes): headers, indexes, lengths.
        for (const [at, value] of edits) bytes[65 + (at % (bytes.length - 65))] = value;
        if (cut !== null) bytes = bytes.slice(0, cut % (bytes.length + 1));
        let wire;
        try {
          wire = parseWireTransaction(bytes);
        } catch (err) {
          if (err instanceof WireError) return;
          throw err;
        }
        reachedLiteSvm++;
        simulateTransaction(chain, wire, { sigVerify: false, replaceRecentBlockhash: true });
        simulateTransaction(chain, wire, { sigVerify: false, replaceRecentBlockhash: false });
        submitTransaction(chain, wire, { skipPreflight });
      },
    ),
    { numRuns: 400, seed: 42 },
  );
  assert.ok(reachedLiteSvm > 20, `only ${reachedLiteSvm} mutations were decodable`);
});
