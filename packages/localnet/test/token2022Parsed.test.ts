/**
 * Token-2022 mints with extensions, made with @solana/spl-token as a user's script would, read
 * back through web3.js's jsonParsed methods. The UI amounts of interest-bearing and scaled-UI
 * mints are checked against the Token-2022 program on this chain itself: its AmountToUiAmount
 * instruction (simulated through spl-token's `amountToUiAmount`) computes the same string from
 * the same Clock, so the RPC's view and the program's must agree.
 *
 * The chain runs without its slot clock here (slots move only with warps), so that the program and
 * the RPC read the same Clock timestamp.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, sendAndConfirmTransaction, SystemProgram, Transaction, type ParsedAccountData } from '@solana/web3.js';
import {
  amountToUiAmount,
  createAssociatedTokenAccountIdempotent,
  createInitializeMetadataPointerInstruction,
  createInitializeMintInstruction,
  createInitializePausableConfigInstruction,
  createInitializeScaledUiAmountConfigInstruction,
  createInitializeTransferFeeConfigInstruction,
  createInitializeTransferHookInstruction,
  createInterestBearingMint,
  ExtensionType,
  getMintLen,
  mintTo,
  TOKEN_2022_PROGRAM_ID,
  tokenMetadataInitializeWithRentTransfer,
  tokenMetadataUpdateFieldWithRentTransfer,
  updateMultiplier,
} from '@solana/spl-token';
import { startLocalnet, type Localnet } from '../src/index.ts';
import { rpcResult } from '@cinder/testkit';
import { closeConnections, openConnection } from './web3Client.ts';

let localnet: Localnet;
let connection: Connection;
let payer: Keypair;

/** A fresh Connection: web3.js caches a blockhash for 30 s of wall time, which a warp outdates. */
function reconnect(): void {
  connection = openConnection(localnet);
}

/**
 * The Token-2022 program's own AmountToUiAmount (simulated by spl-token). A repeated identical
 * simulation makes web3.js wait for a new blockhash, and this chain has no slot clock: one slot
 * is warped first so that there is one.
 */
async function programUiAmount(mint: PublicKey, amount: bigint): Promise<string> {
  await rpcResult(localnet.rpcUrl, 'localnet_warpSlots', [1]);
  const result = await amountToUiAmount(connection, payer, mint, amount, TOKEN_2022_PROGRAM_ID);
  assert.equal(typeof result, 'string', `AmountToUiAmount failed: ${JSON.stringify(result)}`);
  return result as string;
}

async function parsedInfo(address: PublicKey): Promise<{ extensions?: { extension: string; state?: unknown }[]; tokenAmount?: { uiAmountString: string } }> {
  const { value } = await connection.getParsedAccountInfo(address);
  const data = value?.data as ParsedAccountData;
  assert.equal(data.program, 'spl-token-2022');
  return data.parsed.info;
}

async function createMintWith(extensions: ExtensionType[], instructions: (mint: PublicKey) => Transaction['instructions'], decimals = 6): Promise<PublicKey> {
  const mint = Keypair.generate();
  const space = getMintLen(extensions);
  const lamports = await connection.getMinimumBalanceForRentExemption(space);
  const tx = new Transaction().add(
    SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: mint.publicKey, space, lamports, programId: TOKEN_2022_PROGRAM_ID }),
    ...instructions(mint.publicKey),
    createInitializeMintInstruction(mint.publicKey, decimals, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
  );
  await sendAndConfirmTransaction(connection, tx, [payer, mint]);
  return mint.publicKey;
}

before(async () => {
  localnet = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 0 });
  reconnect();
  payer = Keypair.generate();
  const signature = await connection.requestAirdrop(payer.publicKey, 100 * LAMPORTS_PER_SOL);
  await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) }, 'confirmed');
});
after(async () => {
  closeConnections();
  await localnet.close();
});

test('transferFeeConfig, metadataPointer, tokenMetadata, transferHook and pausableConfig are parsed', async () => {
  const hookProgram = Keypair.generate().publicKey;
  const mint = await createMintWith(
    [ExtensionType.TransferFeeConfig, ExtensionType.MetadataPointer, ExtensionType.TransferHook, ExtensionType.PausableConfig],
    (m) => [
      createInitializeTransferFeeConfigInstruction(m, payer.publicKey, payer.publicKey, 150, 5_000n, TOKEN_2022_PROGRAM_ID),
      createInitializeMetadataPointerInstruction(m, payer.publicKey, m, TOKEN_2022_PROGRAM_ID),
      createInitializeTransferHookInstruction(m, payer.publicKey, hookProgram, TOKEN_2022_PROGRAM_ID),
      createInitializePausableConfigInstruction(m, payer.publicKey, TOKEN_2022_PROGRAM_ID),
    ],
  );
  await tokenMetadataInitializeWithRentTransfer(connection, payer, mint, payer.publicKey, payer, 'Cinder', 'CIN', 'https://example.com/c.json', [], undefined, TOKEN_2022_PROGRAM_ID);
  await tokenMetadataUpdateFieldWithRentTransfer(connection, payer, mint, payer, 'colour', 'ember', [], undefined, TOKEN_2022_PROGRAM_ID);

  const info = await parsedInfo(mint);
  const byName = Object.fromEntries((info.extensions ?? []).map((e) => [e.extension, e.state ?? null]));
  const me = payer.publicKey.toBase58();
  const epoch = (await connection.getEpochInfo()).epoch;
  assert.deepEqual(Object.keys(byName).sort(), ['metadataPointer', 'pausableConfig', 'tokenMetadata', 'transferFeeConfig', 'transferHook']);
  assert.deepEqual(byName.transferFeeConfig, {
    transferFeeConfigAuthority: me,
    withdrawWithheldAuthority: me,
    withheldAmount: 0,
    olderTransferFee: { epoch, maximumFee: 5000, transferFeeBasisPoints: 150 },
    newerTransferFee: { epoch, maximumFee: 5000, transferFeeBasisPoints: 150 },
  });
  assert.deepEqual(byName.metadataPointer, { authority: me, metadataAddress: mint.toBase58() });
  assert.deepEqual(byName.transferHook, { authority: me, programId: hookProgram.toBase58() });
  assert.deepEqual(byName.pausableConfig, { authority: me, paused: false });
  assert.deepEqual(byName.tokenMetadata, {
    updateAuthority: me,
    mint: mint.toBase58(),
    name: 'Cinder',
    symbol: 'CIN',
    uri: 'https://example.com/c.json',
    additionalMetadata: [['colour', 'ember']],
  });

  const ata = await createAssociatedTokenAccountIdempotent(connection, payer, mint, payer.publicKey, undefined, TOKEN_2022_PROGRAM_ID);
  const account = await parsedInfo(ata);
  assert.deepEqual(account.extensions?.map((e) => e.extension).sort(), ['immutableOwner', 'pausableAccount', 'transferFeeAmount', 'transferHookAccount']);
});

test('interest-bearing mint: uiAmount grows with the chain clock exactly as the program computes it', async () => {
  const mint = await createInterestBearingMint(connection, payer, payer.publicKey, payer.publicKey, payer.publicKey, 500, 2, undefined, undefined, TOKEN_2022_PROGRAM_ID);
  const ata = await createAssociatedTokenAccountIdempotent(connection, payer, mint, payer.publicKey, undefined, TOKEN_2022_PROGRAM_ID);
  await mintTo(connection, payer, mint, ata, payer, 1_000_000n, [], undefined, TOKEN_2022_PROGRAM_ID);

  const config = (await parsedInfo(mint)).extensions?.find((e) => e.extension === 'interestBearingConfig')?.state as Record<string, unknown>;
  assert.equal(config.currentRate, 500);
  assert.equal(config.rateAuthority, payer.publicKey.toBase58());

  // 1,000,000 slots = 400,000 s, about 4.6 days at 5 % a year.
  await rpcResult(localnet.rpcUrl, 'localnet_warpSlots', [1_000_000]);
  reconnect();
  const fromProgram = await programUiAmount(mint, 1_000_000n);
  const balance = (await connection.getTokenAccountBalance(ata)).value;
  assert.equal(balance.uiAmountString, fromProgram);
  assert.equal(balance.uiAmount, Number(fromProgram));
  assert.ok(Number(fromProgram) > 10_005 && Number(fromProgram) < 10_007, `10,000 plus ~0.063 % interest: ${String(fromProgram)}`);
  assert.equal((await parsedInfo(ata)).tokenAmount?.uiAmountString, fromProgram);
});

test('scaled-UI-amount mint: uiAmount follows the multiplier, and the new one from its effective time', async () => {
  const mint = await createMintWith([ExtensionType.ScaledUiAmountConfig], (m) => [createInitializeScaledUiAmountConfigInstruction(m, payer.publicKey, 2.5, TOKEN_2022_PROGRAM_ID)]);
  const ata = await createAssociatedTokenAccountIdempotent(connection, payer, mint, payer.publicKey, undefined, TOKEN_2022_PROGRAM_ID);
  await mintTo(connection, payer, mint, ata, payer, 1_234_567n, [], undefined, TOKEN_2022_PROGRAM_ID);
  assert.equal((await connection.getTokenAccountBalance(ata)).value.uiAmountString, await programUiAmount(mint, 1_234_567n));

  const blockTime = (await connection.getBlockTime(await connection.getSlot('confirmed')))!;
  await updateMultiplier(connection, payer, mint, payer, 3, BigInt(blockTime + 3600), [], undefined, TOKEN_2022_PROGRAM_ID);
  const state = (await parsedInfo(mint)).extensions?.find((e) => e.extension === 'scaledUiAmountConfig')?.state;
  assert.deepEqual(state, { authority: payer.publicKey.toBase58(), multiplier: '2.5', newMultiplierEffectiveTimestamp: blockTime + 3600, newMultiplier: '3' });
  assert.equal(
    (await connection.getTokenSupply(mint)).value.uiAmountString,
    await programUiAmount(mint, 1_234_567n),
  );
  assert.match((await connection.getTokenSupply(mint)).value.uiAmountString!, /^3\.08641[78]$/, 'still 2.5 × 1.234567: the new multiplier is not in effect yet');

  await rpcResult(localnet.rpcUrl, 'localnet_warpSlots', [10_000]); // 4,000 s later
  reconnect();
  assert.equal((await connection.getTokenSupply(mint)).value.uiAmountString, '3.703701');
  assert.equal((await parsedInfo(ata)).tokenAmount?.uiAmountString, await programUiAmount(mint, 1_234_567n));
});

test('simulateTransaction with innerInstructions: the ATA program\'s CPIs, parsed', async () => {
  const mint = await createMintWith([], () => []);
  const owner = Keypair.generate().publicKey;
  const { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } = await import('@solana/spl-token');
  const ata = getAssociatedTokenAddressSync(mint, owner, false, TOKEN_2022_PROGRAM_ID);
  const tx = new Transaction().add(createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, owner, mint, TOKEN_2022_PROGRAM_ID));
  const { blockhash } = await connection.getLatestBlockhash();
  tx.recentBlockhash = blockhash;
  tx.feePayer = payer.publicKey;
  tx.sign(payer);
  const raw = await rpcResult<{ value: { err: unknown; innerInstructions: { index: number; instructions: { program?: string; parsed?: { type: string } }[] }[] | null } }>(
    localnet.rpcUrl,
    'simulateTransaction',
    [tx.serialize().toString('base64'), { encoding: 'base64', innerInstructions: true, commitment: 'confirmed' }],
  );
  assert.equal(raw.value.err, null);
  const inner = raw.value.innerInstructions;
  assert.equal(inner?.length, 1);
  assert.equal(inner[0]?.index, 0);
  const types = inner[0]!.instructions.map((ix) => `${ix.program}:${ix.parsed?.type}`);
  assert.ok(types.includes('spl-token:getAccountDataSize'), types.join(', '));
  assert.ok(types.includes('system:createAccount') || types.includes('system:transfer'), types.join(', '));
  assert.ok(types.includes('spl-token:initializeAccount3'), types.join(', '));
  const without = await rpcResult<{ value: { innerInstructions: unknown } }>(localnet.rpcUrl, 'simulateTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
  assert.equal(without.value.innerInstructions, null);
});
