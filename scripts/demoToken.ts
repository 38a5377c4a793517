/**
 * `npm run demo:token`: on a running embedded chain (`npm start` or `npm run localnet`), makes a
 * throwaway wallet that fits every tutorial of the docs: 1 SOL (for its fees), 1,234.5 tokens of
 * a new mint (the burn example), and an empty token account of each token program, SPL Token and
 * Token-2022 (what a reclaim closes: the preview and the keyless script). It prints the wallet's
 * key in base58 (what `userPrivateKey` takes) and writes it as a solana-keygen file (what the
 * keyless script and the CLI's --key-file read) into the temporary directory ($TMPDIR, else /tmp):
 * a throwaway key belongs neither in the checkout, where it could be committed, nor in
 * ~/.config/solana, where it could replace a real one; the file is new (never overwritten) and
 * readable by its owner only. Then the commands to try, addressed to Cinder at CINDER_URL, else
 * http://127.0.0.1:$PORT (PORT as the server reads it, default 8080); `npm start` prints this
 * command with the variables its own ports need. For trying Cinder locally: it refuses any RPC
 * that is not on this machine.
 */
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  type Address,
  type Instruction,
  type KeyPairSigner,
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
import {
  getCreateAssociatedTokenIdempotentInstruction as getCreateAssociatedToken2022IdempotentInstruction,
  getInitializeMint2Instruction as getInitializeMint2022Instruction,
  getMintSize as getMint2022Size,
  TOKEN_2022_PROGRAM_ADDRESS,
} from '@solana-program/token-2022';
import { createTestKey } from '@cinder/testkit';

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
const send = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });

/** One transaction of `instructions`, paid and signed by the owner (and the new mints in them). */
async function sendAsOwner(instructions: Instruction[]): Promise<void> {
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const signed = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(owner, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  assertIsSendableTransaction(signed);
  assertIsTransactionWithBlockhashLifetime(signed);
  await send(signed, { commitment: 'confirmed' });
}

/** A new mint of `program` (the owner its authority) and the owner's associated account of it. */
async function mintWithAccount(newMint: KeyPairSigner, program: Address, decimals: number): Promise<{ instructions: Instruction[]; account: Address }> {
  const classic = program === TOKEN_PROGRAM_ADDRESS;
  const space = BigInt(classic ? getMintSize() : getMint2022Size());
  const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
  const [account] = await findAssociatedTokenPda({ owner: owner.address, mint: newMint.address, tokenProgram: program });
  const create = { payer: owner, ata: account, owner: owner.address, mint: newMint.address };
  const initialize = { mint: newMint.address, decimals, mintAuthority: owner.address };
  return {
    account,
    instructions: [
      getCreateAccountInstruction({ payer: owner, newAccount: newMint, lamports: rent, space, programAddress: program }),
      classic ? getInitializeMint2Instruction(initialize) : getInitializeMint2022Instruction(initialize),
      classic ? getCreateAssociatedTokenIdempotentInstruction(create) : getCreateAssociatedToken2022IdempotentInstruction(create),
    ],
  };
}

// The tokens to burn: 1,234.5 of a mint with 6 decimals.
const burnable = await mintWithAccount(mint, TOKEN_PROGRAM_ADDRESS, 6);
await sendAsOwner([...burnable.instructions, getMintToInstruction({ mint: mint.address, token: burnable.account, mintAuthority: owner, amount: 1_234_500_000n })]);
// The accounts to reclaim: one empty account of each token program.
const [classicMint, mint2022] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
const emptyClassic = await mintWithAccount(classicMint, TOKEN_PROGRAM_ADDRESS, 0);
const empty2022 = await mintWithAccount(mint2022, TOKEN_2022_PROGRAM_ADDRESS, 0);
await sendAsOwner([...emptyClassic.instructions, ...empty2022.instructions]);

const keyFile = join(tmpdir(), `cinder-demo-${owner.address}.json`);
// 'wx': a new file or nothing; 0600: the owner's only.
await writeFile(keyFile, JSON.stringify([...secretKey]) + '\n', { flag: 'wx', mode: 0o600 });

const body = { mint: mint.address, priorityFee: 0.000001, userPrivateKey: base58SecretKey };
const cinderEnv = cinderUrl === 'http://127.0.0.1:8080' ? '' : `CINDER_URL=${cinderUrl} `;
console.log(
  `wallet ${owner.address} holds 1 SOL, 1,234.5 tokens of mint ${mint.address} (account ${burnable.account}), ` +
    `and 2 empty token accounts: ${emptyClassic.account} (SPL Token) and ${empty2022.account} (Token-2022).`,
);
console.log(`its key in base58 (userPrivateKey): ${base58SecretKey}`);
console.log(`its key as a solana-keygen file: ${keyFile}`);
console.log('Burn the tokens and reclaim the rent:');
console.log(`curl -s ${cinderUrl}/api/burn_tokens -H 'content-type: application/json' -d '${JSON.stringify(body)}'`);
console.log('What a reclaim of the whole wallet would close and return (no key):');
console.log(`curl -s '${cinderUrl}/api/reclaim_rent?owner=${owner.address}'`);
console.log('Reclaim without giving Cinder the key (docs/keyless.md, "Keyless, step by step"):');
console.log(`${cinderEnv}KEYPAIR=${keyFile} node reclaim.mjs`);
process.exit(0);
