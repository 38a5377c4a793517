/**
 * Transaction verdicts (src/chain/verdicts.ts): the pure rules on their own, then the reading part
 * against the local chain (through the counting proxy, so the "one more status read before
 * expired" is seen on the wire).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import {
  EXPIRED_ERROR,
  expireUnknown,
  hasReachedCommitment,
  overallStatus,
  readSentVerdicts,
  reportOf,
  verdictOf,
} from '../../src/chain/verdicts.ts';
import { newAdapter, proxy, transfers, useEngineFixture } from './engineFixture.ts';

const status = (confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null, err: unknown = null) => ({ slot: 42n, err, confirmationStatus });

describe('verdicts: the pure rules', () => {
  it('a commitment is reached by itself and every higher one, never by a lower one or no status', () => {
    assert.equal(hasReachedCommitment(status('confirmed'), 'confirmed'), true);
    assert.equal(hasReachedCommitment(status('finalized'), 'confirmed'), true);
    assert.equal(hasReachedCommitment(status('processed'), 'confirmed'), false);
    assert.equal(hasReachedCommitment(status('confirmed'), 'finalized'), false);
    assert.equal(hasReachedCommitment(status(null), 'processed'), false);
    assert.equal(hasReachedCommitment(null, 'processed'), false);
  });

  it('a status: at the commitment it landed; failed on chain it landed at any commitment; below it is processed; none is unknown', () => {
    assert.deepEqual(verdictOf(status('confirmed'), 'confirmed'), { kind: 'landed', slot: 42n, err: null });
    assert.deepEqual(verdictOf(status('processed', 'AccountInUse'), 'finalized'), { kind: 'landed', slot: 42n, err: 'AccountInUse' });
    assert.deepEqual(verdictOf(status('confirmed'), 'finalized'), { kind: 'processed', slot: 42n });
    assert.deepEqual(verdictOf(null, 'confirmed'), { kind: 'unknown' });
  });

  it('reports: success, failed with the reason, pending; only what is in a block paid its fee', () => {
    assert.deepEqual(reportOf({ kind: 'landed', slot: 7n, err: null }), { status: 'success', slot: 7n, paidFee: true, error: null });
    const failed = reportOf({ kind: 'landed', slot: 7n, err: { InstructionError: [0, { Custom: 17 }] } });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.paidFee, true);
    assert.match(failed.error!, /AccountFrozen/);
    assert.deepEqual(reportOf({ kind: 'processed', slot: 7n }), { status: 'pending', slot: 7n, paidFee: true, error: null });
    assert.deepEqual(reportOf({ kind: 'unknown' }), { status: 'pending', slot: null, paidFee: false, error: null });
    assert.deepEqual(reportOf({ kind: 'expired' }), { status: 'failed', slot: null, paidFee: false, error: EXPIRED_ERROR });
    assert.deepEqual(reportOf({ kind: 'not-sent', reason: 'no RPC' }), { status: 'failed', slot: null, paidFee: false, error: 'no RPC' });
  });

  it('several transactions: failed if any failed, else pending if any is pending, else success', () => {
    assert.equal(overallStatus(['success', 'pending', 'failed']), 'failed');
    assert.equal(overallStatus(['success', 'pending']), 'pending');
    assert.equal(overallStatus(['success', 'success']), 'success');
    assert.equal(overallStatus([]), 'success');
  });
});

describe('verdicts: reading the chain', () => {
  useEngineFixture();

  it('a landed transaction is success; one the node never saw is pending until its blockhash expired, then expired after one more status read', { timeout: 600_000 }, async () => {
    const adapter = newAdapter();
    const destination = (await generateKeyPairSigner()).address;
    const [sent, neverSent] = await transfers(2, destination);
    assert.equal((await adapter.sendAndConfirm(sent!, Date.now() + 300_000)).kind, 'landed');

    const live = { signature: neverSent!.signature, lastValidBlockHeight: neverSent!.lastValidBlockHeight };
    const dead = { signature: neverSent!.signature, lastValidBlockHeight: 0n };
    proxy.reset();
    const verdicts = await readSentVerdicts(adapter, [{ signature: sent!.signature, lastValidBlockHeight: 0n }, live], Date.now() + 60_000);
    assert.equal(verdicts[0]!.kind, 'landed');
    assert.equal(reportOf(verdicts[0]!).status, 'success');
    assert.deepEqual(verdicts[1], { kind: 'unknown' });
    // One status read for both, one block height for the unknown one, and no second status read:
    // its blockhash can still land.
    assert.equal(proxy.count('getSignatureStatuses'), 1);
    assert.equal(proxy.count('getBlockHeight'), 1);

    proxy.reset();
    assert.deepEqual(await expireUnknown(adapter, [dead], Date.now() + 60_000), [{ kind: 'expired' }]);
    assert.equal(proxy.count('getSignatureStatuses'), 1, 'one more status read before declaring it expired');

    proxy.reset();
    assert.deepEqual(await expireUnknown(adapter, [], Date.now() + 60_000), []);
    assert.equal(proxy.requests.length, 0, 'nothing unknown: no read at all');
  });

  it('a transaction that landed after the first read is found by the second one, never declared expired', { timeout: 600_000 }, async () => {
    const adapter = newAdapter();
    const [tx] = await transfers(1, (await generateKeyPairSigner()).address);
    assert.equal((await adapter.sendAndConfirm(tx!, Date.now() + 300_000)).kind, 'landed');
    // Handed to expireUnknown as if the first read had not seen it, with its blockhash past.
    const [verdict] = await expireUnknown(adapter, [{ signature: tx!.signature, lastValidBlockHeight: 0n }], Date.now() + 60_000);
    assert.equal(verdict!.kind, 'landed');
  });
});
