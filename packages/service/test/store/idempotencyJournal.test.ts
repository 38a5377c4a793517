/**
 * The journal of the in-memory idempotency store, on a real directory: what a restart recovers
 * (sent signatures and answers, not expired, not dropped), whose files it takes over (its own
 * earlier ones and those of dead processes, never a running instance's), torn lines, compaction;
 * and the secret generated under STATE_DIR when SERVER_SECRET is unset.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadOrCreateStateSecret, openIdempotencyJournal, type JournalEntry } from '../../src/store/idempotencyJournal.ts';
import { createMemoryIdempotencyStore } from '../../src/store/idempotencyStore.ts';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
async function newDir() {
  const dir = await mkdtemp(join(tmpdir(), 'cinder-journal-'));
  dirs.push(dir);
  return dir;
}

const DAY = 24 * 60 * 60 * 1000;
/** Genesis hashes of two clusters (the journal's directory is the cluster's). */
const CLUSTER = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
const OTHER_CLUSTER = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
const sent = { signatures: ['5h3sig'], lastValidBlockHeight: '1234' };
const response = { status: 200, contentType: 'application/json; charset=utf-8', body: '{"transactionId":"5h3sig"}' };

describe('memory store + journal across a restart', () => {
  it('sent signatures and answers come back; pending records without signatures and dropped ones do not', async () => {
    const dir = await newDir();
    const journal = await openIdempotencyJournal(dir, CLUSTER);
    const store = createMemoryIdempotencyStore({ journal });

    const sentOnly = await store.begin('k-sent', 'fp1', 60_000);
    assert.equal(sentOnly.kind, 'started');
    if (sentOnly.kind === 'started') assert.equal(await store.markSent('k-sent', sentOnly.token, 'fp1', sent, DAY), 'marked');

    const finished = await store.begin('k-done', 'fp2', 60_000);
    if (finished.kind === 'started') {
      await store.markSent('k-done', finished.token, 'fp2', sent, DAY);
      await store.complete('k-done', finished.token, 'fp2', response, DAY);
    }

    const notSent = await store.begin('k-pending', 'fp3', 60_000);
    assert.equal(notSent.kind, 'started');

    const dropped = await store.begin('k-dropped', 'fp4', 60_000);
    if (dropped.kind === 'started') {
      await store.markSent('k-dropped', dropped.token, 'fp4', sent, DAY);
      await store.release('k-dropped', dropped.token);
    }
    // No close: a crash.

    const restarted = createMemoryIdempotencyStore({ journal: await openIdempotencyJournal(dir, CLUSTER) });
    assert.deepEqual(await restarted.begin('k-sent', 'fp1', 60_000), { kind: 'sent', sent });
    assert.deepEqual(await restarted.begin('k-sent', 'other body', 60_000), { kind: 'mismatch' });
    assert.deepEqual(await restarted.begin('k-done', 'fp2', 60_000), { kind: 'replay', response });
    assert.equal((await restarted.begin('k-pending', 'fp3', 60_000)).kind, 'started', 'nothing was sent: the key is free');
    assert.equal((await restarted.begin('k-dropped', 'fp4', 60_000)).kind, 'started');
  });

  it('markSent refuses ("lost") when another request owns the key, and journals nothing then', async () => {
    const dir = await newDir();
    const store = createMemoryIdempotencyStore({ journal: await openIdempotencyJournal(dir, CLUSTER) });
    const first = await store.begin('k', 'fp', 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await store.begin('k', 'fp', 60_000);
    assert.equal(second.kind, 'started', 'the first one\'s pending record expired');
    if (first.kind === 'started') assert.equal(await store.markSent('k', first.token, 'fp', sent, DAY), 'lost');
    const files = await readdir(join(dir, 'idempotency', CLUSTER));
    assert.equal(await readFile(join(dir, 'idempotency', CLUSTER, files[0]!), 'utf8'), '');
  });
});

describe('journal files', () => {
  const line = (entry: JournalEntry) => JSON.stringify(entry) + '\n';

  it('takes over the files of dead processes, leaves a running one\'s alone, skips torn lines and expired entries', async () => {
    const dir = await newDir();
    const journals = join(dir, 'idempotency', CLUSTER);
    const live = Date.now() + DAY;
    await openIdempotencyJournal(dir, CLUSTER); // creates the directory (and a file of this process)
    // A pid that cannot exist (above pid_max), i.e. a process that died.
    await writeFile(
      join(journals, '99999999-1.ndjson'),
      line({ k: 'a', fp: 'fa', sent, exp: live }) + line({ k: 'old', fp: 'fo', sent, exp: Date.now() - 1 }) + '{"k":"torn","fp',
    );
    // The parent of this test process is running: its file is not ours to take.
    const running = `${process.ppid}-1.ndjson`;
    await writeFile(join(journals, running), line({ k: 'b', fp: 'fb', sent, exp: live }));

    const journal = await openIdempotencyJournal(dir, CLUSTER);
    assert.deepEqual(journal.recovered.map((e) => e.k).sort(), ['a']);
    const files = (await readdir(journals)).sort();
    assert.ok(files.includes(running), 'a running instance\'s file is left alone');
    assert.ok(!files.includes('99999999-1.ndjson'), 'the dead instance\'s file was taken over');
    assert.equal(files.length, 2);
    // The recovered entry now lives in the new file, so it survives the next crash too.
    const again = await openIdempotencyJournal(dir, CLUSTER);
    assert.deepEqual(again.recovered.map((e) => e.k), ['a']);
  });

  it('reads only its own cluster\'s records: never another cluster\'s, nor files of no cluster', async () => {
    const dir = await newDir();
    const journals = join(dir, 'idempotency');
    const live = Date.now() + DAY;
    await openIdempotencyJournal(dir, OTHER_CLUSTER);
    // A dead instance of the other cluster, and one that wrote before records were scoped by cluster.
    await writeFile(join(journals, OTHER_CLUSTER, '99999999-1.ndjson'), line({ k: 'other', fp: 'fo', sent, exp: live }));
    await writeFile(join(journals, '99999999-2.ndjson'), line({ k: 'unscoped', fp: 'fu', sent, exp: live }));

    const journal = await openIdempotencyJournal(dir, CLUSTER);
    assert.deepEqual(journal.recovered, [], 'nothing of another cluster is recovered');
    // Left where they are, for an instance of their own cluster; nothing ever reads the unscoped one.
    assert.ok((await readdir(join(journals, OTHER_CLUSTER))).includes('99999999-1.ndjson'));
    assert.ok((await readdir(journals)).includes('99999999-2.ndjson'));
    const other = await openIdempotencyJournal(dir, OTHER_CLUSTER);
    assert.deepEqual(other.recovered.map((e) => e.k), ['other']);
    await assert.rejects(openIdempotencyJournal(dir, '../escape'), /genesis hash/);
  });

  it('compaction keeps exactly the live records', async () => {
    const dir = await newDir();
    const journal = await openIdempotencyJournal(dir, CLUSTER);
    for (let i = 0; i < 5; i++) await journal.append({ k: `k${i}`, fp: 'f', sent, exp: Date.now() + DAY });
    assert.equal(journal.linesSinceCompaction, 5);
    await journal.compact([{ k: 'k4', fp: 'f', sent, exp: Date.now() + DAY }]);
    assert.equal(journal.linesSinceCompaction, 0);
    await journal.append({ k: 'k5', fp: 'f', response, exp: Date.now() + DAY });
    const reopened = await openIdempotencyJournal(dir, CLUSTER);
    assert.deepEqual(reopened.recovered.map((e) => e.k), ['k4', 'k5']);
  });
});

describe('the secret under STATE_DIR (SERVER_SECRET unset, no Redis)', () => {
  it('is made once, kept with mode 0600, and the same after a restart', async () => {
    const dir = await newDir();
    const first = await loadOrCreateStateSecret(dir);
    assert.ok(first.length >= 32);
    assert.equal((await stat(join(dir, 'server-secret'))).mode & 0o777, 0o600);
    assert.equal(await loadOrCreateStateSecret(dir), first);
    const [a, b] = await Promise.all([loadOrCreateStateSecret(await newDir()), loadOrCreateStateSecret(await newDir())]);
    assert.notEqual(a, b, 'random per directory');
  });
});
