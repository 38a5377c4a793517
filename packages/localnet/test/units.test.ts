/** Pure pieces of the local chain, and robustness of the path from RPC bytes into LiteSVM. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  address,
  appendTransactionMessageInstructions,
  AccountRole,
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
import { parseWireTransaction, WireError } from '../src/wire.ts';

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
