/**
 * A durable nonce is derived from the bank's blockhash, as on a validator, whatever recent
 * blockhash the transaction that wrote it carried: a client that reuses an older blockhash (web3.js
 * v1 caches one for 30 s) can still advance the nonce in a later slot. Slots move only with warps.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getAdvanceNonceAccountInstruction, getCreateAccountInstruction, getInitializeNonceAccountInstruction } from '@solana-program/system';
import { rpcResult, waitForStatus } from '@cinder/testkit';
import { startLocalnet, type Localnet } from '../src/index.ts';

let localnet: Localnet;
let url: string;
let payer: KeyPairSigner;
const warp = (slots: number) => rpcResult(url, 'localnet_warpSlots', [slots]);

before(async () => {
  localnet = await startLocalnet({ port: 0, testMode: true, timing: 'validator', slotIntervalMs: 0 });
  url = localnet.rpcUrl;
  payer = await generateKeyPairSigner();
  await waitForStatus(url, await rpcResult<string>(url, 'requestAirdrop', [payer.address, 10_000_000_000]));
  await warp(2);
});
after(() => localnet.close());

async function sendWith(blockhash: { blockhash: string; lastValidBlockHeight: bigint }, instructions: Instruction[]) {
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash as never, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  const signature = await rpcResult<string>(url, 'sendTransaction', [getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }]);
  await waitForStatus(url, signature);
  await warp(2);
  const { value } = await rpcResult<{ value: ({ err: unknown; slot: number } | null)[] }>(url, 'getSignatureStatuses', [[signature]]);
  return value[0]!;
}

async function storedNonce(account: Address): Promise<string> {
  const info = await rpcResult<{ value: { data: [string, string] } }>(url, 'getAccountInfo', [account, { encoding: 'base64' }]);
  return getBase58Decoder().decode(Buffer.from(info.value.data[0], 'base64').subarray(40, 72));
}

async function blockhashOf(slot: number): Promise<string> {
  return (await rpcResult<{ blockhash: string }>(url, 'getBlock', [slot, { transactionDetails: 'none', commitment: 'confirmed' }])).blockhash;
}

const durableNonce = (blockhash: string) =>
  getBase58Decoder().decode(createHash('sha256').update('DURABLE_NONCE').update(new Uint8Array(getAddressEncoder().encode(blockhash as Address))).digest());

test('a nonce created and advanced with one reused blockhash is the bank blockhash\'s durable nonce each time', async () => {
  const { value: reused } = await createSolanaRpc(url).getLatestBlockhash().send();
  const nonceAccount = await generateKeyPairSigner();
  const rent = await rpcResult<number>(url, 'getMinimumBalanceForRentExemption', [80]);
  const created = await sendWith(reused, [
    getCreateAccountInstruction({ payer, newAccount: nonceAccount, lamports: BigInt(rent), space: 80n, programAddress: '11111111111111111111111111111111' as Address }),
    getInitializeNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer.address }),
  ]);
  assert.equal(created.err, null);
  // Executed in the slot it was sent in, whose blockhash the send carried.
  assert.equal(await storedNonce(nonceAccount.address), durableNonce(await blockhashOf(created.slot)));
  assert.equal(await storedNonce(nonceAccount.address), durableNonce(reused.blockhash));

  // The same (older) blockhash again, a later slot: a validator advances the nonce.
  const advanced = await sendWith(reused, [getAdvanceNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer })]);
  assert.equal(advanced.err, null);
  assert.ok(advanced.slot > created.slot);
  assert.equal(await storedNonce(nonceAccount.address), durableNonce(await blockhashOf(advanced.slot)));
});
