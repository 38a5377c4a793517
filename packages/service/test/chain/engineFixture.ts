/**
 * The landing engine's test fixture, shared by its test files: the local chain (400 ms slots)
 * behind a counting proxy, a funded payer, faults and counts cleared before each test, an adapter
 * pointed at the proxy, and a builder of distinct signed transfers.
 */
import { after, before, beforeEach } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createChainAdapter } from '../../src/chain/chainAdapter.ts';
import type { ChainAdapter, SignedTransaction } from '../../src/chain/types.ts';
import { rpcResult } from '@cinder/testkit';
import { createFundedSigner, startTestChain, type TestChain } from '@cinder/testkit';
import { startRpcProxy, type RpcProxy } from './rpcProxy.ts';

// Live bindings: importers see the values the hooks below assign.
export let chain: TestChain;
export let proxy: RpcProxy;
export let payer: KeyPairSigner;

/** Registers the fixture's hooks in the calling test file. */
export function useEngineFixture(options: { slotIntervalMs?: number } = {}): void {
  before(async () => {
    // 400 ms slots, as a real cluster, unless the file asks for a chain whose slots move only with
    // warps (0): then no blockhash expires however slowly a loaded machine signs and sends.
    chain = await startTestChain({ slotIntervalMs: options.slotIntervalMs ?? 400 });
    proxy = await startRpcProxy(chain.localnet.rpcUrl);
    ({ signer: payer } = await createFundedSigner(chain, 100_000_000_000n));
  });
  beforeEach(async () => {
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);
    proxy.reset();
  });
  after(async () => {
    await proxy.close();
    await chain.close();
  });
}

export const newAdapter = (overrides: Partial<Parameters<typeof createChainAdapter>[0]> = {}): ChainAdapter =>
  createChainAdapter({ rpcUrl: proxy.url, commitment: 'confirmed', pollIntervalMs: 50, rebroadcastIntervalMs: 300, ...overrides });

/** `count` signed transfers from the payer (distinct amounts, so distinct signatures), with the chain's current blockhash. */
export async function transfers(count: number, destination: Address): Promise<SignedTransaction[]> {
  const { value: lifetime } = await chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination, amount: 1_000_000n + BigInt(i) })], m),
      );
      const signed = await signTransactionMessageWithSigners(message);
      return {
        wire: getBase64EncodedWireTransaction(signed),
        signature: getSignatureFromTransaction(signed),
        lastValidBlockHeight: lifetime.lastValidBlockHeight,
      };
    }),
  );
}
