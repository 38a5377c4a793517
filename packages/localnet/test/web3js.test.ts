/**
 * The local chain driven by @solana/web3.js v1 and @solana/spl-token exactly as a user's script
 * drives devnet: a Connection with its default blockhash caching, the spl-token action helpers,
 * the history and cluster methods, and subscriptions. web3.js checks every answer against its own
 * superstruct schemas, so a wrong shape fails these tests.
 *
 * Relied on: web3.js v1 asks for `finalized` blockhashes and reuses one for 30 s
 * (BLOCKHASH_CACHE_TIMEOUT_MS); a real cluster keeps a blockhash valid for 150 slots of ~400 ms,
 * so a cached one stays usable. The chain runs its realistic 400 ms clock here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  sendAndConfirmTransaction,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  type ParsedInstruction,
  type SignatureStatus,
  type VersionedAccountsModeBlockResponse,
} from '@solana/web3.js';
import {
  approve,
  burn,
  closeAccount,
  createAccount,
  createMint,
  getAccount,
  getMint,
  getOrCreateAssociatedTokenAccount,
  mintTo,
  transfer,
} from '@solana/spl-token';
import { startLocalnet, type Localnet } from '../src/index.ts';
import { rpcResult } from '@cinder/testkit';
import { closeConnections, openConnection } from './web3Client.ts';

const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

let localnet: Localnet;
let connection: Connection;
let payer: Keypair;

async function fund(keypair: Keypair, sol: number): Promise<void> {
  const signature = await connection.requestAirdrop(keypair.publicKey, sol * LAMPORTS_PER_SOL);
  const latest = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
}

async function statusesOf(signatures: string[]): Promise<(SignatureStatus | null)[]> {
  const statuses: (SignatureStatus | null)[] = [];
  for (let i = 0; i < signatures.length; i += 256) {
    statuses.push(...(await connection.getSignatureStatuses(signatures.slice(i, i + 256))).value);
  }
  return statuses;
}

before(async () => {
  localnet = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 400 });
  // As a user's script would: the default commitment (finalized for reads that take none), the
  // default blockhash cache, the chain's WebSocket.
  connection = openConnection(localnet);
  payer = Keypair.generate();
  await fund(payer, 100);
});
after(async () => {
  closeConnections();
  await localnet.close();
});

describe('web3.js v1 with its default blockhash cache', () => {
  test('300 quick transfers with web3.js\'s cached blockhash all land, many per slot', async () => {
    const recipient = Keypair.generate().publicKey;
    const slotBefore = await connection.getSlot('confirmed');
    const signatures: string[] = [];
    const sentAt: number[] = [];
    // Distinct amounts make distinct messages (web3.js would otherwise fetch a new blockhash).
    for (let i = 0; i < 300; i++) {
      sentAt.push(Date.now());
      const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_000_000 + i }));
      signatures.push(await connection.sendTransaction(tx, [payer]));
    }
    const statuses = await statusesOf(signatures);
    assert.deepEqual(statuses.map((s) => s?.err ?? (s ? 'ok' : 'missing')), signatures.map(() => 'ok'));
    const expected = Array.from({ length: 300 }, (_, i) => 1_000_000 + i).reduce((a, b) => a + b, 0);
    assert.equal(await connection.getBalance(recipient), expected);

    // A blockhash is not used up by the transactions that name it: every transaction web3.js sent
    // with its cached blockhash landed with it. Its cache lasts 30 s from the fetch made in the first
    // send, so the last transaction sent within 25 s of that still names the first blockhash (on an
    // idle machine all 300, on a loaded one fewer).
    const lastCached = sentAt.filter((at) => at - sentAt[0]! < 25_000).length - 1;
    const first = await connection.getTransaction(signatures[0]!, { maxSupportedTransactionVersion: 0 });
    const later = await connection.getTransaction(signatures[lastCached]!, { maxSupportedTransactionVersion: 0 });
    assert.equal(first?.transaction.message.recentBlockhash, later?.transaction.message.recentBlockhash, `one cached blockhash for the first ${lastCached + 1}`);
    const slots = new Set(statuses.map((s) => s!.slot));
    assert.ok(slots.size < signatures.length / 2, `${signatures.length} transactions landed in ${slots.size} slots`);
    assert.ok((await connection.getSlot('confirmed')) - slotBefore < signatures.length, 'slots follow time, not transactions');
  });

  test('a finalized blockhash is older than the confirmed one and still valid for its remaining slots', async () => {
    await rpcResult(localnet.rpcUrl, 'localnet_warpSlots', [40]);
    const confirmed = await connection.getLatestBlockhash('confirmed');
    const finalized = await connection.getLatestBlockhash('finalized');
    assert.notEqual(finalized.blockhash, confirmed.blockhash);
    const lag = confirmed.lastValidBlockHeight - finalized.lastValidBlockHeight;
    assert.ok(lag >= 31 && lag <= 33, `finalized lags confirmed by ${lag} slots`);
    assert.equal((await connection.isBlockhashValid(finalized.blockhash)).value, true);
    const finalizedSlot = await connection.getSlot('finalized');
    const tip = await connection.getSlot('confirmed');
    assert.ok(tip - finalizedSlot >= 32 && tip - finalizedSlot <= 33, `tip ${tip}, finalized ${finalizedSlot}`);
  });
});

describe('@solana/spl-token helpers', () => {
  test('createMint, getOrCreateAssociatedTokenAccount, mintTo, transfer, burn, closeAccount', async () => {
    const mint = await createMint(connection, payer, payer.publicKey, null, 6);
    const ata = await getOrCreateAssociatedTokenAccount(connection, payer, mint, payer.publicKey);
    await mintTo(connection, payer, mint, ata.address, payer, 5_000_000n);
    const other = Keypair.generate();
    const otherAta = await getOrCreateAssociatedTokenAccount(connection, payer, mint, other.publicKey);
    const transferSignature = await transfer(connection, payer, ata.address, otherAta.address, payer, 1_500_000n);
    const parsedTransfer = await connection.getParsedTransaction(transferSignature, { maxSupportedTransactionVersion: 0 });
    assert.deepEqual((parsedTransfer?.transaction.message.instructions[0] as ParsedInstruction | undefined)?.parsed, {
      type: 'transfer',
      info: { source: ata.address.toBase58(), destination: otherAta.address.toBase58(), amount: '1500000', authority: payer.publicKey.toBase58() },
    });
    assert.deepEqual(parsedTransfer?.meta?.postTokenBalances?.map((b) => [b.owner, b.uiTokenAmount.uiAmountString]).sort(), [
      [other.publicKey.toBase58(), '1.5'],
      [payer.publicKey.toBase58(), '3.5'],
    ].sort());
    await burn(connection, payer, ata.address, mint, payer, 3_500_000n);
    assert.equal((await getAccount(connection, ata.address)).amount, 0n);
    assert.equal((await getMint(connection, mint)).supply, 1_500_000n);
    const lamportsBefore = await connection.getBalance(payer.publicKey);
    await closeAccount(connection, payer, ata.address, payer.publicKey, payer);
    assert.equal(await connection.getAccountInfo(ata.address), null);
    assert.equal(await connection.getBalance(payer.publicKey), lamportsBefore + 2_039_280 - 5000);

    const balance = await connection.getTokenAccountBalance(otherAta.address);
    assert.deepEqual(balance.value, { amount: '1500000', decimals: 6, uiAmount: 1.5, uiAmountString: '1.5' });
    const largest = await connection.getTokenLargestAccounts(mint);
    assert.deepEqual(largest.value.map((a) => [a.address.toBase58(), a.amount]), [[otherAta.address.toBase58(), '1500000']]);
    const parsed = await connection.getParsedTokenAccountsByOwner(other.publicKey, { mint });
    assert.equal(parsed.value[0]?.account.data.parsed.info.tokenAmount.uiAmountString, '1.5');
  });
});

describe('token delegates', () => {
  test('approve, then getTokenAccountsByDelegate (raw: web3.js has no delegate method) lists the approved account only', async () => {
    const mint = await createMint(connection, payer, payer.publicKey, null, 3);
    const delegate = Keypair.generate().publicKey;
    const ata = await getOrCreateAssociatedTokenAccount(connection, payer, mint, payer.publicKey);
    const unapproved = await createAccount(connection, payer, mint, payer.publicKey, Keypair.generate());
    await mintTo(connection, payer, mint, ata.address, payer, 10_000n);
    await approve(connection, payer, ata.address, delegate, payer, 2_500n);
    const onChain = await getAccount(connection, ata.address);
    assert.equal(onChain.delegate?.toBase58(), delegate.toBase58());
    assert.equal(onChain.delegatedAmount, 2_500n);

    type Keyed = { pubkey: string; account: { owner: string; data: { program: string; parsed: { info: Record<string, unknown> } } } };
    const { value } = await rpcResult<{ context: { slot: number }; value: Keyed[] }>(localnet.rpcUrl, 'getTokenAccountsByDelegate', [
      delegate.toBase58(),
      { mint: mint.toBase58() },
      { encoding: 'jsonParsed', commitment: 'confirmed' },
    ]);
    assert.deepEqual(value.map((a) => a.pubkey), [ata.address.toBase58()]);
    assert.equal(value[0]?.account.data.program, 'spl-token');
    assert.deepEqual(value[0]?.account.data.parsed.info.delegatedAmount, { amount: '2500', decimals: 3, uiAmount: 2.5, uiAmountString: '2.5' });
    // The owner's view has both accounts; only the approved one is the delegate's.
    const owned = await connection.getParsedTokenAccountsByOwner(payer.publicKey, { mint });
    assert.deepEqual(owned.value.map((a) => a.pubkey.toBase58()).sort(), [ata.address.toBase58(), unapproved.toBase58()].sort());
    assert.equal(owned.value.find((a) => a.pubkey.equals(unapproved))?.account.data.parsed.info.delegate, undefined);
  });
});

describe('history and cluster methods in the shapes web3.js parses', () => {
  let signature: string;
  let slot: number;

  before(async () => {
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL }),
      new TransactionInstruction({ programId: MEMO_PROGRAM, keys: [], data: Buffer.from('hello cinder') }),
    );
    signature = await sendAndConfirmTransaction(connection, tx, [payer]);
    slot = (await connection.getSignatureStatus(signature)).value!.slot;
  });

  test('getSignaturesForAddress: newest first, memo, limit, before and until', async () => {
    const found = await connection.getSignaturesForAddress(payer.publicKey, { limit: 3 });
    assert.equal(found.length, 3);
    assert.equal(found[0]?.signature, signature);
    assert.equal(found[0]?.slot, slot);
    assert.equal(found[0]?.memo, '[12] hello cinder');
    assert.equal(found[0]?.err, null);
    assert.ok(found[0]!.slot >= found[1]!.slot && found[1]!.slot >= found[2]!.slot);
    const older = await connection.getSignaturesForAddress(payer.publicKey, { limit: 2, before: found[0]!.signature });
    assert.deepEqual(older.map((s) => s.signature), found.slice(1, 3).map((s) => s.signature));
    const newer = await connection.getSignaturesForAddress(payer.publicKey, { until: found[2]!.signature });
    assert.deepEqual(newer.map((s) => s.signature), found.slice(0, 2).map((s) => s.signature));
    // The deprecated form web3.js v1 still calls, served as agave 1.18 served it.
    assert.deepEqual(await connection.getConfirmedSignaturesForAddress2(payer.publicKey, { limit: 3 }), found);
    assert.deepEqual(await connection.getConfirmedSignaturesForAddress2(payer.publicKey, { until: found[2]!.signature }), newer);
  });

  test('getBlock, getParsedBlock, getBlockTime, getBlocks and getFirstAvailableBlock', async () => {
    const block = await connection.getBlock(slot, { maxSupportedTransactionVersion: 0 });
    assert.ok(block);
    assert.ok(block.transactions.some((t) => t.transaction.signatures[0] === signature));
    const parent = await connection.getBlock(block.parentSlot, { maxSupportedTransactionVersion: 0, transactionDetails: 'none' });
    assert.equal(block.previousBlockhash, parent?.blockhash);
    const parsedBlock = await connection.getParsedBlock(slot, { maxSupportedTransactionVersion: 0 });
    assert.ok(parsedBlock.transactions.some((t) => t.transaction.signatures[0] === signature));
    // web3.js's overloads pick the full-block type first; the parsed shape is the accounts-mode one.
    const accountsOnly = (await connection.getBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'accounts' })) as unknown as VersionedAccountsModeBlockResponse | null;
    const mine = accountsOnly?.transactions.find((t) => t.transaction.signatures[0] === signature);
    assert.equal(mine?.transaction.accountKeys[0]?.pubkey.toBase58(), payer.publicKey.toBase58());
    assert.equal(mine?.meta?.fee, 5000);
    // web3.js has no typed 'signatures' mode: asked over raw JSON-RPC.
    const signaturesOnly = await rpcResult<{ signatures: string[]; rewards?: unknown }>(localnet.rpcUrl, 'getBlock', [
      slot,
      { maxSupportedTransactionVersion: 0, transactionDetails: 'signatures', rewards: false, commitment: 'confirmed' },
    ]);
    assert.ok(signaturesOnly.signatures.includes(signature));
    // Every slot produces a block here, so block height and slot are the same number.
    const bare = await rpcResult<Record<string, unknown>>(localnet.rpcUrl, 'getBlock', [slot, { transactionDetails: 'none', rewards: false, commitment: 'confirmed' }]);
    assert.deepEqual(Object.keys(bare).sort(), ['blockHeight', 'blockTime', 'blockhash', 'parentSlot', 'previousBlockhash']);
    assert.equal(bare.blockHeight, slot);
    assert.equal(signaturesOnly.rewards, undefined);
    const time = await connection.getBlockTime(slot);
    assert.equal(time, block.blockTime);
    assert.ok(Math.abs(time! - Date.now() / 1000) < 120, 'block times are close to now');
    const blocks = await connection.getBlocks(slot - 5, slot);
    assert.deepEqual(blocks, [slot - 5, slot - 4, slot - 3, slot - 2, slot - 1, slot]);
    assert.equal(await connection.getFirstAvailableBlock(), 0);
    await assert.rejects(connection.getBlock(slot + 1_000_000), /Block not available for slot/);
  });

  test('getParsedTransaction parses System, Memo and account keys as the validator does', async () => {
    const parsed = await connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
    assert.ok(parsed);
    const [transferIx, memoIx] = parsed.transaction.message.instructions as ParsedInstruction[];
    assert.equal(transferIx?.program, 'system');
    assert.equal(transferIx?.parsed.type, 'transfer');
    assert.equal(transferIx?.parsed.info.lamports, LAMPORTS_PER_SOL);
    assert.equal(transferIx?.parsed.info.source, payer.publicKey.toBase58());
    assert.equal(memoIx?.program, 'spl-memo');
    assert.equal(memoIx?.parsed, 'hello cinder');
    const [feePayer] = parsed.transaction.message.accountKeys;
    assert.deepEqual({ ...feePayer, pubkey: feePayer?.pubkey.toBase58() }, { pubkey: payer.publicKey.toBase58(), signer: true, writable: true, source: 'transaction' });
  });

  test('cluster, epoch, supply, leader and stake methods', async () => {
    const schedule = await connection.getEpochSchedule();
    assert.equal(schedule.slotsPerEpoch, 432_000);
    // As a test validator's genesis: no warm-up, so a run stays in epoch 0 (web3.js's live tests rely on it).
    assert.equal(schedule.warmup, false);
    assert.equal(schedule.getEpoch(slot), (await connection.getEpochInfo()).epoch);
    assert.equal((await connection.getEpochInfo()).epoch, 0);
    const supply = await connection.getSupply();
    assert.ok(supply.value.total > 0);
    assert.equal(supply.value.circulating, supply.value.total);
    const { identity } = await rpcResult<{ identity: string }>(localnet.rpcUrl, 'getIdentity');
    assert.equal(await connection.getSlotLeader(), identity);
    const nodes = await connection.getClusterNodes();
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]?.rpc, new URL(localnet.rpcUrl).host);
    const schedule0 = await connection.getLeaderSchedule();
    assert.deepEqual(Object.keys(schedule0), [nodes[0]!.pubkey]);
    // One vote account, of this chain's node, as on a test validator (web3.js parses its shape).
    const votes = await connection.getVoteAccounts();
    assert.deepEqual(votes.current.map((v) => [v.nodePubkey, v.epochVoteAccount, v.commission]), [[nodes[0]!.pubkey, true, 0]]);
    assert.equal(votes.delinquent.length, 0);
    const production = await connection.getBlockProduction();
    assert.deepEqual(Object.keys(production.value.byIdentity), [nodes[0]!.pubkey]);
    assert.deepEqual(await connection.getInflationReward([payer.publicKey]), [null]);
    const samples = await connection.getRecentPerformanceSamples(5);
    assert.ok(samples.length >= 1);
    const counted = samples.reduce((sum, sample) => sum + sample.numTransactions, 0);
    assert.ok(counted >= 300, `the 300 transfers are counted: ${JSON.stringify(samples)}`);
    // The stake program's own answer (Stake instruction GetMinimumDelegation on this chain).
    const minimum = await connection.getStakeMinimumDelegation();
    assert.ok(minimum.value === 1 || minimum.value === LAMPORTS_PER_SOL, `stake minimum delegation ${minimum.value}`);
  });

  test('getLargestAccounts, getInflationGovernor and getInflationRate', async () => {
    const largest = await connection.getLargestAccounts();
    assert.equal(largest.value.length, 20);
    assert.ok(largest.value.every((a, i) => a.address instanceof PublicKey && (i === 0 || largest.value[i - 1]!.lamports >= a.lamports)));
    const mine = largest.value.find((a) => a.address.equals(payer.publicKey));
    assert.equal(mine?.lamports, await connection.getBalance(payer.publicKey));
    assert.deepEqual((await connection.getLargestAccounts({ filter: 'nonCirculating' })).value, []);
    const circulating = await connection.getLargestAccounts({ filter: 'circulating', commitment: 'finalized' });
    assert.deepEqual(circulating.value.map((a) => a.address.toBase58()), largest.value.map((a) => a.address.toBase58()));

    assert.deepEqual(await connection.getInflationGovernor(), { initial: 0.08, terminal: 0.015, taper: 0.15, foundation: 0.05, foundationTerm: 7 });
    // The rates of the finalized epoch (the clock runs: read the epoch before and after).
    const epochBefore = (await connection.getEpochInfo('finalized')).epoch;
    const rate = await connection.getInflationRate();
    const epochAfter = (await connection.getEpochInfo('finalized')).epoch;
    assert.ok(rate.epoch >= epochBefore && rate.epoch <= epochAfter, `epoch ${rate.epoch}, finalized ${epochBefore}–${epochAfter}`);
    const year = (await connection.getEpochSchedule()).getFirstSlotInEpoch(rate.epoch) / (365.242199 * 24 * 60 * 60 * 2.5);
    const total = 0.08 * Math.pow(0.85, year);
    assert.deepEqual(rate, { total, validator: total - total * 0.05, foundation: total * 0.05, epoch: rate.epoch });
  });
});
