/**
 * A test validator's blocks hold its own votes: every block after genesis carries the vote on the
 * block before it, a signed TowerSync of the vote program, paid by the node identity. Clients that
 * look for "a block with a transaction and a parent" on an idle chain find one. Slots move only
 * with warps here (no clock), so every assertion is about slots, never about time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner, getBase58Encoder, getCompiledTransactionMessageDecoder, getPublicKeyFromAddress, getTransactionDecoder, signatureBytes, verifySignature, type Address } from '@solana/kit';
import { rpcCall, rpcResult } from '@cinder/testkit';
import { startLocalnet, type Localnet } from '../src/index.ts';

const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111';

interface Block {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  transactions: { transaction: [string, 'base64']; meta: { fee: number; err: unknown; preBalances: number[]; postBalances: number[]; computeUnitsConsumed: number } }[];
}

let localnet: Localnet;
let url: string;
const warp = (slots: number) => rpcResult(url, 'localnet_warpSlots', [slots]);
const block = (slot: number) => rpcResult<Block>(url, 'getBlock', [slot, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);

before(async () => {
  // 32-slot epochs (solana-test-validator's --slots-per-epoch 32), so that stake can be a whole epoch old.
  localnet = await startLocalnet({ port: 0, testMode: true, timing: 'validator', slotIntervalMs: 0, slotsPerEpoch: 32 });
  url = localnet.rpcUrl;
});
after(() => localnet.close());

describe('validator votes', () => {
  test('every block after genesis holds one vote on its parent, signed and paid by the identity', async () => {
    await warp(4);
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    const { current } = await rpcResult<{ current: { votePubkey: string }[] }>(url, 'getVoteAccounts');
    const votePubkey = current[0]!.votePubkey;
    const identityKey = await getPublicKeyFromAddress(identity as Address);
    const confirmed = await rpcResult<number>(url, 'getSlot', [{ commitment: 'confirmed' }]);
    assert.ok(confirmed >= 4);
    const genesis = await block(0);
    assert.equal(genesis.transactions.length, 0);
    for (let slot = 1; slot <= confirmed; slot++) {
      const current = await block(slot);
      const parent = await block(current.parentSlot);
      assert.equal(current.parentSlot, slot - 1);
      assert.equal(current.transactions.length, 1, `slot ${slot}`);
      const { transaction, meta } = current.transactions[0]!;
      const wire = getTransactionDecoder().decode(Buffer.from(transaction[0], 'base64'));
      const decoded = getCompiledTransactionMessageDecoder().decode(wire.messageBytes);
      assert.equal(decoded.version, 'legacy');
      const message = decoded as Extract<typeof decoded, { version: 'legacy' }>;
      assert.deepEqual(message.staticAccounts, [identity, votePubkey, VOTE_PROGRAM]);
      assert.deepEqual(message.header, { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 1 });
      // Voted in the parent's bank: its blockhash is the vote's lifetime.
      assert.equal(message.lifetimeToken, parent.blockhash);
      assert.ok(await verifySignature(identityKey, signatureBytes(wire.signatures[identity as Address]!), wire.messageBytes));
      const instruction = message.instructions[0]!;
      assert.deepEqual(instruction.accountIndices, [1, 0]);
      const data = new Uint8Array(instruction.data!);
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      assert.equal(view.getUint32(0, true), 14, 'TowerSync');
      assert.equal(view.getBigUint64(4, true), 0xffff_ffff_ffff_ffffn, 'no root yet');
      // The lockouts: every slot voted so far, as offsets from 0, the newest voted slot last.
      const lockouts = data[12]!;
      assert.equal(lockouts, slot);
      let voted = 0;
      for (let i = 0; i < lockouts; i++) {
        voted += data[13 + 2 * i]!;
        assert.equal(data[14 + 2 * i], lockouts - i, 'confirmation count');
      }
      assert.equal(voted, slot - 1);
      const hashAt = 13 + 2 * lockouts;
      assert.deepEqual(data.subarray(hashAt, hashAt + 32), new Uint8Array(getBase58Encoder().encode(parent.blockhash)));
      assert.equal(meta.err, null);
      assert.equal(meta.fee, 5000);
      assert.equal(meta.preBalances[0]! - meta.postBalances[0]!, 5000);
    }
  });

  test('the identity pays 5000 lamports a block; votes count as transactions, not as non-vote ones', async () => {
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    const balance = async () => (await rpcResult<{ value: number }>(url, 'getBalance', [identity, { commitment: 'processed' }])).value;
    const count = () => rpcResult<number>(url, 'getTransactionCount', [{ commitment: 'processed' }]);
    const [before, countBefore] = [await balance(), await count()];
    assert.ok(before > 0);
    await warp(7);
    assert.equal(before - (await balance()), 7 * 5000);
    assert.equal((await count()) - countBefore, 7);
    const samples = await rpcResult<{ numTransactions: number; numNonVoteTransactions: number }[]>(url, 'getRecentPerformanceSamples', [1]);
    assert.ok(samples[0]!.numTransactions > 0);
    assert.equal(samples[0]!.numNonVoteTransactions, 0);
  });

  test('with instant timing (test mode), blocks hold only the transactions sent', async () => {
    const instant = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 0 });
    try {
      await rpcResult(instant.rpcUrl, 'localnet_warpSlots', [3]);
      const body = await rpcResult<{ signatures: string[] }>(instant.rpcUrl, 'getBlock', [2, { transactionDetails: 'signatures', commitment: 'confirmed' }]);
      assert.deepEqual(body.signatures, []);
    } finally {
      await instant.close();
    }
  });
});

describe('the vote account and stake activation', () => {
  test('the vote account is a real vote-program account of the identity (stake can be delegated to it)', async () => {
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    const { current } = await rpcResult<{ current: { votePubkey: string }[] }>(url, 'getVoteAccounts');
    const info = await rpcResult<{ value: { owner: string; lamports: number; data: [string, string] } }>(url, 'getAccountInfo', [current[0]!.votePubkey, { encoding: 'base64' }]);
    assert.equal(info.value.owner, VOTE_PROGRAM);
    const data = Buffer.from(info.value.data[0], 'base64');
    assert.equal(data.length, 3762);
    assert.equal(info.value.lamports, await rpcResult<number>(url, 'getMinimumBalanceForRentExemption', [3762]));
    // Initialized by the vote program: a VoteStateVersions tag, then the node pubkey.
    assert.notEqual(data.readUInt32LE(0), 0);
    assert.deepEqual(new Uint8Array(data.subarray(4, 36)), new Uint8Array(getBase58Encoder().encode(identity)));
  });

  test('getStakeActivation (web3.js v1): activating in its activation epoch, active after; inactive when only initialized; errors as agave 1.18', async () => {
    await warp(80);
    // getStakeActivation reads at its default commitment, finalized, as getEpochInfo does.
    const { epoch, absoluteSlot, slotIndex, slotsInEpoch } = await rpcResult<{ epoch: number; absoluteSlot: number; slotIndex: number; slotsInEpoch: number }>(url, 'getEpochInfo');
    assert.ok(epoch > 0);
    // --slots-per-epoch 32: every epoch is 32 slots from slot 0, with no warm-up, and the Clock agrees.
    assert.deepEqual([slotsInEpoch, absoluteSlot - slotIndex], [32, epoch * 32]);
    assert.deepEqual(await rpcResult(url, 'getEpochSchedule'), { slotsPerEpoch: 32, leaderScheduleSlotOffset: 32, warmup: false, firstNormalEpoch: 0, firstNormalSlot: 0 });
    const clock = await rpcResult<{ value: { data: [string, string] } }>(url, 'getAccountInfo', ['SysvarC1ock11111111111111111111111111111111', { encoding: 'base64', commitment: 'processed' }]);
    const clockData = Buffer.from(clock.value.data[0], 'base64');
    const tip = await rpcResult<{ epoch: number; absoluteSlot: number }>(url, 'getEpochInfo', [{ commitment: 'processed' }]);
    // Clock: slot, epoch_start_timestamp, epoch, leader_schedule_epoch, unix_timestamp.
    assert.deepEqual([Number(clockData.readBigUInt64LE(0)), Number(clockData.readBigUInt64LE(16)), Number(clockData.readBigUInt64LE(24))], [tip.absoluteSlot, Math.floor(tip.absoluteSlot / 32), tip.epoch + 1]);
    assert.equal(tip.epoch, Math.floor(tip.absoluteSlot / 32));
    const reserve = 2_282_880n;
    const stakeAccount = (tag: number, activationEpoch: bigint, deactivationEpoch: bigint) => {
      const data = Buffer.alloc(200);
      data.writeUInt32LE(tag, 0);
      data.writeBigUInt64LE(reserve, 4);
      data.writeBigUInt64LE(1_000_000_000n, 156);
      data.writeBigUInt64LE(activationEpoch, 164);
      data.writeBigUInt64LE(deactivationEpoch, 172);
      return data.toString('base64');
    };
    const activation = async (data: string) => {
      const target = (await generateKeyPairSigner()).address;
      await rpcResult(url, 'localnet_setAccount', [target, { lamports: 3_000_000_000, data, owner: 'Stake11111111111111111111111111111111111111' }]);
      return rpcResult<{ state: string; active: number; inactive: number }>(url, 'getStakeActivation', [target]);
    };
    const never = 0xffff_ffff_ffff_ffffn;
    assert.deepEqual(await activation(stakeAccount(2, BigInt(epoch), never)), { state: 'activating', active: 0, inactive: 3_000_000_000 - 2_282_880 });
    assert.deepEqual(await activation(stakeAccount(2, BigInt(epoch - 1), never)), { state: 'active', active: 1_000_000_000, inactive: 2_000_000_000 - 2_282_880 });
    assert.deepEqual(await activation(stakeAccount(2, BigInt(epoch), BigInt(epoch))), { state: 'inactive', active: 0, inactive: 3_000_000_000 - 2_282_880 });
    assert.deepEqual(await activation(stakeAccount(1, 0n, 0n)), { state: 'inactive', active: 0, inactive: 3_000_000_000 - 2_282_880 });
    const missing = (await generateKeyPairSigner()).address;
    assert.equal((await rpcCall(url, 'getStakeActivation', [missing])).error?.message, 'Invalid param: account not found');
    const { identity } = await rpcResult<{ identity: string }>(url, 'getIdentity');
    assert.equal((await rpcCall(url, 'getStakeActivation', [identity])).error?.message, 'Invalid param: not a stake account');
    assert.equal((await rpcCall(url, 'getStakeActivation', [missing, { epoch: epoch + 4000 }])).error?.message, `Invalid param: epoch ${epoch + 4000}. Only the current epoch (${epoch}) is supported`);
  });
});
