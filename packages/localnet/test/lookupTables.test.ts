/**
 * SlotHashes and SlotHistory as agave keeps them, and so address lookup tables: created at a recent
 * slot, extended, frozen, used by a v0 transaction and read back. The lookup table program's
 * instructions are built here by hand (bincode: a u32 discriminant, then the fields), as the
 * published client requires an older @solana/kit than this workspace's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { rpcResult, waitForStatus } from '@cinder/testkit';
import { startLocalnet, type Localnet } from '../src/index.ts';

const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
const SLOT_HASHES = 'SysvarS1otHashes111111111111111111111111111';
const SLOT_HISTORY = 'SysvarS1otHistory11111111111111111111111111';
const LOOKUP_TABLE_META_SIZE = 56;

const u32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
const u64 = (n: bigint) => new Uint8Array(new BigUint64Array([n]).buffer);
const concat = (...parts: ArrayLike<number>[]) => Uint8Array.from(parts.flatMap((p) => Array.from(p)));

let localnet: Localnet;
let url: string;
let payer: KeyPairSigner;

const warp = (slots: number) => rpcResult(url, 'localnet_warpSlots', [slots]);
const accountData = async (at: string) => {
  const { value } = await rpcResult<{ value: { data: [string, string] } | null }>(url, 'getAccountInfo', [at, { encoding: 'base64', commitment: 'processed' }]);
  assert.ok(value, `${at} exists`);
  return new Uint8Array(Buffer.from(value.data[0], 'base64'));
};

/** Sends and warps until it is confirmed; returns its status. */
async function run(instructions: Instruction[], lookupTables: Record<Address, Address[]> = {}) {
  const { value: blockhash } = await createSolanaRpc(url).getLatestBlockhash().send();
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
      (m) => compressTransactionMessageUsingAddressLookupTables(m, lookupTables),
    ),
  );
  const signature = await rpcResult<string>(url, 'sendTransaction', [getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }]);
  await waitForStatus(url, signature);
  await warp(3);
  const { value } = await rpcResult<{ value: [{ err: unknown; confirmationStatus: string } | null] }>(url, 'getSignatureStatuses', [[signature]]);
  assert.equal(value[0]?.confirmationStatus, 'confirmed');
  return { signature, err: value[0].err };
}

before(async () => {
  localnet = await startLocalnet({ port: 0, testMode: true, timing: 'validator', slotIntervalMs: 0 });
  url = localnet.rpcUrl;
  payer = await generateKeyPairSigner();
  await waitForStatus(url, await rpcResult<string>(url, 'requestAirdrop', [payer.address, 10_000_000_000]));
  await warp(3);
});
after(() => localnet.close());

describe('slot sysvars', () => {
  test('SlotHashes holds the 512 newest slots before the current one, newest first, with their blocks\' hashes; SlotHistory marks every slot', async () => {
    // Warps of 100 slots each produce every block (a long single warp skips all but 151).
    for (let i = 0; i < 6; i++) await warp(100);
    const slot = await rpcResult<number>(url, 'getSlot', [{ commitment: 'processed' }]);
    const data = await accountData(SLOT_HASHES);
    const view = new DataView(data.buffer);
    const count = Number(view.getBigUint64(0, true));
    assert.equal(count, 512);
    const entries = Array.from({ length: count }, (_, i) => ({
      slot: Number(view.getBigUint64(8 + i * 40, true)),
      hash: data.subarray(16 + i * 40, 48 + i * 40),
    }));
    assert.deepEqual(entries.map((e) => e.slot), Array.from({ length: 512 }, (_, i) => slot - 1 - i));
    for (const index of [2, 100, 511]) {
      const block = await rpcResult<{ blockhash: string }>(url, 'getBlock', [entries[index]!.slot, { commitment: 'confirmed', transactionDetails: 'none', rewards: false }]);
      assert.deepEqual(entries[index]!.hash, getAddressEncoder().encode(address(block.blockhash)));
    }

    const history = await accountData(SLOT_HISTORY);
    const historyView = new DataView(history.buffer);
    // bincode of BitVec<u64> (Option tag, word count, words, bit length), then next_slot.
    assert.equal(history[0], 1);
    const words = Number(historyView.getBigUint64(1, true));
    assert.equal(Number(historyView.getBigUint64(history.length - 8, true)), slot + 1);
    const isSet = (s: number) => {
      const bit = s % (words * 64);
      return (historyView.getBigUint64(9 + Math.floor(bit / 64) * 8, true) >> BigInt(bit % 64)) & 1n;
    };
    for (const s of [0, 1, slot - 300, slot]) assert.equal(isSet(s), 1n, `slot ${s}`);
    assert.equal(isSet(slot + 1), 0n);
  });
});

describe('address lookup tables', () => {
  test('created at a recent slot, extended, frozen, used by a v0 transaction and read back', async () => {
    const recentSlot = BigInt(await rpcResult<number>(url, 'getSlot', [{ commitment: 'finalized' }]));
    const [table, bump] = await getProgramDerivedAddress({ programAddress: LOOKUP_TABLE_PROGRAM, seeds: [getAddressEncoder().encode(payer.address), u64(recentSlot)] });
    const tableAccounts = (withSystem: boolean) => [
      { address: table, role: AccountRole.WRITABLE },
      { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
      ...(withSystem ? [{ address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer }, { address: SYSTEM_PROGRAM, role: AccountRole.READONLY }] : []),
    ];
    const create = { programAddress: LOOKUP_TABLE_PROGRAM, accounts: tableAccounts(true), data: concat(u32(0), u64(recentSlot), new Uint8Array([bump])) };
    assert.equal((await run([create])).err, null);

    const recipients = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]).then((s) => s.map((k) => k.address));
    const extend = { programAddress: LOOKUP_TABLE_PROGRAM, accounts: tableAccounts(true), data: concat(u32(2), u64(2n), ...recipients.map((r) => getAddressEncoder().encode(r))) };
    assert.equal((await run([extend])).err, null);
    const freeze = { programAddress: LOOKUP_TABLE_PROGRAM, accounts: tableAccounts(false), data: u32(1) };
    assert.equal((await run([freeze])).err, null);

    // Read back: active (deactivation slot u64::MAX), no authority (frozen), the two addresses.
    const data = await accountData(table);
    const view = new DataView(data.buffer);
    assert.equal(view.getUint32(0, true), 1);
    assert.equal(view.getBigUint64(4, true), 0xffff_ffff_ffff_ffffn);
    assert.equal(data[21], 0);
    const stored = Array.from({ length: (data.length - LOOKUP_TABLE_META_SIZE) / 32 }, (_, i) =>
      getAddressDecoder().decode(data.subarray(LOOKUP_TABLE_META_SIZE + i * 32, LOOKUP_TABLE_META_SIZE + 32 + i * 32)),
    );
    assert.deepEqual(stored, recipients);

    // A v0 transaction that loads both recipients from the table.
    const transfers = recipients.map((destination) => getTransferSolInstruction({ source: payer, destination, amount: 1_000_000_000n }));
    const { signature, err } = await run(transfers, { [table]: recipients });
    assert.equal(err, null);
    const transaction = await rpcResult<{
      transaction: { message: { addressTableLookups: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[] } };
      meta: { loadedAddresses: { writable: string[] } };
    }>(url, 'getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }]);
    // The compiler picks the order of the indexes (kit sorts accounts by address); the loaded
    // addresses are the table's entries at those indexes, in that order.
    const [lookup] = transaction.transaction.message.addressTableLookups;
    assert.equal(transaction.transaction.message.addressTableLookups.length, 1);
    assert.deepEqual([lookup!.accountKey, [...lookup!.writableIndexes].sort(), lookup!.readonlyIndexes], [table, [0, 1], []]);
    assert.deepEqual(transaction.meta.loadedAddresses.writable, lookup!.writableIndexes.map((i) => recipients[i]));
    for (const recipient of recipients) assert.equal((await rpcResult<{ value: number }>(url, 'getBalance', [recipient])).value, 1_000_000_000);
  });

  test('a slot that is not recent is refused as the program refuses it', async () => {
    const slot = await rpcResult<number>(url, 'getSlot', [{ commitment: 'processed' }]);
    const future = BigInt(slot + 1000);
    const [table, bump] = await getProgramDerivedAddress({ programAddress: LOOKUP_TABLE_PROGRAM, seeds: [getAddressEncoder().encode(payer.address), u64(future)] });
    const create = {
      programAddress: LOOKUP_TABLE_PROGRAM,
      accounts: [
        { address: table, role: AccountRole.WRITABLE },
        { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
        { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
        { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
      ],
      data: concat(u32(0), u64(future), new Uint8Array([bump])),
    };
    const instructions: Instruction[] = [create];
    const { value: blockhash } = await createSolanaRpc(url).getLatestBlockhash().send();
    const transaction = await signTransactionMessageWithSigners(
      pipe(createTransactionMessage({ version: 0 }), (m) => setTransactionMessageFeePayerSigner(payer, m), (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m), (m) => appendTransactionMessageInstructions(instructions, m)),
    );
    const simulation = await rpcResult<{ value: { err: unknown; logs: string[] } }>(url, 'simulateTransaction', [getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }]);
    assert.deepEqual(simulation.value.err, { InstructionError: [0, 'InvalidInstructionData'] });
    assert.ok(simulation.value.logs.some((l) => l.includes(`${future} is not a recent slot`)), simulation.value.logs.join('\n'));
  });
});
