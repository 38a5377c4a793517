/**
 * `npm run demo:token`: on a running embedded chain (`npm start` or `npm run localnet`), makes a
 * throwaway wallet with 1 SOL and 1,234.5 tokens of a new mint, and prints the burn request to
 * send to Cinder: at CINDER_URL, else http://127.0.0.1:$PORT (PORT as the server reads it, default
 * 8080); `npm start` prints this command with the variables its own ports need. For trying Cinder
 * locally; it refuses any RPC that is not on this machine.
 */
import {
  airdropFactory,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  assertIsSendableTransaction,
  assertIsTransactionWithBlockhashLifetime,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { createTestKey } from '../test/helpers/keys.ts';

const rpcUrl = process.env.LOCALNET_RPC_URL || 'http://127.0.0.1:8899';
const cinderUrl = (process.env.CINDER_URL || `http://127.0.0.1:${process.env.PORT || '8080'}`).replace(/\/+$/, '');
const wsUrl = process.env.LOCALNET_WS_URL ?? rpcUrl.replace(/^http/, 'ws').replace(/:(\d+)$/, (_m, port: string) => `:${Number(port) + 1}`);
if (!/^https?:\/\/[^\s'"\\]+$/.test(cinderUrl)) {
  console.error(`CINDER_URL must be an http(s) URL, not ${JSON.stringify(cinderUrl)}`);
  process.exit(2);
}
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(rpcUrl)) {
  console.error(`demo:token only runs against the local chain, not ${rpcUrl}`);
  process.exit(2);
}

const rpc = createSolanaRpc(rpcUrl);
const rpcSubscriptions = createSolanaRpcSubscriptions(wsUrl);

// A throwaway key whose secret can be printed for the burn request.
const { secretKey, base58SecretKey } = await createTestKey();
const owner = await createKeyPairSignerFromBytes(secretKey);
const mint = await generateKeyPairSigner();

await airdropFactory({ rpc, rpcSubscriptions })({ recipientAddress: owner.address, lamports: lamports(1_000_000_000n), commitment: 'confirmed' });
const [ata] = await findAssociatedTokenPda({ owner: owner.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
const { value: lifetime } = await rpc.getLatestBlockhash().send();
const space = BigInt(getMintSize());
const mintRent = await rpc.getMinimumBalanceForRentExemption(space).send();
const signed = await signTransactionMessageWithSigners(
  pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(owner, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getCreateAccountInstruction({ payer: owner, newAccount: mint, lamports: mintRent, space, programAddress: TOKEN_PROGRAM_ADDRESS }),
          getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: owner.address }),
          getCreateAssociatedTokenIdempotentInstruction({ payer: owner, ata, owner: owner.address, mint: mint.address }),
          getMintToInstruction({ mint: mint.address, token: ata, mintAuthority: owner, amount: 1_234_500_000n }),
        ],
        m,
      ),
  ),
);
assertIsSendableTransaction(signed);
assertIsTransactionWithBlockhashLifetime(signed);
await sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(signed, { commitment: 'confirmed' });

const body = { mint: mint.address, priorityFee: 0.000001, userPrivateKey: base58SecretKey };
console.log(`wallet ${owner.address} holds 1 SOL and 1,234.5 tokens of mint ${mint.address} (account ${ata}).`);
console.log('Burn them and reclaim the rent:');
console.log(`curl -s ${cinderUrl}/api/burn_tokens -H 'content-type: application/json' -d '${JSON.stringify(body)}'`);
process.exit(0);
