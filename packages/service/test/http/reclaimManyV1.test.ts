/**
 * The keyed many-owner reclaim in v1 transactions where the cluster's gate is active (Cinder signs,
 * so it takes every version), and in v0 where it is not, through the real app and the embedded
 * chain, checked on chain to the lamport.
 *
 * Relied on (checked against the sources; see packages/localnet/test/v1Transactions.test.ts and
 * src/plan/v1Format.ts): a v1 transaction takes 4,096 bytes, 64 addresses, 64 instructions and 12
 * signatures, and its fee is 5,000 lamports per signature plus the priority fee its config states.
 * 20 owners × 10 accounts is 220 addresses besides the fee payer, the destination and the token
 * programs, and a v1 transaction holds 64: at least 4 transactions, and the packing reaches 4.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, getBase58Decoder, type Address, type Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import {
  createFundedSigner,
  createTestApp,
  createTestKey,
  getLamports,
  startTestChain,
  writeEmptyTokenAccounts,
  type TestApp,
  type TestChain,
  type TestKey,
} from '@cinder/testkit';

const OWNERS = 20;
/** Per owner: this many empty accounts of each token program (10 in all). */
const PER_PROGRAM = 5;
const RENT = 2_039_280n;

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

async function emptyOwners(chain: TestChain): Promise<TestKey[]> {
  const owners = await Promise.all(Array.from({ length: OWNERS }, () => createTestKey()));
  for (const owner of owners) {
    await writeEmptyTokenAccounts(chain, owner.address, PER_PROGRAM, TOKEN_PROGRAM_ADDRESS);
    await writeEmptyTokenAccounts(chain, owner.address, PER_PROGRAM, TOKEN_2022_PROGRAM_ADDRESS);
  }
  return owners;
}

/** The keyed many-owner reclaim of every owner, checked to the lamport on chain; the landed transactions. */
async function reclaimAll(t: TestApp, owners: readonly TestKey[], priorityFee: number): Promise<{ landed: Landed[]; feeLamports: bigint }> {
  const feePayer = await createFundedSigner(t.chain, 1_000_000_000n);
  const destination: Address = (await generateKeyPairSigner()).address;
  const feePayerBefore = await getLamports(t.chain, feePayer.signer.address);
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/reclaim_rent',
    payload: { userPrivateKeys: owners.map((o) => o.base58SecretKey), feePayerPrivateKey: getBase58Decoder().decode(feePayer.secretKey), destination, priorityFee },
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.status, 'success', body.message);
  const { details } = body;
  const accounts = OWNERS * PER_PROGRAM * 2;
  assert.equal(details.transactions.flatMap((tx: { closedAccounts: string[] }) => tx.closedAccounts).length, accounts);
  const rents = RENT * BigInt(accounts);
  const landed = await landedTransactions(t.chain, details.signatures);
  const onChainFees = landed.reduce((sum, l) => sum + l.fee, 0n);
  // To the lamport: the destination holds exactly the rents, the fee payer paid exactly the fees the chain charged.
  assert.equal(await getLamports(t.chain, destination), rents);
  assert.equal(BigInt(details.feeLamports), onChainFees);
  assert.equal(await getLamports(t.chain, feePayer.signer.address), feePayerBefore - onChainFees);
  assert.equal(details.reclaimedLamports, rents.toString());
  assert.equal(details.netLamports, (rents - onChainFees).toString());
  for (const owner of owners) {
    const left = await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId: TOKEN_2022_PROGRAM_ADDRESS }, { encoding: 'base64' }).send();
    assert.equal(left.value.length, 0, `${owner.address} has no Token-2022 account left`);
  }
  return { landed, feeLamports: onChainFees };
}

describe('keyed many-owner reclaim, v1 gate active', () => {
  let t: TestApp;
  let owners: TestKey[];
  before(async () => {
    t = await createTestApp();
    owners = await emptyOwners(t.chain);
  });
  after(() => t.close());

  it('20 owners × 10 empty accounts (Token and Token-2022) close in at most 4 transactions, each version 1 on chain and at most 4,096 bytes', async () => {
    const { landed, feeLamports } = await reclaimAll(t, owners, 0.000012345);
    assert.ok(landed.length <= 4, `${landed.length} transactions`);
    for (const l of landed) {
      assert.equal(l.version, 1);
      assert.ok(l.bytes <= 4096 && l.bytes > 1232, `${l.bytes} bytes`);
    }
    // v1's fee: 5,000 per signature (the fee payer and each owner in the transaction) plus the
    // priority fee as stated, shared over the transactions to the lamport; 4 transactions carry
    // at least 20 owners' signatures and at most 23 (an owner split over two transactions signs both).
    const signatureFees = feeLamports - 12_345n;
    assert.equal(signatureFees % 5_000n, 0n);
    const signatures = signatureFees / 5_000n;
    assert.ok(signatures >= BigInt(OWNERS + landed.length) && signatures <= BigInt(OWNERS + 2 * landed.length - 1), `${signatures} signatures`);
  });
});

describe('keyed many-owner reclaim, v1 gate off', () => {
  let t: TestApp;
  let chain: TestChain;
  let owners: TestKey[];
  before(async () => {
    chain = await startTestChain({ v1Transactions: false });
    t = await createTestApp({}, { chain });
    owners = await emptyOwners(chain);
  });
  // The app does not close a chain it was given.
  after(async () => {
    await t.close();
    await chain.close();
  });

  it('falls back to version-0 transactions within the 1,232-byte packet, as before the gate', async () => {
    const { landed } = await reclaimAll(t, owners, 0);
    assert.ok(landed.length > 4, `${landed.length} transactions`);
    for (const l of landed) {
      assert.equal(l.version, 0);
      assert.ok(l.bytes <= 1232, `${l.bytes} bytes`);
    }
  });
});
