/**
 * One reading of a failed simulation for every path that simulates (src/operations/simulationFailure.ts):
 * the node's `InsufficientFundsForRent` (a fee payer left between 0 and the rent-exempt minimum
 * once the fee is taken) is the fee payer's failure, 400 INSUFFICIENT_SOL_FOR_FEE, on the
 * one-owner compile, the many-owner job and the relay alike. Each case is provoked on the
 * embedded chain (the real runtime's fee-payer rent check), and nothing is sent in any of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction } from '@solana-program/token';
import { createAta, createFundedSigner, createTestApp, createTestMint, getLamports, sendInstructions, startTestChain, type TestApp, type TestChain } from '@cinder/testkit';
import { startRpcProxy, type RpcProxy } from '../chain/rpcProxy.ts';
import { createEmptyWallets } from './manyFixture.ts';

/** Rent-exempt minimum of a 0-byte account: what a fee payer must keep after the fee (or end at 0). */
const RESERVE = 890_880n;
const BASE_FEE = 5_000n;

let chain: TestChain;
let proxy: RpcProxy;
let t: TestApp;
let payer: KeyPairSigner;
let mint: Address;

before(async () => {
  chain = await startTestChain();
  proxy = await startRpcProxy(chain.localnet.rpcUrl);
  t = await createTestApp({}, { chain, chainAdapter: { rpcUrl: proxy.url } });
  payer = (await createFundedSigner(t.chain, 100_000_000_000n)).signer;
  mint = await createTestMint(t.chain, payer, { decimals: 0 });
});
after(async () => {
  await t?.close();
  await proxy?.close();
  await chain?.close();
});

const exists = async (account: Address) => (await t.chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send()).value !== null;

/** An owner holding `lamports` and one empty token account of `mint`. */
async function ownerWithEmptyAccount(lamports: bigint): Promise<{ owner: KeyPairSigner; ata: Address }> {
  const { signer: owner } = await createFundedSigner(t.chain, lamports);
  return { owner, ata: await createAta(t.chain, payer, owner.address, mint) };
}

describe('InsufficientFundsForRent in a simulation: the fee payer cannot pay, on every path', () => {
  it('one-owner compile (prepare of a burn): 400 INSUFFICIENT_SOL_FOR_FEE, 1 lamport missing', async () => {
    // The pre-check passes (it holds more than the base fee); the runtime refuses the fee payer's
    // balance after the fee, one lamport under the reserve, at simulation.
    const { owner, ata } = await ownerWithEmptyAccount(RESERVE + BASE_FEE - 1n);
    const response = await t.app.inject({ method: 'POST', url: '/api/burn_tokens/prepare', payload: { owner: owner.address, mint, priorityFee: 0 } });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.equal(response.json().missingLamports, '1');
    assert.equal(await exists(ata), true);
  });

  it('many-owner job: a fee payer drained below the reserve between the read and the simulation is INSUFFICIENT_SOL_FOR_FEE, not a rejected owner', async () => {
    const wallets = await createEmptyWallets(t.chain, payer, 2, [{ mint }]);
    const feePayer = (await createFundedSigner(t.chain, 1_000_000_000n)).signer;
    const destination = (await generateKeyPairSigner()).address;
    // Left with the reserve + 4,999: the job's fee (two signatures, 10,000) leaves it under the reserve.
    const left = RESERVE + BASE_FEE - 1n;
    let drained = false;
    proxy.beforeForward(async (methods) => {
      if (drained || !methods.includes('simulateTransaction')) return;
      drained = true;
      const balance = await getLamports(t.chain, feePayer.address);
      await sendInstructions(t.chain, feePayer, [getTransferSolInstruction({ source: feePayer, destination: payer.address, amount: balance - BASE_FEE - left })]);
    });
    const response = await t.app
      .inject({
        method: 'POST',
        url: '/api/reclaim_rent/prepare',
        payload: { owners: wallets.map((w) => w.signer.address), feePayer: feePayer.address, destination, priorityFee: 0 },
      })
      .finally(() => proxy.beforeForward(null));
    assert.ok(drained, 'the fee payer was drained before the first simulation');
    assert.equal(await getLamports(t.chain, feePayer.address), left);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.equal(response.json().errors[0].field, 'feePayer');
    for (const w of wallets) for (const account of w.accounts) assert.equal(await exists(account), true);
    assert.equal(await getLamports(t.chain, destination), 0n);
  });

  it('relay: a signed close whose fee payer would be left under the reserve is INSUFFICIENT_SOL_FOR_FEE naming the transaction, never sent', async () => {
    const { owner, ata } = await ownerWithEmptyAccount(RESERVE + BASE_FEE - 1n);
    const recent = (await t.chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value;
    const signed = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayerSigner(owner, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(recent, m),
        (m) => appendTransactionMessageInstructions([getCloseAccountInstruction({ account: ata, destination: owner.address, owner })], m),
      ),
    );
    const response = await t.app.inject({ method: 'POST', url: '/api/transactions', payload: { transactions: [getBase64EncodedWireTransaction(signed)] } });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json();
    assert.equal(body.code, 'INSUFFICIENT_SOL_FOR_FEE');
    assert.equal(body.errors[0].field, 'transactions.0');
    assert.match(body.detail, new RegExp(`${owner.address} does not hold enough SOL`));
    assert.equal(await exists(ata), true);
    assert.equal(await getLamports(t.chain, owner.address), RESERVE + BASE_FEE - 1n);
  });
});
