/**
 * A fleet larger than one part (PART_OWNERS wallets, src/commands/fleetParts.ts): `cinder reclaim
 * --keys-file F --fee-payer K --destination A --yes` prepares it in several prepare requests, one
 * per part, each part's transactions holding only that part's wallets, on a service with the
 * default limits of a deployment (a service given an RPC URL), which refuse none of its requests.
 *
 * Counted at the service (its request metrics): the prepare requests answered, exactly one per part
 * of the first round plus one per part prepared again (each prints its line), and no request
 * refused by a rate limit. Checked on the chain: every account closed once, the destination holding
 * every rent, the fee payer charged exactly the stated fees of what landed, each wallet at 0.
 *
 * And a part whose prepared transaction the check refuses (the service's answer altered on its way,
 * by a proxy in front of the app): the job stops with the refusal; the parts before it landed and
 * are in the state file; nothing of that part or after it was signed, recorded or relayed.
 *
 * Relied on (checked against the chain): an empty account of either token program holds 2,039,280
 * lamports; each transaction costs 5,000 lamports per signature with no priority fee.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { getAddressEncoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address, type Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createTestKey, deploymentLimits, getLamports, metricValue, writeEmptyTokenAccounts } from '@cinder/testkit';
import { PART_OWNERS } from '../../src/commands/fleetParts.ts';
import { cinder, dir, t, url, useCliApp, writeFleetFiles } from './cliFixture.ts';

useCliApp('cinder-reclaim-fleet-parts-', { timeoutMs: 600_000, appConfig: deploymentLimits() });

/** One part and one wallet more: the smallest fleet of two parts. */
const WALLETS = PART_OWNERS + 1;
const RENT = 2_039_280n;
const FEE_PER_SIGNATURE = 5_000n;

interface StateFile {
  transactions: { signature: string; owners: string[]; closedAccounts: string[]; feeLamports: string; status: string }[];
}

async function eachInBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

describe('a fleet larger than one part', () => {
  it('is prepared in one prepare request per part, relayed with no request refused by the default limits, every account closed once', async (test) => {
    assert.ok(t.config.rateLimit.burnPerMin <= 10, 'the service has a deployment’s burn budget, not the test app’s raised one');
    const owners = await Promise.all(Array.from({ length: WALLETS }, () => createTestKey()));
    // One empty account each, of either program by turn: both programs in each part.
    await eachInBatches([...owners.entries()], 25, async ([i, owner]) => {
      await writeEmptyTokenAccounts(t.chain, owner.address, 1, i % 2 === 0 ? TOKEN_PROGRAM_ADDRESS : TOKEN_2022_PROGRAM_ADDRESS);
    });
    const { feePayer, destination } = await writeFleetFiles('parts', owners, 1_000_000_000n);
    const payerBefore = await getLamports(t.chain, feePayer.address);
    const preparesBefore = await metricValue(t, 'cinder_http_requests_total', 'route="/api/reclaim_rent/prepare",status="200"');

    const run = await cinder(['reclaim', '--keys-file', 'parts.keys', '--fee-payer', 'parts.payer.json', '--destination', destination, '--yes'], { url });
    assert.equal(run.code, 0, run.stdout.slice(-2000) + run.stderr.slice(-2000));

    // The first round: one line per part, in order, each naming its wallets.
    const partLines = [...run.stdout.matchAll(/^part (\d+)\/(\d+): (\d+) wallets? in (\d+) transactions?: /gm)];
    assert.deepEqual(
      partLines.map((m) => [Number(m[1]), Number(m[2]), Number(m[3])]),
      [
        [1, 2, PART_OWNERS],
        [2, 2, 1],
      ],
      run.stdout.slice(0, 2000),
    );
    const preparedAgain = [...run.stdout.matchAll(/^Prepared again \(/gm)].length;
    const prepares = (await metricValue(t, 'cinder_http_requests_total', 'route="/api/reclaim_rent/prepare",status="200"')) - preparesBefore;
    assert.equal(prepares, 2 + preparedAgain, 'one prepare request per part');
    assert.equal(await metricValue(t, 'cinder_rate_limit_rejections_total'), 0, 'no request refused by a rate limit');
    assert.doesNotMatch(run.stderr, /rate limited/);

    // Each transaction holds the wallets of one part only (the keys file's order: the first PART_OWNERS, then the rest).
    const partOf = new Map(owners.map((o, i) => [o.address as string, i < PART_OWNERS ? 0 : 1]));
    const { transactions } = JSON.parse(await readFile(join(dir, 'parts.keys.reclaim-state.json'), 'utf8')) as StateFile;
    for (const tx of transactions) assert.equal(new Set(tx.owners.map((o) => partOf.get(o))).size, 1, `${tx.signature} holds wallets of one part`);
    assert.ok(transactions.some((tx) => tx.owners.some((o) => partOf.get(o) === 1)), 'the second part was relayed');

    const landed = transactions.filter((tx) => tx.status === 'success');
    const dropped = transactions.filter((tx) => tx.status === 'dropped');
    assert.equal(landed.length + dropped.length, transactions.length, `only landed or dropped: ${transactions.map((tx) => tx.status).join()}`);
    const closed = landed.flatMap((tx) => tx.closedAccounts);
    assert.equal(closed.length, WALLETS);
    assert.equal(new Set(closed).size, WALLETS, 'each account closed once');
    if (dropped.length > 0) {
      const statuses = await t.chain.rpc.getSignatureStatuses(dropped.map((tx) => tx.signature as Signature), { searchTransactionHistory: true }).send();
      assert.ok(statuses.value.every((s) => s === null), 'what did nothing is unknown to the chain');
    }
    let left = 0;
    let owned = 0n;
    await eachInBatches(owners, 25, async (owner) => {
      for (const programId of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS]) {
        left += (await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId }, { encoding: 'base64' }).send()).value.length;
      }
      owned += await getLamports(t.chain, owner.address);
    });
    assert.equal(left, 0, 'no account left open');
    assert.equal(owned, 0n, 'every wallet ends at 0');
    assert.equal(await getLamports(t.chain, destination), BigInt(WALLETS) * RENT, 'every rent at the destination, once');
    const fees = landed.reduce((sum, tx) => sum + FEE_PER_SIGNATURE * BigInt(1 + tx.owners.length), 0n);
    assert.equal(landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), fees, 'the prepares stated the fees of what landed');
    assert.equal(payerBefore - (await getLamports(t.chain, feePayer.address)), fees, 'the fee payer paid exactly the stated fees of what landed');
    test.diagnostic(`${WALLETS} wallets: ${prepares} prepare requests, ${landed.length} transactions landed, ${dropped.length} did nothing and were prepared again`);
  });

  it('shares a --priority-fee among its parts: the preview states the total once, and the fee payer pays it once, not once per part', async () => {
    const PART = 2;
    const WALLETS_OF_THREE_PARTS = 3 * PART;
    const PRIORITY_LAMPORTS = 30_000n; // --priority-fee 0.00003: 10,000 for each part of 2 of the 6 wallets
    const owners = await Promise.all(Array.from({ length: WALLETS_OF_THREE_PARTS }, () => createTestKey()));
    for (const owner of owners) await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
    const { feePayer, destination } = await writeFleetFiles('fee', owners, 1_000_000_000n);
    const args = ['reclaim', '--keys-file', 'fee.keys', '--fee-payer', 'fee.payer.json', '--destination', destination, '--priority-fee', '0.00003'];
    const env = { CINDER_FLEET_PART_OWNERS: String(PART) };

    const preview = await cinder([...args, '--json'], { url, env });
    assert.equal(preview.code, 0, preview.stderr);
    const stated = JSON.parse(preview.stdout) as { owners: unknown[]; signatures: number; feeLamports: string; netLamports: string; totalReclaimableLamports: string };
    assert.equal(stated.owners.length, WALLETS_OF_THREE_PARTS, 'the parts’ previews as one answer');
    assert.equal(BigInt(stated.feeLamports), FEE_PER_SIGNATURE * BigInt(stated.signatures) + PRIORITY_LAMPORTS, 'the base fees and the priority fee once');
    assert.equal(BigInt(stated.netLamports), BigInt(stated.totalReclaimableLamports) - BigInt(stated.feeLamports));

    const payerBefore = await getLamports(t.chain, feePayer.address);
    const run = await cinder([...args, '--yes'], { url, env });
    assert.equal(run.code, 0, run.stdout.slice(-2000) + run.stderr.slice(-2000));
    assert.equal([...run.stdout.matchAll(/^part \d+\/3: 2 wallets in /gm)].length, 3, run.stdout);
    const { transactions } = JSON.parse(await readFile(join(dir, 'fee.keys.reclaim-state.json'), 'utf8')) as StateFile;
    const landed = transactions.filter((tx) => tx.status === 'success');
    const paid = payerBefore - (await getLamports(t.chain, feePayer.address));
    assert.equal(paid, landed.reduce((sum, tx) => sum + BigInt(tx.feeLamports), 0n), 'the fee payer paid the stated fees of what landed');
    const baseFees = landed.reduce((sum, tx) => sum + FEE_PER_SIGNATURE * BigInt(1 + tx.owners.length), 0n);
    // What did nothing paid nothing, and its wallets' shares are asked for again: never more than the total.
    assert.ok(paid - baseFees <= PRIORITY_LAMPORTS, `priority fees paid ${paid - baseFees}, at most the total`);
    if (landed.length === transactions.length) assert.equal(paid, BigInt(stated.feeLamports), 'all landed at once: exactly what the preview stated');
    assert.equal(await getLamports(t.chain, destination), BigInt(WALLETS_OF_THREE_PARTS) * RENT, 'every rent at the destination, once');
  });

  it('stops at a part whose prepared transaction the check refuses: the parts before it landed, nothing of it or after it signed or relayed', async () => {
    const PART = 2;
    const owners = await Promise.all(Array.from({ length: 3 * PART }, () => createTestKey()));
    for (const owner of owners) await writeEmptyTokenAccounts(t.chain, owner.address, 1, TOKEN_PROGRAM_ADDRESS);
    const { destination } = await writeFleetFiles('altered', owners, 1_000_000_000n);
    const elsewhere = (await createTestKey()).address;

    const proxy = await alteringProxy(url, destination, elsewhere);
    try {
      const run = await cinder(['reclaim', '--keys-file', 'altered.keys', '--fee-payer', 'altered.payer.json', '--destination', destination, '--yes'], {
        url: proxy.url,
        env: { CINDER_FLEET_PART_OWNERS: String(PART) },
      });
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stderr, new RegExp(`prepared transaction 1 was not signed: it closes an account to ${elsewhere}, not to the destination`));
      assert.ok(proxy.prepares() >= 2, 'the second part was prepared');
      assert.equal(proxy.relayedOwners().size, PART, 'only the first part was relayed');
      for (const owner of owners.slice(0, PART)) assert.ok(proxy.relayedOwners().has(owner.address));
    } finally {
      await proxy.close();
    }
    const { transactions } = JSON.parse(await readFile(join(dir, 'altered.keys.reclaim-state.json'), 'utf8')) as StateFile;
    assert.deepEqual(new Set(transactions.flatMap((tx) => tx.owners)), new Set(owners.slice(0, PART).map((o) => o.address as string)), 'only the first part is recorded');
    assert.ok(transactions.every((tx) => tx.status === 'success'), `the first part settled: ${transactions.map((tx) => tx.status).join()}`);
    for (const [i, owner] of owners.entries()) {
      const open = (await t.chain.rpc.getTokenAccountsByOwner(owner.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send()).value.length;
      assert.equal(open, i < PART ? 0 : 1, `wallet ${i + 1}: ${i < PART ? 'closed' : 'left open'}`);
    }
    assert.equal(await getLamports(t.chain, destination), BigInt(PART) * RENT, 'the rents of the first part, nothing else');
    assert.equal(await getLamports(t.chain, elsewhere), 0n);
  });
});

/** The owners (signers other than the fee payer) of the transactions of a relay request's body. */
function relayedSigners(body: Buffer): string[] {
  const { transactions } = JSON.parse(body.toString()) as { transactions: string[] };
  return transactions.flatMap((wire) => {
    const message = getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(Buffer.from(wire, 'base64')).messageBytes);
    return (message.staticAccounts as readonly string[]).slice(1, message.header.numSignerAccounts);
  });
}

/**
 * A proxy in front of the app that alters the second prepare answer: in its first transaction, the
 * destination's address is replaced by `elsewhere` (a close that would pay someone else). Counts the
 * prepare requests, and records the signers of every relayed transaction (the wallets relayed).
 */
async function alteringProxy(target: string, destination: Address, elsewhere: Address) {
  let prepares = 0;
  const relayed = new Set<string>();
  const from = Buffer.from(getAddressEncoder().encode(destination));
  const to = Buffer.from(getAddressEncoder().encode(elsewhere));
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = req.url ?? '/';
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'accept', 'idempotency-key']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
    const answer = await fetch(new URL(path, target), { method: req.method, headers, ...(body.length > 0 ? { body } : {}) });
    let text = await answer.text();
    if (path.startsWith('/api/transactions') && req.method === 'POST' && !path.includes('statuses')) {
      for (const owner of relayedSigners(body)) relayed.add(owner);
    }
    if (path.startsWith('/api/reclaim_rent/prepare') && answer.status === 200 && ++prepares === 2) {
      const json = JSON.parse(text) as { transactions: { transaction: string }[] };
      const wire = Buffer.from(json.transactions[0]!.transaction, 'base64');
      const at = wire.indexOf(from);
      assert.ok(at > 0, 'the prepared transaction names the destination');
      to.copy(wire, at);
      json.transactions[0]!.transaction = wire.toString('base64');
      text = JSON.stringify(json);
    }
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(text);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    prepares: () => prepares,
    relayedOwners: () => relayed,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
