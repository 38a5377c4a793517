/**
 * `cinder reclaim --keys-file F --fee-payer K --destination A` (many wallets in one job), the real binary against
 * the real app and the embedded chain, to the lamport: 12 wallets with 0 SOL and 2 empty accounts
 * each are reclaimed to one destination, the fee payer paying exactly the fees of the transactions
 * that landed; keys are signed here and never printed.
 *
 * The interruption: the first run goes through a proxy that forwards every request to the app but,
 * on the first relay, forwards the first transaction only and then breaks the connection, and every
 * one after it (what a killed process or a lost network leaves: one transaction landed, the others
 * signed and recorded but not received), and keeps the whole relay request, to deliver it late. The second run,
 * straight to the app, settles what the state file holds (relaying again what the service never
 * received) and prepares again only what remains; then the late copy of the first relay arrives.
 * Every account is closed once, no transaction failed on the chain (which would cost a fee for
 * nothing), and the fee payer paid exactly the fees of what landed.
 *
 * Relied on (checked here against the chain): each transaction costs 5,000 lamports per signature
 * (the fee payer's and each owner's in it) with no priority fee.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { createFundedSigner, createTestMint, getLamports } from '@cinder/testkit';
import { createTestKey, type TestKey } from '@cinder/testkit';
import { emptyAccounts, lamportsOf, stillOpen } from '../sdk/reclaimFixture.ts';
import { cinder, dir, secrets, t, url, useCliApp } from './cliFixture.ts';

useCliApp('cinder-reclaim-many-', { timeoutMs: 300_000 });

interface Job {
  owners: TestKey[];
  accounts: Address[];
  feePayer: Address;
  destination: Address;
  args: string[];
}

/** 12 wallets with no SOL and 2 empty accounts each, a funded fee payer (key file) and an empty destination. */
async function job(name: string): Promise<Job> {
  const { signer: payer } = await createFundedSigner(t.chain);
  const mint = await createTestMint(t.chain, payer, { decimals: 6 });
  const owners = await Promise.all(Array.from({ length: 12 }, () => createTestKey()));
  const accounts: Address[] = [];
  for (const owner of owners) accounts.push(...(await emptyAccounts(t.chain, payer, owner.address, mint, 2)));
  const { signer: feePayer, secretKey } = await createFundedSigner(t.chain, 1_000_000_000n);
  const destination = (await createTestKey()).address;
  secrets.push(...owners.map((o) => o.base58SecretKey), JSON.stringify([...secretKey]));
  // Keys in two of the accepted forms; the fee payer's as a solana-keygen file.
  await writeFile(join(dir, `${name}.keys`), owners.map((o, i) => (i % 2 === 0 ? o.base58SecretKey : o.keygenJson)).join('\n') + '\n', { mode: 0o600 });
  await writeFile(join(dir, `${name}.payer.json`), JSON.stringify([...secretKey]), { mode: 0o600 });
  return { owners, accounts, feePayer: feePayer.address, destination, args: ['reclaim', '--keys-file', `${name}.keys`, '--fee-payer', `${name}.payer.json`, '--destination', destination] };
}

interface StateFile {
  transactions: { signature: string; owners: string[]; closedAccounts: string[]; feeLamports: string; lastValidBlockHeight: string; status: string }[];
}
const stateOf = async (name: string) => JSON.parse(await readFile(join(dir, `${name}.keys.reclaim-state.json`), 'utf8')) as StateFile;

/**
 * Forwards to the app; on the first relay, forwards only its first transaction, then breaks the
 * connection, keeping the request (`held`), and every connection after it: the command cannot
 * follow up what it sent (it would otherwise learn that the service never received the rest, and relay it again).
 */
async function interruptingProxy(): Promise<{ url: string; held: () => string | undefined; close(): Promise<void> }> {
  let relays = 0;
  let held: string | undefined;
  const server: Server = createServer(async (req, res) => {
    if (held !== undefined) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: string | undefined = chunks.length > 0 ? Buffer.concat(chunks).toString() : undefined;
    const cut = req.method === 'POST' && req.url === '/api/transactions' && relays++ === 0;
    if (cut) {
      held = body;
      const relay = JSON.parse(body!) as { transactions: string[]; relayToken?: string };
      body = JSON.stringify({ ...relay, transactions: relay.transactions.slice(0, 1) });
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>;
    const answer = await fetch(`${url}${req.url}`, { method: req.method!, headers, body });
    const text = await answer.text();
    if (cut) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(text);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

const FEE_PER_SIGNATURE = 5_000n;
const feeOf = (t: StateFile['transactions'][number]) => FEE_PER_SIGNATURE * BigInt(1 + t.owners.length);

describe('cinder reclaim --keys-file --fee-payer --destination', () => {
  it('12 wallets with 0 SOL: a preview that sends nothing, then one job in at most 4 transactions, to the lamport', async (test) => {
    const j = await job('one');
    const rents = await lamportsOf(t.chain, j.accounts);
    const payerBefore = await getLamports(t.chain, j.feePayer);

    const preview = await cinder(j.args, { url });
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /^12 wallets: (\S+) SOL to \S+ in (\d+) transactions?; fees (\S+) SOL paid by/m);
    assert.match(preview.stdout, /Nothing was sent\. To reclaim these wallets, run the same command with --yes\./);
    assert.equal((await stillOpen(t.chain, j.accounts)).length, 24, 'nothing was sent');

    const run = await cinder([...j.args, '--yes'], { url });
    assert.equal(run.code, 0, run.stderr);
    const state = await stateOf('one');
    assert.ok(state.transactions.length <= 4, `${state.transactions.length} transactions`);
    assert.ok(state.transactions.every((tx) => tx.status === 'success'));
    assert.deepEqual(await stillOpen(t.chain, j.accounts), []);
    assert.equal(await getLamports(t.chain, j.destination), rents, 'every rent at the destination');
    const fees = state.transactions.reduce((s, tx) => s + feeOf(tx), 0n);
    assert.equal(state.transactions.reduce((s, tx) => s + BigInt(tx.feeLamports), 0n), fees);
    assert.equal(payerBefore - (await getLamports(t.chain, j.feePayer)), fees, 'the fee payer paid exactly the fees');
    test.diagnostic(`12 wallets, 24 accounts: ${state.transactions.length} transactions, ${rents} lamports to the destination, ${fees} lamports of fees`);
    for (const owner of j.owners) assert.equal(await getLamports(t.chain, owner.address), 0n);
    assert.match(run.stdout, new RegExp(`^${state.transactions.length} transactions? landed in all \\(24 accounts closed`, 'm'));

    const again = await cinder([...j.args, '--yes'], { url });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /nothing left to reclaim/);
    assert.equal(await getLamports(t.chain, j.destination), rents);
  });

  it('an interrupted run resumes: what landed is not prepared again, and nothing is paid twice', async () => {
    const j = await job('two');
    const rents = await lamportsOf(t.chain, j.accounts);
    const payerBefore = await getLamports(t.chain, j.feePayer);

    const proxy = await interruptingProxy();
    let interrupted;
    try {
      interrupted = await cinder([...j.args, '--yes'], { url: proxy.url });
    } finally {
      await proxy.close();
    }
    assert.equal(interrupted.code, 1, interrupted.stdout + interrupted.stderr);
    assert.match(interrupted.stderr, /NETWORK_ERROR/);
    const first = await stateOf('two');
    assert.ok(first.transactions.length >= 2, 'the job needs several transactions');
    assert.ok(first.transactions.every((tx) => tx.status === 'sent'), 'recorded before the relay, outcome unknown');
    const open = await stillOpen(t.chain, j.accounts);
    assert.equal(open.length, 24 - first.transactions[0]!.closedAccounts.length, 'the first transaction landed, no other');

    const resumed = await cinder([...j.args, '--yes'], { url });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, new RegExp(`^Resuming: waiting for the outcome of ${first.transactions.length} transactions of the previous run$`, 'm'));
    const settled = (await stateOf('two')).transactions;
    assert.deepEqual(settled.slice(0, first.transactions.length).map((tx) => tx.signature), first.transactions.map((tx) => tx.signature));
    assert.equal(settled[0]!.status, 'success');
    // The others were relayed again, the same bytes; only one whose blockhash had expired (a slow resume) is dropped and prepared again.
    const landed = settled.filter((tx) => tx.status === 'success');
    assert.ok(settled.every((tx) => tx.status === 'success' || tx.status === 'dropped'), settled.map((tx) => tx.status).join());
    const height = await t.chain.rpc.getBlockHeight().send();
    for (const tx of settled.filter((d) => d.status === 'dropped')) {
      assert.ok(height > BigInt(tx.lastValidBlockHeight), `${tx.signature} was dropped while it could still land`);
    }
    const owners = landed.flatMap((tx) => tx.owners);
    assert.equal(new Set(owners).size, owners.length, 'no owner in two transactions that landed');

    // The late copy of the interrupted relay: the same signatures, answered by signature; nothing lands twice.
    const late = await fetch(`${url}/api/transactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: proxy.held()! });
    assert.ok(late.status === 200 || late.status === 400, `late copy answered ${late.status}`);

    assert.deepEqual(await stillOpen(t.chain, j.accounts), []);
    assert.equal(await getLamports(t.chain, j.destination), rents, 'every rent at the destination, once');
    const statuses = await t.chain.rpc.getSignatureStatuses(settled.map((tx) => tx.signature as Signature)).send();
    assert.ok(statuses.value.every((st, i) => (st === null) === (settled[i]!.status === 'dropped') && (st === null || st.err === null)), 'no transaction failed on the chain');
    const fees = landed.reduce((s, tx) => s + feeOf(tx), 0n);
    assert.equal(payerBefore - (await getLamports(t.chain, j.feePayer)), fees, 'the fee payer paid for what landed, nothing twice');
  });

  it('usage: --fee-payer and --destination go together, and a bad line of the keys file stops the job before anything is sent', async () => {
    const j = await job('three');
    const cases: [string[], RegExp][] = [
      [['reclaim', '--keys-file', 'three.keys', '--fee-payer', 'three.payer.json'], /--fee-payer goes with --destination ADDRESS/],
      [['reclaim', '--keys-file', 'three.keys', '--destination', j.destination], /--destination goes with --fee-payer KEYFILE/],
      [[...j.args, '--burn', j.destination], /--burn does not go with --fee-payer and --destination/],
      [['reclaim', '--owner', j.destination, '--destination', j.destination], /--destination goes with --keys-file FILE --fee-payer KEYFILE --destination ADDRESS/],
    ];
    for (const [args, message] of cases) {
      const run = await cinder(args, { url });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
    }
    // The environment's settings of the job's parts and relays: a whole number within their bound, or a usage error.
    for (const [name, value, bound] of [['CINDER_FLEET_PART_OWNERS', '0', 1000], ['CINDER_FLEET_PART_OWNERS', '1001', 1000], ['CINDER_RELAYS_AT_ONCE', '17', 16], ['CINDER_RELAYS_AT_ONCE', '2.5', 16]] as const) {
      const run = await cinder([...j.args, '--yes'], { url, env: { [name]: value } });
      assert.equal(run.code, 2, `${name}=${value}: ${run.stderr}`);
      assert.match(run.stderr, new RegExp(`${name} must be a whole number from 1 to ${bound}`));
    }
    await writeFile(join(dir, 'bad.keys'), `${j.owners[0]!.base58SecretKey}\nnot a key\n`, { mode: 0o600 });
    const bad = await cinder(['reclaim', '--keys-file', 'bad.keys', '--fee-payer', 'three.payer.json', '--destination', j.destination, '--yes'], { url });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /bad\.keys has 1 bad line; nothing was sent:\n {2}line 2: not a key/);
    assert.equal((await stillOpen(t.chain, j.accounts)).length, 24);
  });
});
