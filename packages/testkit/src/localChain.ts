/**
 * Test fixtures on the embedded local chain. Everything goes through the real JSON-RPC /
 * WebSocket path with real instructions, exactly like production code talks to a validator.
 */
import { randomBytes } from 'node:crypto';
import {
  getAddressDecoder,
  addSignersToTransactionMessage,
  airdropFactory,
  appendTransactionMessageInstructions,
  assertIsSendableTransaction,
  assertIsTransactionWithBlockhashLifetime,
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  getBase64Decoder,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Rpc,
  type RpcSubscriptions,
  type Signature,
  type SolanaRpcApi,
  type SolanaRpcSubscriptionsApi,
  type TransactionSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  AccountState,
  AuthorityType,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getFreezeAccountInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintEncoder,
  getMintSize,
  getMintToInstruction,
  getSetAuthorityInstruction,
  getTokenEncoder,
  getTokenSize,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { startLocalnet, type Localnet, type Timing } from '@cinder/localnet';
import { createTestKey } from './keys.ts';

export interface TestChain {
  localnet: Localnet;
  rpc: Rpc<SolanaRpcApi>;
  rpcSubscriptions: RpcSubscriptions<SolanaRpcSubscriptionsApi>;
  close(): Promise<void>;
}

const DEFAULT_FUNDING = 10_000_000_000n; // 10 SOL
const DEFAULT_DECIMALS = 9;

/**
 * A local chain on free ports with the test-only methods enabled. Close it in `after`. It runs the
 * realistic 400 ms slot clock; a test that needs blockhashes to expire or finality warps
 * (`localnet_warpSlots`) instead of waiting.
 */
export async function startTestChain(
  opts: {
    slotIntervalMs?: number;
    programs?: { address: string; bytes: Uint8Array }[];
    v1Transactions?: boolean;
    /** 'validator': a sent transaction executes ~0.1 s later and is confirmed a slot after, as on a cluster; default 'instant'. */
    timing?: Timing;
  } = {},
): Promise<TestChain> {
  // Test mode executes a send at once (instant timing) unless asked for a validator's; Token-2022's
  // native mint is asked for so that tests can wrap SOL under either token program.
  const localnet = await startLocalnet({
    port: 0,
    testMode: true,
    ...(opts.timing ? { timing: opts.timing } : {}),
    slotIntervalMs: opts.slotIntervalMs ?? 400,
    token2022NativeMint: true,
    ...(opts.programs ? { programs: opts.programs } : {}),
    // The v1 gate is active unless a test asks for a cluster from before it (the fallback paths).
    ...(opts.v1Transactions === false ? { v1Transactions: false } : {}),
  });
  return {
    localnet,
    rpc: createSolanaRpc(localnet.rpcUrl),
    rpcSubscriptions: createSolanaRpcSubscriptions(localnet.wsUrl),
    close: () => localnet.close(),
  };
}

/**
 * A signer funded by airdrop, with its secret key in the 64-byte `seed ‖ public key` format of
 * solana-keygen / Phantom (so it can be handed to code that imports keys).
 */
export async function createFundedSigner(
  chain: TestChain,
  amount: bigint = DEFAULT_FUNDING,
): Promise<{ signer: KeyPairSigner; secretKey: Uint8Array }> {
  const { secretKey } = await createTestKey();
  const signer = await createKeyPairSignerFromBytes(secretKey);
  await airdropFactory({ rpc: chain.rpc, rpcSubscriptions: chain.rpcSubscriptions })({
    recipientAddress: signer.address,
    lamports: lamports(amount),
    commitment: 'confirmed',
  });
  return { signer, secretKey };
}

/**
 * Signatures this process has sent. With slots of 400 ms, a test that sends the same
 * instructions twice within one slot (re-creating an account it just closed, say) would sign the
 * very same transaction again, which the chain refuses as already processed; such a repeat waits
 * for the next blockhash instead, as a real client would have to.
 */
const sentSignatures = new Set<string>();

/** Builds, signs, sends and confirms (at "confirmed") one transaction. */
export async function sendInstructions(
  chain: TestChain,
  payer: TransactionSigner,
  instructions: Instruction[],
  extraSigners: TransactionSigner[] = [],
): Promise<Signature> {
  for (let attempt = 0; ; attempt++) {
    const { value: latestBlockhash } = await chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
      (m) => addSignersToTransactionMessage(extraSigners, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latestBlockhash, m),
    );
    const transaction = await signTransactionMessageWithSigners(message);
    const signature = getSignatureFromTransaction(transaction);
    if (sentSignatures.has(signature) && attempt < 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    sentSignatures.add(signature);
    assertIsSendableTransaction(transaction);
    assertIsTransactionWithBlockhashLifetime(transaction);
    await sendAndConfirmTransactionFactory({ rpc: chain.rpc, rpcSubscriptions: chain.rpcSubscriptions })(transaction, {
      commitment: 'confirmed',
    });
    return signature;
  }
}

/** A new mint whose mint authority is `payer`. Default: 9 decimals, classic SPL Token, no freeze authority. */
export async function createTestMint(
  chain: TestChain,
  payer: KeyPairSigner,
  opts: { decimals?: number; freezeAuthority?: Address; tokenProgram?: Address } = {},
): Promise<Address> {
  const tokenProgram = opts.tokenProgram ?? TOKEN_PROGRAM_ADDRESS;
  const mint = await generateKeyPairSigner();
  const space = BigInt(getMintSize());
  const rent = await chain.rpc.getMinimumBalanceForRentExemption(space).send();
  await sendInstructions(chain, payer, [
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: tokenProgram }),
    getInitializeMint2Instruction(
      {
        mint: mint.address,
        decimals: opts.decimals ?? DEFAULT_DECIMALS,
        mintAuthority: payer.address,
        freezeAuthority: opts.freezeAuthority ?? null,
      },
      { programAddress: tokenProgram },
    ),
  ]);
  return mint.address;
}

/** The associated token account of `owner` for `mint` (created idempotently). */
export async function createAta(
  chain: TestChain,
  payer: KeyPairSigner,
  owner: Address,
  mint: Address,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
  await sendInstructions(chain, payer, [getCreateAssociatedTokenIdempotentInstruction({ payer, ata, owner, mint, tokenProgram })]);
  return ata;
}

/** A token account at a fresh keypair address (not the ATA), initialized with InitializeAccount3. */
export async function createAuxTokenAccount(
  chain: TestChain,
  payer: KeyPairSigner,
  owner: Address,
  mint: Address,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<Address> {
  const account = await generateKeyPairSigner();
  const space = BigInt(getTokenSize());
  const rent = await chain.rpc.getMinimumBalanceForRentExemption(space).send();
  await sendInstructions(chain, payer, [
    getCreateAccountInstruction({ payer, newAccount: account, lamports: rent, space, programAddress: tokenProgram }),
    getInitializeAccount3Instruction({ account: account.address, mint, owner }, { programAddress: tokenProgram }),
  ]);
  return account.address;
}

export async function mintTokens(
  chain: TestChain,
  mintAuthority: KeyPairSigner,
  mint: Address,
  destination: Address,
  amount: bigint,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<void> {
  await sendInstructions(chain, mintAuthority, [
    getMintToInstruction({ mint, token: destination, mintAuthority, amount }, { programAddress: tokenProgram }),
  ]);
}

export async function freezeTokenAccount(
  chain: TestChain,
  freezeAuthority: KeyPairSigner,
  account: Address,
  mint: Address,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<void> {
  await sendInstructions(chain, freezeAuthority, [
    getFreezeAccountInstruction({ account, mint, owner: freezeAuthority }, { programAddress: tokenProgram }),
  ]);
}

/** Sets the token account's close authority; `owner` signs and pays. */
export async function setCloseAuthority(
  chain: TestChain,
  owner: KeyPairSigner,
  account: Address,
  newAuthority: Address,
  tokenProgram: Address = TOKEN_PROGRAM_ADDRESS,
): Promise<void> {
  await sendInstructions(chain, owner, [
    getSetAuthorityInstruction(
      { owned: account, owner, authorityType: AuthorityType.CloseAccount, newAuthority },
      { programAddress: tokenProgram },
    ),
  ]);
}

/** Balance in lamports; 0n for a missing account. */
export async function getLamports(chain: TestChain, address: Address): Promise<bigint> {
  const { value } = await chain.rpc.getBalance(address).send();
  return value;
}

/** The fee the chain charged for a confirmed transaction (it must be on the chain). */
export async function chainFee(chain: TestChain, signature: Signature): Promise<bigint> {
  const transaction = await chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 1, encoding: 'json' }).send();
  if (!transaction?.meta) throw new Error(`transaction ${signature} is not on the chain`);
  return transaction.meta.fee;
}

/**
 * Polls until `condition` holds. The bound (2 minutes by default) only ends a test that would
 * otherwise hang: waiting stops as soon as the condition holds, so no test depends on speed.
 */
export async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A funded owner (its key in base58, as a user pastes it) with a fresh mint and a balance of it. */
export interface TokenHolder {
  signer: KeyPairSigner;
  key: string;
  mint: Address;
  ata: Address;
}

/** A funded owner with a fresh classic mint (default 0 decimals) and `amount` (default 100) of it in its ATA. */
export async function createTokenHolder(chain: TestChain, opts: { amount?: bigint; decimals?: number } = {}): Promise<TokenHolder> {
  const { signer, secretKey } = await createFundedSigner(chain);
  const mint = await createTestMint(chain, signer, { decimals: opts.decimals ?? 0 });
  const ata = await createAta(chain, signer, signer.address, mint);
  const amount = opts.amount ?? 100n;
  if (amount > 0n) await mintTokens(chain, signer, mint, ata, amount);
  return { signer, key: getBase58Decoder().decode(secretKey), mint, ata };
}

/**
 * A wallet of `count` empty accounts of one new mint, of SPL Token or (`programAddress`) Token-2022,
 * written straight into the chain's state (`localnet_setAccount`, test mode): thousands of accounts
 * in seconds, where creating each by transaction would take minutes. Returns the mint. Token-2022's
 * account and mint without extensions have SPL Token's layout and size (165 and 82 bytes).
 */
export async function writeEmptyTokenAccounts(chain: TestChain, owner: Address, count: number, programAddress: Address = TOKEN_PROGRAM_ADDRESS): Promise<Address> {
  const base64 = getBase64Decoder();
  const addresses = getAddressDecoder();
  // JSON-RPC batches of a hundred: one request per account would make a wallet of thousands slow to write.
  const setAll = async (accounts: { address: Address; lamports: bigint; data: Uint8Array }[]) => {
    const response = await fetch(chain.localnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        accounts.map((a, id) => ({ jsonrpc: '2.0', id, method: 'localnet_setAccount', params: [a.address, { lamports: Number(a.lamports), data: base64.decode(a.data), owner: programAddress }] })),
      ),
    });
    const answers = (await response.json()) as { error?: unknown }[];
    const failed = answers.find((answer) => answer.error);
    if (failed) throw new Error(`localnet_setAccount: ${JSON.stringify(failed.error)}`);
  };
  const mint = (await generateKeyPairSigner()).address;
  await setAll([{ address: mint, lamports: 1_461_600n, data: new Uint8Array(getMintEncoder().encode({ mintAuthority: null, supply: 0n, decimals: 6, isInitialized: true, freezeAuthority: null })) }]);
  const data = new Uint8Array(
    getTokenEncoder().encode({ mint, owner, amount: 0n, delegate: null, state: AccountState.Initialized, isNative: null, delegatedAmount: 0n, closeAuthority: null }),
  );
  // A token account needs no key of its own (an associated one has none): random addresses, no key generation.
  for (let from = 0; from < count; from += 100) {
    const size = Math.min(100, count - from);
    await setAll(Array.from({ length: size }, () => ({ address: addresses.decode(randomBytes(32)), lamports: 2_039_280n, data })));
  }
  return mint;
}

export type { Timing } from '@cinder/localnet';
