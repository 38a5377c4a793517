/**
 * "A relay of prepared transactions is not counted again" knows a prepared message by what Cinder
 * prepared (src/plan/messageIdentity.ts), not by its exact bytes: a wallet that changed the compute
 * budget before signing (as many do, adding their own priority fee) relays it without spending the
 * burn budget again, and it lands. The embedded chain runs the real programs; the owner pays.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  signTransaction,
  type TransactionMessageBytes,
} from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import { createTestApp, createTokenHolder, getLamports, type TestApp } from '@cinder/testkit';

let t: TestApp;
before(async () => {
  t = await createTestApp({ rateLimit: { burnPerMin: 1, generatePerMin: 60, walletsPerMin: 1000 }, rateLimitStatusPerMin: 100 });
});
after(() => t.close());

const CLIENT = '10.77.0.1';
const post = (url: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url, remoteAddress: CLIENT, headers: { 'content-type': 'application/json' }, payload: payload as Record<string, unknown> });

describe('the prepared-relay discount after a wallet changed the compute budget', () => {
  it('a prepared burn whose SetComputeUnitPrice the wallet raised is relayed without spending the burn budget, and lands', async () => {
    const holder = await createTokenHolder(t.chain, { amount: 3n });
    const prepared = await post('/api/burn_tokens/prepare', { mint: holder.mint, owner: holder.signer.address, priorityFee: 0 });
    assert.equal(prepared.statusCode, 200, prepared.body);
    assert.equal(prepared.headers['ratelimit-remaining'], '0', 'the prepare spent the only burn request of the minute');

    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(prepared.json().transactions[0]));
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    assert.ok(message.version === 'legacy');
    const budget = message.staticAccounts.indexOf(COMPUTE_BUDGET_PROGRAM_ADDRESS);
    const price = new Uint8Array(9);
    price[0] = 3; // SetComputeUnitPrice, u64 micro-lamports
    new DataView(price.buffer).setBigUint64(1, 1_000n, true);
    const instructions = message.instructions.flatMap((instruction) =>
      instruction.programAddressIndex === budget && instruction.data?.[0] === 3 ? [] : [instruction],
    );
    instructions.splice(1, 0, { programAddressIndex: budget, data: price });
    const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...message, instructions }) as TransactionMessageBytes;
    assert.notDeepEqual(new Uint8Array(messageBytes), new Uint8Array(transaction.messageBytes), 'the wallet changed the bytes');
    const signed = await signTransaction([holder.signer.keyPair], { messageBytes, signatures: transaction.signatures });

    const relayed = await post('/api/transactions', { transactions: [getBase64EncodedWireTransaction(signed)] });
    assert.equal(relayed.statusCode, 200, relayed.body);
    assert.equal(relayed.json().status, 'success', relayed.json().message);
    assert.equal(relayed.headers['ratelimit-limit'], '100', 'counted against the general budget only');
    assert.equal(await getLamports(t.chain, holder.ata), 0n, 'the burn landed and closed the account');
  });
});
