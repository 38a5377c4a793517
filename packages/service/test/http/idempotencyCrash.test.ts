/** Crash and retry with the in-memory store (journal under STATE_DIR); see crashHarness.ts. */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { rpcResult } from '@cinder/testkit';
import { assertRecovered, burn, burnAndCrash, chain, chainState, createHolder, dirs, kill9, newKey, restart, sleep, startServer } from './crashHarness.ts';

describe('a retry after kill -9, in-memory store (journal under STATE_DIR)', () => {
  it('answers with the signature that landed and its status; a fresh STATE_DIR would have answered NO_TOKEN_ACCOUNT', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cinder-crash-'));
    dirs.push(stateDir);
    const env = { STATE_DIR: stateDir, BURN_DEADLINE_MS: '60000' };
    const h = await createHolder();
    const key = newKey();
    const landed = await burnAndCrash(await startServer(env), h, key);

    // The journal and the generated secret are private to the service's user.
    assert.equal((await stat(join(stateDir, 'server-secret'))).mode & 0o777, 0o600);
    // The journal is the cluster's: under the genesis hash of the chain the server talks to.
    const journalDir = join(stateDir, 'idempotency', await chain.rpc.getGenesisHash().send());
    const journals = await readdir(journalDir);
    assert.equal(journals.length, 1);
    const journal = await readFile(join(journalDir, journals[0]!), 'utf8');
    assert.ok(journal.includes(landed.signature), 'the signature was journaled before it was sent');
    assert.ok(!journal.includes(h.key) && !journal.includes(key), 'neither the private key nor the Idempotency-Key is journaled');

    // Without the journal (what the memory store did before): the burn runs again.
    const freshDir = await mkdtemp(join(tmpdir(), 'cinder-crash-'));
    dirs.push(freshDir);
    const amnesiac = await restart({ stateDir: freshDir, serverSecret: undefined });
    const forgotten = await burn(amnesiac, h, key);
    assert.equal(forgotten.status, 400);
    assert.equal(((await forgotten.json()) as { code: string }).code, 'NO_TOKEN_ACCOUNT');

    // No SERVER_SECRET: the new instance reads the secret the dead one generated in STATE_DIR.
    const restarted = await restart({ stateDir, serverSecret: undefined });
    await assertRecovered(restarted, h, key, landed);
    // The dead instance's journal was taken over by the new one.
    const after = await readdir(journalDir);
    assert.equal(after.length, 1);
    assert.notEqual(after[0], journals[0]);
  });
});

describe('a retry after kill -9, when what was sent never landed', () => {
  it('answers failed (expired, nothing landed) with the signature once it can no longer land; a new key burns', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cinder-crash-'));
    dirs.push(stateDir);
    const env = { STATE_DIR: stateDir, BURN_DEADLINE_MS: '60000' };
    const h = await createHolder();
    const before = await chainState(h);
    const key = newKey();
    const server = await startServer(env);
    // Every send is dropped by the "leader": nothing can land.
    await rpcResult(chain.localnet.rpcUrl, 'localnet_setFaults', [{ dropSends: 1000 }]);
    const lost = burn(server, h, key).catch(() => undefined);
    for (let i = 0; (await rpcResult<number>(chain.localnet.rpcUrl, 'localnet_getDroppedSends', [])) === 0; i++) {
      if (i > 1500) throw new Error(`the burn was never sent:\n${server.output()}`);
      await sleep(20);
    }
    await kill9(server);
    await lost;
    await rpcResult(chain.localnet.rpcUrl, 'localnet_clearFaults', []);

    const restarted = await restart({ stateDir, serverSecret: undefined });
    const stillPending = await burn(restarted, h, key);
    assert.equal(stillPending.status, 200);
    const pendingBody = (await stillPending.json()) as { status: string; transactionId: string; message: string };
    assert.equal(pendingBody.status, 'pending', 'its blockhash is still valid: it could land');
    assert.match(pendingBody.message, /has not landed yet.*do not send the burn again/);

    // Past the blockhash's lastValidBlockHeight (150 blocks).
    await rpcResult(chain.localnet.rpcUrl, 'localnet_warpSlots', [300]);
    const expired = await burn(restarted, h, key);
    const expiredBody = (await expired.json()) as { status: string; transactionId: string; message: string; details: { transactions: { status: string; slot: number | null }[] } };
    assert.equal(expiredBody.status, 'failed');
    assert.equal(expiredBody.transactionId, pendingBody.transactionId);
    assert.deepEqual(expiredBody.details.transactions.map((t) => [t.status, t.slot]), [['failed', null]]);
    assert.match(expiredBody.message, /blockhash expired before it landed; it did nothing\. Nothing landed: send the burn again with a new Idempotency-Key\./);
    const after = await chainState(h);
    assert.deepEqual({ owner: after.owner, supply: after.supply, transactions: after.transactions }, { owner: before.owner, supply: before.supply, transactions: before.transactions }, 'nothing landed, no fee');

    const fresh = await burn(restarted, h, newKey());
    assert.equal(fresh.status, 200);
    assert.equal(((await fresh.json()) as { status: string }).status, 'success');
  });
});

