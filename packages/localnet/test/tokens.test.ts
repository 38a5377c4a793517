/** Token accounts and mints through the RPC, created with the shared test helpers. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { address, generateKeyPairSigner, getBase58Decoder, getBase64Encoder, type Address, type KeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  fetchMint,
  findAssociatedTokenPda,
  AuthorityType,
  getApproveInstruction,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintToInstruction,
  getRevokeInstruction,
  getSetAuthorityInstruction,
  getSyncNativeInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import {
  createAta,
  createAuxTokenAccount,
  createFundedSigner,
  createTestMint,
  freezeTokenAccount,
  mintTokens,
  sendInstructions,
  setCloseAuthority,
  startTestChain,
  type TestChain,
} from '@cinder/testkit';
import { createMint2022, rpcCall, rpcResult } from '@cinder/testkit';

const TOKEN_2022 = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
const NATIVE_MINT = address('So11111111111111111111111111111111111111112');

let chain: TestChain;
let payer: KeyPairSigner;
let owner: KeyPairSigner;
let mint: Address;
let ata: Address;
let aux: Address;
let mint22: Address;
let ata22: Address;

before(async () => {
  chain = await startTestChain();
  ({ signer: payer } = await createFundedSigner(chain));
  owner = await generateKeyPairSigner();
  mint = await createTestMint(chain, payer, { decimals: 6, freezeAuthority: payer.address });
  ata = await createAta(chain, payer, owner.address, mint);
  aux = await createAuxTokenAccount(chain, payer, owner.address, mint);
  await mintTokens(chain, payer, mint, ata, 1_500_000n);
  await mintTokens(chain, payer, mint, aux, 7n);
  await freezeTokenAccount(chain, payer, aux, mint);
  mint22 = await createTestMint(chain, payer, { decimals: 2, tokenProgram: TOKEN_2022 });
  ata22 = await createAta(chain, payer, owner.address, mint22, TOKEN_2022);
  await mintTokens(chain, payer, mint22, ata22, 12_345n, TOKEN_2022);
});
after(() => chain.close());

test('fetchMint reads a mint created over RPC', async () => {
  const { data, programAddress } = await fetchMint(chain.rpc, mint);
  assert.equal(programAddress, TOKEN_PROGRAM_ADDRESS);
  assert.deepEqual(data, {
    mintAuthority: { __option: 'Some', value: payer.address },
    supply: 1_500_007n,
    decimals: 6,
    isInitialized: true,
    freezeAuthority: { __option: 'Some', value: payer.address },
  });
  assert.equal((await fetchMint(chain.rpc, mint22)).programAddress, TOKEN_2022);
});

test('getTokenAccountsByOwner with a mint filter, base64', async () => {
  const { value } = await chain.rpc.getTokenAccountsByOwner(owner.address, { mint }, { encoding: 'base64' }).send();
  const decoded = value
    .map(({ pubkey, account }) => ({ pubkey, space: account.space, ...getTokenDecoder().decode(getBase64Encoder().encode(account.data[0])) }))
    .sort((a, b) => Number(a.amount - b.amount));
  assert.deepEqual(decoded.map(({ pubkey, space, amount, state, owner: o, mint: m }) => ({ pubkey, space, amount, state, owner: o, mint: m })), [
    { pubkey: aux, space: 165n, amount: 7n, state: 2, owner: owner.address, mint },
    { pubkey: ata, space: 165n, amount: 1_500_000n, state: 1, owner: owner.address, mint },
  ]);
});

test('getTokenAccountsByOwner jsonParsed has the validator parsed.info shape', async () => {
  const funded = await createFundedSigner(chain);
  const delegate = await generateKeyPairSigner();
  const ownerAta = await createAta(chain, funded.signer, funded.signer.address, mint);
  await mintTokens(chain, payer, mint, ownerAta, 2_000_001n);
  await sendInstructions(chain, funded.signer, [getApproveInstruction({ source: ownerAta, delegate: delegate.address, owner: funded.signer, amount: 500_000n })]);
  await setCloseAuthority(chain, funded.signer, ownerAta, delegate.address);

  const { value } = await chain.rpc.getTokenAccountsByOwner(funded.signer.address, { mint }, { encoding: 'jsonParsed' }).send();
  assert.equal(value.length, 1);
  assert.equal(value[0]!.pubkey, ownerAta);
  assert.deepEqual(value[0]!.account.data, {
    program: 'spl-token',
    parsed: {
      type: 'account',
      info: {
        isNative: false,
        mint,
        owner: funded.signer.address,
        state: 'initialized',
        tokenAmount: { amount: '2000001', decimals: 6, uiAmount: 2.000001, uiAmountString: '2.000001' },
        delegate: delegate.address,
        delegatedAmount: { amount: '500000', decimals: 6, uiAmount: 0.5, uiAmountString: '0.5' },
        closeAuthority: delegate.address,
      },
    },
    space: 165n,
  });

  const frozen = await chain.rpc.getTokenAccountsByOwner(owner.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'jsonParsed' }).send();
  const states = frozen.value.map((a) => [a.pubkey, a.account.data.parsed.info.state]).sort();
  assert.deepEqual(states, [[ata, 'initialized'], [aux, 'frozen']].sort());
});

test('Token-2022 accounts: programId filter, extensions, decimals from the mint', async () => {
  const { value } = await chain.rpc.getTokenAccountsByOwner(owner.address, { programId: TOKEN_2022 }, { encoding: 'jsonParsed' }).send();
  assert.equal(value.length, 1);
  assert.deepEqual(value[0]!.account.data, {
    program: 'spl-token-2022',
    parsed: {
      type: 'account',
      info: {
        isNative: false,
        mint: mint22,
        owner: owner.address,
        state: 'initialized',
        tokenAmount: { amount: '12345', decimals: 2, uiAmount: 123.45, uiAmountString: '123.45' },
        extensions: [{ extension: 'immutableOwner' }],
      },
    },
    space: 170n,
  });
  const byMint = await chain.rpc.getTokenAccountsByOwner(owner.address, { mint: mint22 }, { encoding: 'base64' }).send();
  assert.deepEqual(byMint.value.map((a) => [a.pubkey, a.account.owner, a.account.space]), [[ata22, TOKEN_2022, 170n]]);
});

test('getTokenAccountsByOwner rejects unknown programs and mints like the validator', async () => {
  const url = chain.localnet.rpcUrl;
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByOwner', [owner.address, { programId: '11111111111111111111111111111111' }])).error, {
    code: -32602,
    message: 'Invalid param: unrecognized Token program id',
  });
  const { address: nowhere } = await generateKeyPairSigner();
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByOwner', [owner.address, { mint: nowhere }])).error, {
    code: -32602,
    message: 'Invalid param: could not find mint',
  });
});

test('getTokenAccountsByDelegate: the SPL Token and Token-2022 accounts approved to the delegate, and no others', async () => {
  const url = chain.localnet.rpcUrl;
  const { signer: holder } = await createFundedSigner(chain);
  const [delegate, otherDelegate] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  // Mints of its own, so the supplies other tests check stay as they are.
  const delegatedMint = await createTestMint(chain, payer, { decimals: 6 });
  const delegatedMint22 = await createTestMint(chain, payer, { decimals: 2, tokenProgram: TOKEN_2022 });
  const approved = await createAta(chain, holder, holder.address, delegatedMint);
  const approvedElsewhere = await createAuxTokenAccount(chain, holder, holder.address, delegatedMint);
  const notApproved = await createAuxTokenAccount(chain, holder, holder.address, delegatedMint);
  const approved22 = await createAta(chain, holder, holder.address, delegatedMint22, TOKEN_2022);
  await mintTokens(chain, payer, delegatedMint, approved, 900_000n);
  await mintTokens(chain, payer, delegatedMint22, approved22, 5_000n, TOKEN_2022);
  await sendInstructions(chain, holder, [
    getApproveInstruction({ source: approved, delegate: delegate.address, owner: holder, amount: 400_000n }),
    getApproveInstruction({ source: approvedElsewhere, delegate: otherDelegate.address, owner: holder, amount: 1n }),
    getApproveInstruction({ source: approved22, delegate: delegate.address, owner: holder, amount: 250n }, { programAddress: TOKEN_2022 }),
  ]);

  const byProgram = await chain.rpc.getTokenAccountsByDelegate(delegate.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'jsonParsed' }).send();
  assert.deepEqual(byProgram.value.map((a) => a.pubkey), [approved]);
  assert.deepEqual(byProgram.value[0]!.account.data, {
    program: 'spl-token',
    parsed: {
      type: 'account',
      info: {
        isNative: false,
        mint: delegatedMint,
        owner: holder.address,
        state: 'initialized',
        tokenAmount: { amount: '900000', decimals: 6, uiAmount: 0.9, uiAmountString: '0.9' },
        delegate: delegate.address,
        delegatedAmount: { amount: '400000', decimals: 6, uiAmount: 0.4, uiAmountString: '0.4' },
      },
    },
    space: 165n,
  });
  const byMint = await chain.rpc.getTokenAccountsByDelegate(delegate.address, { mint: delegatedMint }, { encoding: 'base64' }).send();
  assert.deepEqual(byMint.value.map((a) => [a.pubkey, a.account.owner, a.account.lamports, a.account.space]), [[approved, TOKEN_PROGRAM_ADDRESS, 2_039_280n, 165n]]);
  const decoded = getTokenDecoder().decode(getBase64Encoder().encode(byMint.value[0]!.account.data[0]));
  assert.deepEqual([decoded.delegate, decoded.delegatedAmount], [{ __option: 'Some', value: delegate.address }, 400_000n]);

  const token22 = await chain.rpc.getTokenAccountsByDelegate(delegate.address, { programId: TOKEN_2022 }, { encoding: 'jsonParsed' }).send();
  assert.deepEqual(token22.value.map((a) => [a.pubkey, a.account.owner]), [[approved22, TOKEN_2022]]);
  assert.equal(token22.value[0]!.account.data.program, 'spl-token-2022');
  assert.deepEqual(token22.value[0]!.account.data.parsed.info.delegatedAmount, { amount: '250', decimals: 2, uiAmount: 2.5, uiAmountString: '2.5' });
  const byMint22 = await chain.rpc.getTokenAccountsByDelegate(delegate.address, { mint: delegatedMint22 }, { encoding: 'base64' }).send();
  assert.deepEqual(byMint22.value.map((a) => a.pubkey), [approved22]);

  const elsewhere = await chain.rpc.getTokenAccountsByDelegate(otherDelegate.address, { mint: delegatedMint }, { encoding: 'base64' }).send();
  assert.deepEqual(elsewhere.value.map((a) => a.pubkey), [approvedElsewhere]);
  // The holder owns all four accounts but is the delegate of none; notApproved has no delegate at all.
  assert.deepEqual((await chain.rpc.getTokenAccountsByDelegate(holder.address, { programId: TOKEN_PROGRAM_ADDRESS }).send()).value, []);
  const owned = await chain.rpc.getTokenAccountsByOwner(holder.address, { mint: delegatedMint }, { encoding: 'base64' }).send();
  assert.deepEqual(owned.value.map((a) => a.pubkey).sort(), [approved, approvedElsewhere, notApproved].sort());

  // The raw shape: the same keyed accounts as getTokenAccountsByOwner, in an RpcResponse.
  const raw = await rpcResult<{ context: { apiVersion: string; slot: number }; value: { pubkey: string; account: Record<string, unknown> }[] }>(url, 'getTokenAccountsByDelegate', [
    delegate.address,
    { mint: delegatedMint },
    { encoding: 'base64', dataSlice: { offset: 72, length: 36 }, commitment: 'confirmed' },
  ]);
  assert.deepEqual(Object.keys(raw.context), ['apiVersion', 'slot']);
  assert.deepEqual(raw.value.map((a) => a.pubkey), [approved]);
  assert.deepEqual(Object.keys(raw.value[0]!.account), ['data', 'executable', 'lamports', 'owner', 'rentEpoch', 'space']);
  // dataSlice [72, 108): the COption tag 1 and the delegate.
  const slice = getBase64Encoder().encode((raw.value[0]!.account.data as [string, string])[0]);
  assert.deepEqual([...slice.subarray(0, 4)], [1, 0, 0, 0]);
  assert.equal(address(getBase58Decoder().decode(slice.subarray(4))), delegate.address);

  // Revoke removes the account from the delegate's list.
  await sendInstructions(chain, holder, [getRevokeInstruction({ source: approved, owner: holder })]);
  assert.deepEqual((await chain.rpc.getTokenAccountsByDelegate(delegate.address, { mint: delegatedMint }).send()).value, []);

  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByDelegate', [delegate.address, { programId: '11111111111111111111111111111111' }])).error, {
    code: -32602,
    message: 'Invalid param: unrecognized Token program id',
  });
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByDelegate', [delegate.address, { mint: otherDelegate.address }])).error, {
    code: -32602,
    message: 'Invalid param: could not find mint',
  });
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByDelegate', [delegate.address, { mint: holder.address }])).error, {
    code: -32602,
    message: 'Invalid param: not a Token mint',
  });
  // The default encoding is binary (base58), which the validator refuses for accounts over 128 bytes.
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByDelegate', [otherDelegate.address, { mint: delegatedMint }])).error, {
    code: -32600,
    message: 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
  });
  assert.equal((await rpcCall(url, 'getTokenAccountsByDelegate', [delegate.address, { mint: delegatedMint }, { commitment: 'soon' }])).error?.code, -32602);
  assert.deepEqual((await rpcCall(url, 'getTokenAccountsByDelegate', [delegate.address, { mint: delegatedMint }, {}, {}])).error, {
    code: -32602,
    message: 'Invalid parameters: Expected from 2 to 3 parameters.',
    data: '"Got: 4"',
  });
});

test('getProgramAccounts on the token program with dataSize + memcmp (owner at offset 32)', async () => {
  const accounts = await chain.rpc
    .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, {
      encoding: 'base64',
      filters: [{ dataSize: 165n }, { memcmp: { offset: 32n, bytes: owner.address as never, encoding: 'base58' } }],
    })
    .send();
  assert.deepEqual(accounts.map((a) => a.pubkey).sort(), [ata, aux].sort());
});

test('getTokenAccountsByOwner follows an account whose owner changes, and forgets a closed one', async () => {
  const from = await createFundedSigner(chain);
  const to = await generateKeyPairSigner();
  const account = await createAta(chain, from.signer, from.signer.address, mint);
  const byOwner = async (who: Address) =>
    (await chain.rpc.getTokenAccountsByOwner(who, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send()).value.map((a) => a.pubkey);
  assert.deepEqual(await byOwner(from.signer.address), [account]);
  await sendInstructions(chain, from.signer, [
    getSetAuthorityInstruction({ owned: account, owner: from.signer, authorityType: AuthorityType.AccountOwner, newAuthority: to.address }),
  ]);
  assert.deepEqual(await byOwner(from.signer.address), []);
  assert.deepEqual(await byOwner(to.address), [account]);
  // The new owner closes it, paying the fee from SOL it was sent.
  await sendInstructions(chain, from.signer, [getTransferSolInstruction({ source: from.signer, destination: to.address, amount: 10_000_000n })]);
  await sendInstructions(chain, to, [getCloseAccountInstruction({ account, destination: to.address, owner: to })]);
  assert.deepEqual(await byOwner(to.address), []);
});

test('getTokenAccountBalance and getTokenSupply', async () => {
  assert.deepEqual((await chain.rpc.getTokenAccountBalance(aux).send()).value, { amount: '7', decimals: 6, uiAmount: 0.000007, uiAmountString: '0.000007' });
  assert.deepEqual((await chain.rpc.getTokenAccountBalance(ata).send()).value, { amount: '1500000', decimals: 6, uiAmount: 1.5, uiAmountString: '1.5' });
  const supply = await rpcResult<{ value: unknown }>(chain.localnet.rpcUrl, 'getTokenSupply', [mint22]);
  assert.deepEqual(supply.value, { amount: '12345', decimals: 2, uiAmount: 123.45, uiAmountString: '123.45' });
});

test('wrapped SOL: isNative and rentExemptReserve', async () => {
  const wsolAta = await createAta(chain, payer, payer.address, NATIVE_MINT);
  await sendInstructions(chain, payer, [
    getTransferSolInstruction({ source: payer, destination: wsolAta, amount: 300_000_000n }),
    getSyncNativeInstruction({ account: wsolAta }),
  ]);
  const { value } = await chain.rpc.getTokenAccountsByOwner(payer.address, { mint: NATIVE_MINT }, { encoding: 'jsonParsed' }).send();
  assert.deepEqual(value[0]!.account.data.parsed.info, {
    isNative: true,
    mint: NATIVE_MINT,
    owner: payer.address,
    state: 'initialized',
    tokenAmount: { amount: '300000000', decimals: 9, uiAmount: 0.3, uiAmountString: '0.3' },
    rentExemptReserve: { amount: '2039280', decimals: 9, uiAmount: 0.00203928, uiAmountString: '0.00203928' },
  });
});

test('getTransaction reports token balances before and after', async () => {
  const signature = await sendInstructions(chain, payer, [getMintToInstruction({ mint, token: ata, mintAuthority: payer, amount: 500_000n })]);
  const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send();
  const index = landed!.transaction.message.accountKeys.indexOf(ata);
  const pick = (balances: readonly { accountIndex: number; mint: string; owner?: string; programId?: string; uiTokenAmount: { amount: string } }[]) =>
    balances.map((b) => ({ accountIndex: b.accountIndex, mint: b.mint, owner: b.owner, programId: b.programId, amount: b.uiTokenAmount.amount }));
  const expected = (amount: string) => [{ accountIndex: index, mint, owner: owner.address, programId: TOKEN_PROGRAM_ADDRESS, amount }];
  assert.deepEqual(pick(landed!.meta!.preTokenBalances!), expected('1500000'));
  assert.deepEqual(pick(landed!.meta!.postTokenBalances!), expected('2000000'));
});

test('getTransaction reports the inner instructions of cross-program invocations', async () => {
  const { address: newOwner } = await generateKeyPairSigner();
  const [newAta] = await findAssociatedTokenPda({ owner: newOwner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const signature = await sendInstructions(chain, payer, [getCreateAssociatedTokenIdempotentInstruction({ payer, ata: newAta, owner: newOwner, mint })]);
  const landed = await chain.rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed', encoding: 'json' }).send();
  const keys = landed!.transaction.message.accountKeys;
  const inner = landed!.meta!.innerInstructions!;
  assert.deepEqual(inner.map((i) => i.index), [0]);
  const programs = inner[0]!.instructions.map((ix) => keys[ix.programIdIndex]);
  assert.ok(programs.includes(TOKEN_PROGRAM_ADDRESS) && programs.includes(address('11111111111111111111111111111111')), programs.join());
  assert.ok(inner[0]!.instructions.every((ix) => ix.stackHeight === 2));
});

test('an empty frozen account of either token program closes: CloseAccount checks the balance and the authority, not the freeze state', async () => {
  // A fact of the programs (spl-token's process_close_account has no frozen check; Token-2022's
  // neither), recorded here because Cinder's planner skips frozen accounts anyway
  // (ACCOUNT_FROZEN, as CONTRACT.md settles it), empty ones included.
  const holder = (await createFundedSigner(chain, 1_000_000_000n)).signer;
  for (const tokenProgram of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022]) {
    const freezable = tokenProgram === TOKEN_2022 ? await createMint2022(chain, payer, { decimals: 0, freezeAuthority: payer.address }) : await createTestMint(chain, payer, { decimals: 0, freezeAuthority: payer.address });
    const account = await createAta(chain, payer, holder.address, freezable, tokenProgram);
    await freezeTokenAccount(chain, payer, account, freezable, tokenProgram);
    const rent = (await chain.rpc.getBalance(account).send()).value;
    const before = (await chain.rpc.getBalance(holder.address).send()).value;
    await sendInstructions(chain, payer, [getCloseAccountInstruction({ account, destination: holder.address, owner: holder }, { programAddress: tokenProgram })]);
    assert.equal((await chain.rpc.getAccountInfo(account).send()).value, null, `${tokenProgram}: closed`);
    assert.equal((await chain.rpc.getBalance(holder.address).send()).value, before + rent, `${tokenProgram}: its rent to the owner`);
  }
});
