/**
 * The money rules of a burn (contract: "Money rules"), each with its failing case and its passing
 * neighbour, on the embedded chain executing the real token programs, checked to the lamport.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { airdropFactory, createKeyPairSignerFromBytes, generateKeyPairSigner, getBase58Decoder, lamports, type Address, type KeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { extension, getBurnCheckedInstruction, getInitializeAccount3Instruction, getPauseInstruction, getTokenSize } from '@solana-program/token-2022';
import { rpcResult } from '@cinder/testkit';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createAta, createAuxTokenAccount, createFundedSigner, createTestMint, freezeTokenAccount, getLamports, mintTokens, sendInstructions } from '@cinder/testkit';
import { createTestKey, type TestKey } from '@cinder/testkit';
import { createMint2022, TOKEN_2022_PROGRAM_ADDRESS } from '@cinder/testkit';

let t: TestApp;
let payer: KeyPairSigner;
const RENT_165 = 2_039_280n;
const RESERVE = 890_880n; // rent-exempt minimum of a 0-byte account, what a fee payer must keep (or end at 0)

before(async () => {
  t = await createTestApp();
  payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
});
after(() => t.close());

async function burn(body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/burn_tokens', payload: body });
}

/** An owner holding exactly `sol` lamports (0: no wallet account at all) and nothing else paid by it. */
async function ownerWith(sol: bigint): Promise<TestKey> {
  const owner = await createTestKey();
  if (sol > 0n) {
    await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({
      recipientAddress: owner.address,
      lamports: lamports(sol),
      commitment: 'confirmed',
    });
  }
  return owner;
}

/** A classic mint (the payer is its authorities) and `owner`'s ATA holding `amount`. */
async function holding(owner: Address, amount: bigint, opts: { freezable?: boolean } = {}) {
  const mint = await createTestMint(t.chain, payer, { decimals: 0, ...(opts.freezable ? { freezeAuthority: payer.address } : {}) });
  const ata = await createAta(t.chain, payer, owner, mint);
  if (amount > 0n) await mintTokens(t.chain, payer, mint, ata, amount);
  return { mint, ata };
}

const exists = async (address: Address) => (await t.chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send()).value !== null;

describe('money rule: the fee payer keeps the rent-exempt minimum (or ends at 0), checked before sending', () => {
  it('one lamport short of the reserve: 400 INSUFFICIENT_SOL_FOR_FEE at once, saying 1 lamport is missing, nothing sent', async () => {
    const owner = await ownerWith(RESERVE + 4_999n);
    const { mint, ata } = await holding(owner.address, 0n);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json();
    assert.equal(body.code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.equal(body.missingLamports, '1');
    assert.match(body.detail, /0\.000000001 SOL more is needed/);
    assert.equal(await getLamports(t.chain, owner.address), RESERVE + 4_999n);
    assert.equal(await exists(ata), true);
  });

  it('exactly the reserve after the fee: the burn lands and the owner gets rent − fee', async () => {
    const owner = await ownerWith(RESERVE + 5_000n);
    const { mint, ata } = await holding(owner.address, 0n);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().details.feeLamports, '5000');
    assert.equal(await getLamports(t.chain, owner.address), RESERVE + RENT_165);
    assert.equal(await exists(ata), false);
  });

  it('exactly the fee (the payer ends at 0 before the closes pay it): allowed, and lands', async () => {
    const owner = await createTestKey();
    const { mint } = await holding(owner.address, 0n);
    // An airdrop cannot leave 5,000 lamports (below rent exemption); the test-only method can.
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setAccount', [
      owner.address,
      { lamports: 5000, data: '', owner: '11111111111111111111111111111111', executable: false },
    ]);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(await getLamports(t.chain, owner.address), RENT_165);
  });

  it("the issue's case: 0.0015 SOL with a 0.001 SOL priority fee is refused at once, never a pending burn", async () => {
    const owner = await ownerWith(1_500_000n);
    const { mint, ata } = await holding(owner.address, 7n);
    const started = Date.now();
    const response = await burn({ mint, priorityFee: 0.001, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.ok(Date.now() - started < t.config.operationDeadlineMs, 'answered before the deadline');
    assert.equal(await getLamports(t.chain, owner.address), 1_500_000n);
    assert.equal(await exists(ata), true);
  });
});

describe('money rule: fees never exceed what comes back unless the caller says so', () => {
  // One empty account returns 2,039,280 lamports; the fee is 5,000 + the priority fee.
  it('fee equal to the reclaim: allowed; net 0 to the lamport', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint } = await holding(owner.address, 0n);
    const response = await burn({ mint, priorityFee: Number(RENT_165 - 5_000n) / 1e9, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 200, response.body);
    const { details, message } = response.json();
    assert.ok(BigInt(details.feeLamports) <= RENT_165);
    assert.equal(details.netLamports, (RENT_165 - BigInt(details.feeLamports)).toString());
    assert.match(message, /net \+0(\.0+1)? SOL\.$|net \+0\.000000001 SOL\.$/);
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n + BigInt(details.netLamports));
  });

  it('fee one lamport above the reclaim: 400 FEE_EXCEEDS_RECLAIM with the net, nothing sent', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint, ata } = await holding(owner.address, 0n);
    const response = await burn({ mint, priorityFee: 0.01, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json();
    assert.equal(body.code, 'FEE_EXCEEDS_RECLAIM');
    assert.equal(body.reclaimLamports, RENT_165.toString());
    assert.ok(BigInt(body.netLamports) < 0n);
    assert.match(body.detail, /net −0\.00796/);
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n);
    assert.equal(await exists(ata), true);
  });

  it('with "allowNetLoss": true the same burn lands and says "net −…"; the owner loses exactly that', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint } = await holding(owner.address, 0n);
    const response = await burn({ mint, priorityFee: 0.01, userPrivateKey: owner.base58SecretKey, allowNetLoss: true });
    assert.equal(response.statusCode, 200, response.body);
    const { details, message } = response.json();
    const net = RENT_165 - BigInt(details.feeLamports);
    assert.ok(net < 0n);
    assert.equal(details.netLamports, net.toString());
    assert.ok(message.endsWith(`net −${(Number(-net) / 1e9).toFixed(9).replace(/0+$/, '')} SOL.`), message);
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n + net);
  });
});

describe('money rule: what can be closed is not blocked by what cannot', () => {
  it('one frozen account and one not: the free one is burned and closed, the frozen one skipped and listed', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint, ata } = await holding(owner.address, 5n, { freezable: true });
    const aux = await createAuxTokenAccount(t.chain, payer, owner.address, mint);
    await mintTokens(t.chain, payer, mint, aux, 3n);
    await freezeTokenAccount(t.chain, payer, aux, mint);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 200, response.body);
    const { details, message } = response.json();
    assert.deepEqual(details.closedAccounts, [ata]);
    assert.deepEqual(details.skippedAccounts.map((s: { address: string; code: string }) => [s.address, s.code]), [[aux, 'ACCOUNT_FROZEN']]);
    assert.equal(details.burnedAmount, '5');
    assert.match(message, /Skipped 1 account: Token account \w+ is frozen/);
    assert.equal(await exists(ata), false);
    assert.equal(await exists(aux), true);
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n + RENT_165 - 5_000n);
  });

  it('only frozen accounts: 400 ACCOUNT_FROZEN, nothing sent', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint, ata } = await holding(owner.address, 5n, { freezable: true });
    await freezeTokenAccount(t.chain, payer, ata, mint);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'ACCOUNT_FROZEN');
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n);
  });

  describe('a paused Token-2022 mint (Pausable)', () => {
    let owner: TestKey;
    let mint: Address;
    let full: Address;
    let empty: Address;
    before(async () => {
      owner = await ownerWith(1_000_000_000n);
      mint = await createMint2022(t.chain, payer, { decimals: 0, extensions: [extension('PausableConfig', { authority: payer.address, paused: false })] });
      full = await createAta(t.chain, payer, owner.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
      await mintTokens(t.chain, payer, mint, full, 9n, TOKEN_2022_PROGRAM_ADDRESS);
      // Accounts of a pausable mint carry the PausableAccount extension: a non-ATA account needs that size.
      const account = await generateKeyPairSigner();
      const space = BigInt(getTokenSize([extension('PausableAccount', {})]));
      const rent = await t.chain.rpc.getMinimumBalanceForRentExemption(space).send();
      await sendInstructions(t.chain, payer, [
        getCreateAccountInstruction({ payer, newAccount: account, lamports: rent, space, programAddress: TOKEN_2022_PROGRAM_ADDRESS }),
        getInitializeAccount3Instruction({ account: account.address, mint, owner: owner.address }),
      ]);
      empty = account.address;
      await sendInstructions(t.chain, payer, [getPauseInstruction({ mint, authority: payer })]);
    });

    it('relied on: the program refuses a burn while paused (MintPaused)', async () => {
      const ownerSigner = await createKeyPairSignerFromBytes(owner.secretKey);
      await assert.rejects(
        sendInstructions(t.chain, payer, [getBurnCheckedInstruction({ account: full, mint, authority: ownerSigner, amount: 1n, decimals: 0 })]),
        // Token-2022's TokenError::MintPaused is 67 (0x43).
        (error: Error) => /Custom program error: #67\b/.test(String((error.cause as Error | undefined)?.message)),
      );
    });

    it('the empty account is closed, the one with a balance skipped as MINT_PAUSED', async () => {
      const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
      assert.equal(response.statusCode, 200, response.body);
      const { details } = response.json();
      assert.deepEqual(details.closedAccounts, [empty]);
      assert.deepEqual(details.skippedAccounts.map((s: { code: string }) => s.code), ['MINT_PAUSED']);
      assert.equal(await exists(empty), false);
      assert.equal(await exists(full), true);
    });

    it('then only the account with a balance is left: 400 MINT_PAUSED, not TRANSACTION_REJECTED', async () => {
      const response = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'MINT_PAUSED');
    });
  });

  describe('a permissioned-burn Token-2022 mint (PermissionedBurn)', () => {
    it('relied on: the program refuses a plain BurnChecked by the owner', async () => {
      const owner = await createFundedSigner(t.chain);
      const mint = await createMint2022(t.chain, payer, { decimals: 0, extensions: [extension('PermissionedBurn', { authority: payer.address })] });
      const ata = await createAta(t.chain, payer, owner.signer.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
      await mintTokens(t.chain, payer, mint, ata, 4n, TOKEN_2022_PROGRAM_ADDRESS);
      await assert.rejects(
        sendInstructions(t.chain, owner.signer, [getBurnCheckedInstruction({ account: ata, mint, authority: owner.signer, amount: 4n, decimals: 0 })]),
        /simulation failed|custom program error|invalid instruction/i,
      );
    });

    it('a balance is 400 BURN_NOT_PERMITTED (decided before sending); an empty account of the same mint is closed', async () => {
      const owner = await ownerWith(1_000_000_000n);
      const mint = await createMint2022(t.chain, payer, { decimals: 0, extensions: [extension('PermissionedBurn', { authority: payer.address })] });
      const ata = await createAta(t.chain, payer, owner.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
      await mintTokens(t.chain, payer, mint, ata, 4n, TOKEN_2022_PROGRAM_ADDRESS);
      const refused = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().code, 'BURN_NOT_PERMITTED');
      assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n);

      const empty = await createAuxTokenAccount(t.chain, payer, owner.address, mint, TOKEN_2022_PROGRAM_ADDRESS);
      const partial = await burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey });
      assert.equal(partial.statusCode, 200, partial.body);
      assert.deepEqual(partial.json().details.closedAccounts, [empty]);
      assert.deepEqual(partial.json().details.skippedAccounts.map((s: { address: string }) => s.address), [ata]);
    });
  });
});

describe('money rule: a wallet address pasted as the key', () => {
  it('is 400 INVALID_PRIVATE_KEY saying it is an address, and the pasted value is never sent to the RPC', async () => {
    const wallet = await ownerWith(1_000_000_000n);
    const { mint } = await holding(wallet.address, 5n);
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: wallet.address });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json();
    assert.equal(body.code, 'INVALID_PRIVATE_KEY');
    assert.deepEqual(body.errors, [{ field: 'userPrivateKey', message: 'this is a wallet address, not a private key' }]);
    assert.ok(!response.body.includes(wallet.address), 'the pasted value is not echoed');
  });

  it('a real 32-byte seed of a wallet with tokens still works', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint } = await holding(owner.address, 5n);
    const seed = getBase58Decoder().decode(owner.secretKey.slice(0, 32));
    const response = await burn({ mint, priorityFee: 0, userPrivateKey: seed });
    assert.equal(response.statusCode, 200, response.body);
  });
});

describe('money rule: a burn and a reclaim of the same wallet at once never both pay for the same accounts', () => {
  it('they take turns: every transaction sent lands without error, and the owner gets exactly each account once, minus the fees', async () => {
    const owner = await ownerWith(1_000_000_000n);
    const { mint, ata } = await holding(owner.address, 0n);
    const aux = await createAuxTokenAccount(t.chain, payer, owner.address, mint);
    const other = await holding(owner.address, 0n);
    const [burned, reclaimed] = await Promise.all([
      burn({ mint, priorityFee: 0, userPrivateKey: owner.base58SecretKey }),
      t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee: 0 } }),
    ]);
    const answers = [burned, reclaimed].filter((r) => r.statusCode === 200).map((r) => r.json());
    assert.ok(answers.length >= 1, `${burned.body} ${reclaimed.body}`);
    for (const r of [burned, reclaimed]) if (r.statusCode !== 200) assert.match(r.json().code, /^(NO_TOKEN_ACCOUNT|NOTHING_TO_RECLAIM)$/);
    const transactions = answers.flatMap((a) => a.details.transactions);
    assert.ok(transactions.every((tx: { status: string }) => tx.status === 'success'), JSON.stringify(transactions));
    const closed = answers.flatMap((a) => a.details.closedAccounts).sort();
    assert.deepEqual(closed, [ata, aux, other.ata].sort());
    const fees = answers.reduce((sum, a) => sum + BigInt(a.details.feeLamports), 0n);
    assert.equal(await getLamports(t.chain, owner.address), 1_000_000_000n + 3n * RENT_165 - fees);
  });
});
