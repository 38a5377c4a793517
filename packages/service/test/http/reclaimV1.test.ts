/**
 * A keyed reclaim in v1 transactions where the cluster's gate is active, and in legacy ones where
 * it is not, through the real app and the embedded chain, checked on chain to the lamport.
 *
 * Relied on (checked against the sources; see packages/localnet/test/v1Transactions.test.ts):
 * v1 takes 4,096 bytes and 64 addresses (solana-message `versions/v1/mod.rs`), and its config's
 * priority fee is a total in lamports, so a v1 transaction's fee is 5,000 per signature plus it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, getBase64Decoder, type Address, type Signature } from '@solana/kit';
import { AccountState, getMintEncoder, getTokenEncoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createTestApp, createTestKey, getLamports, rpcResult, startTestChain, type TestApp, type TestChain, type TestKey } from '@cinder/testkit';

/** `count` empty accounts of one new mint under `program`, written into the chain's state (a 165-byte account is valid under both token programs). */
async function writeEmptyAccounts(chain: TestChain, owner: Address, count: number, program: Address): Promise<void> {
  const base64 = getBase64Decoder();
  const set = (address: Address, lamports: number, data: Uint8Array) =>
    rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [address, { lamports, data: base64.decode(data), owner: program }]);
  const mint = (await generateKeyPairSigner()).address;
  await set(mint, 1_461_600, new Uint8Array(getMintEncoder().encode({ mintAuthority: null, supply: 0n, decimals: 6, isInitialized: true, freezeAuthority: null })));
  const data = new Uint8Array(getTokenEncoder().encode({ mint, owner, amount: 0n, delegate: null, state: AccountState.Initialized, isNative: null, delegatedAmount: 0n, closeAuthority: null }));
  for (let i = 0; i < count; i++) await set((await generateKeyPairSigner()).address, 2_039_280, data);
}

interface Landed {
  version: unknown;
  bytes: number;
  fee: bigint;
}

async function landedTransactions(chain: TestChain, signatures: readonly string[]): Promise<Landed[]> {
  return Promise.all(
    signatures.map(async (signature) => {
      const tx = await chain.rpc.getTransaction(signature as Signature, { maxSupportedTransactionVersion: 1, commitment: 'confirmed', encoding: 'base64' }).send();
      assert.ok(tx?.meta, `${signature} landed`);
      assert.equal(tx.meta.err, null);
      return { version: tx.version, bytes: Buffer.from(tx.transaction[0], 'base64').length, fee: tx.meta.fee };
    }),
  );
}

async function reclaim(t: TestApp, owner: TestKey, priorityFee: number, accounts: number) {
  const preview = await t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.address}&priorityFee=${priorityFee}` });
  assert.equal(preview.statusCode, 200, preview.body);
  const { summary } = preview.json();
  assert.equal(summary.close, accounts);
  const before = await getLamports(t.chain, owner.address);
  const answer = await t.app.inject({ method: 'POST', url: '/api/reclaim_rent', payload: { userPrivateKey: owner.base58SecretKey, priorityFee } });
  assert.equal(answer.statusCode, 200, answer.body);
  const body = answer.json();
  assert.equal(body.status, 'success', body.message);
  assert.equal(body.details.closedAccounts.length, accounts);
  // Preview and reclaim agree (same signer: Cinder), and the chain agrees with both, to the lamport.
  assert.equal(body.details.transactions.length, summary.transactions);
  assert.equal(body.details.netLamports, summary.netLamports);
  assert.equal(await getLamports(t.chain, owner.address), before + BigInt(body.details.netLamports));
  const landed = await landedTransactions(t.chain, body.details.signatures);
  assert.equal(landed.reduce((sum, l) => sum + l.fee, 0n), BigInt(body.details.feeLamports));
  return { body, landed };
}

describe('keyed reclaim, v1 gate active', () => {
  let t: TestApp;
  let owner: TestKey;
  before(async () => {
    t = await createTestApp();
    owner = await createTestKey();
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
    await writeEmptyAccounts(t.chain, owner.address, 100, TOKEN_PROGRAM_ADDRESS);
    await writeEmptyAccounts(t.chain, owner.address, 100, TOKEN_2022_PROGRAM_ADDRESS);
  });
  after(() => t.close());

  it('200 empty accounts (Token and Token-2022) close in at most 4 transactions, each v1 and at most 4,096 bytes', async () => {
    const { body, landed } = await reclaim(t, owner, 0.000012345, 200);
    assert.ok(landed.length <= 4, `${landed.length} transactions`);
    for (const l of landed) {
      assert.equal(l.version, 1);
      assert.ok(l.bytes <= 4096 && l.bytes > 1232, `${l.bytes} bytes`);
    }
    // v1's fee: each signature's 5,000 plus the priority fee as stated, shared to the lamport.
    assert.equal(BigInt(body.details.feeLamports), 5_000n * BigInt(landed.length) + 12_345n);
  });
});

describe('keyed reclaim, v1 gate off', () => {
  let t: TestApp;
  let chain: TestChain;
  let owner: TestKey;
  before(async () => {
    chain = await startTestChain({ v1Transactions: false });
    t = await createTestApp({}, { chain });
    owner = await createTestKey();
    await rpcResult(t.chain.localnet.rpcUrl, 'localnet_setAccount', [owner.address, { lamports: 50_000_000 }]);
    await writeEmptyAccounts(t.chain, owner.address, 60, TOKEN_PROGRAM_ADDRESS);
  });
  // The app does not close a chain it was given.
  after(async () => {
    await t.close();
    await chain.close();
  });

  it('falls back to legacy transactions within the 1,232-byte packet, as before the gate', async () => {
    const { landed } = await reclaim(t, owner, 0, 60);
    assert.equal(landed.length, 3);
    for (const l of landed) {
      assert.equal(l.version, 'legacy');
      assert.ok(l.bytes <= 1232);
    }
  });
});
