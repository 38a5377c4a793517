/**
 * Wallets that change what they sign (docs/wallet-additions.md), end to end over HTTP on the
 * embedded chain, to the lamport: prepare (signer "wallet") → a test wallet changes the message as
 * Phantom, Solflare or Seeker do and signs it with the owner's key → relay. The chain loads a
 * no-op stand-in at Lighthouse's address, so guarded transactions execute. What a wallet may add
 * lands, with and without the fee sponsor, the sponsor whole; what it may not (a transfer out of
 * the fee payer, a Lighthouse memory write, a second Memo, a guard a stranger can break, a priority
 * fee the repayment does not cover) is refused and nothing is sent.
 *
 * Solana facts relied on: a transaction's fee is 5,000 lamports a signature plus
 * ceil(price × limit / 1e6), recorded by the chain as meta.fee; closing an empty 165-byte SPL
 * Token account returns its rent, 2,039,280 lamports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { airdropFactory, generateKeyPairSigner, getBase64Encoder, lamports, type Address, type KeyPairSigner, type Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  createFundedSigner,
  createSponsoredTestApp,
  getLamports,
  LIGHTHOUSE_PROGRAM_ADDRESS,
  LighthouseOperator,
  lamportsAssertionProgram,
  lamportsGuard,
  noopProgram,
  signAsWallet,
  writeEmptyTokenAccounts,
  type SponsoredTestApp,
  type TestWalletKind,
  type WalletEdit,
} from '@cinder/testkit';

const RENT = 2_039_280n;
/** The least balance the test wallets' guards assert of the fee payer: what it holds, less a margin a wallet leaves for the fee. */
const FLOOR_MARGIN = 1_000_000n;

let s: SponsoredTestApp;
before(async () => {
  s = await createSponsoredTestApp(10_000_000_000n, {}, { programs: [{ address: LIGHTHOUSE_PROGRAM_ADDRESS, bytes: noopProgram() }] });
});
after(() => s.close());

const post = (url: string, payload: unknown) => s.t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
const sponsorAddress = () => s.sponsor.signer.address;

/** A wallet of `count` empty token accounts, holding `lamports` of SOL (0: a wallet the sponsor is for). */
async function wallet(count: number, lamports = 0n): Promise<KeyPairSigner> {
  const owner = lamports > 0n ? (await createFundedSigner(s.t.chain, lamports)).signer : await generateKeyPairSigner();
  await writeEmptyTokenAccounts(s.t.chain, owner.address, count);
  return owner;
}

async function tokenAccounts(owner: Address): Promise<number> {
  const { value } = await s.t.chain.rpc.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send();
  return value.length;
}

/** The chain's record of a transaction: its fee and the programs of its top-level instructions. */
async function onChain(signature: Signature): Promise<{ fee: bigint; programs: string[] }> {
  const tx = await s.t.chain.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.ok(tx?.meta, `transaction ${signature} is on the chain`);
  const keys = tx.transaction.message.accountKeys;
  return { fee: tx.meta.fee, programs: tx.transaction.message.instructions.map((i) => keys[i.programIdIndex]!) };
}

interface Run {
  owner: KeyPairSigner;
  prepared: { transactions: string[]; relayToken?: string; details: { summary: { transactions: number; netLamports: string } } };
  relayed: Awaited<ReturnType<typeof post>>;
  wires: string[];
  before: { owner: bigint; sponsor: bigint; accounts: number };
}

/** Prepare a whole-wallet reclaim for a browser wallet, let a wallet of `kind` sign it, relay it. */
async function signedBy(kind: TestWalletKind | WalletEdit, owner: KeyPairSigner, feePayer: 'owner' | 'sponsor', signer: 'wallet' | 'key' = 'wallet'): Promise<Run> {
  const prepare = await post('/api/reclaim_rent/prepare', { owner: owner.address, priorityFee: 0, feePayer, signer });
  assert.equal(prepare.statusCode, 200, prepare.body);
  const prepared = prepare.json();
  const payer = feePayer === 'owner' ? owner.address : sponsorAddress();
  const before = {
    owner: await getLamports(s.t.chain, owner.address),
    sponsor: await getLamports(s.t.chain, sponsorAddress()),
    accounts: await tokenAccounts(owner.address),
  };
  const payerLamports = payer === owner.address ? before.owner : before.sponsor;
  const floor = payerLamports > FLOOR_MARGIN ? payerLamports - FLOOR_MARGIN : 0n;
  const wires = await Promise.all(prepared.transactions.map((wire: string) => signAsWallet(kind, wire, [owner.keyPair], floor)));
  const relayed = await post('/api/transactions', { transactions: wires, ...(prepared.relayToken ? { relayToken: prepared.relayToken } : {}) });
  return { owner, prepared, relayed, wires, before };
}

/** Landed: every account closed, the owner up by the rent less the fees the chain charged, the sponsor whole; the relay stated each fee as the chain charged it. */
async function assertLanded(run: Run, count: number, sponsored: boolean, safetyChecks: number, memo = false): Promise<bigint> {
  assert.equal(run.relayed.statusCode, 200, run.relayed.body);
  const body = run.relayed.json();
  assert.equal(body.status, 'success', body.message);
  let fees = 0n;
  for (const report of body.details.transactions) {
    const chain = await onChain(report.signature);
    assert.equal(BigInt(report.fee), chain.fee, 'the relay states the fee the chain charged');
    assert.equal(report.sponsored, sponsored);
    assert.deepEqual(report.walletAdded, { safetyChecks, memo });
    assert.equal(chain.programs.filter((p) => p === LIGHTHOUSE_PROGRAM_ADDRESS).length, safetyChecks, 'the guards ran on chain');
    fees += chain.fee;
  }
  assert.equal(await tokenAccounts(run.owner.address), 0, 'every account closed');
  assert.equal(await getLamports(s.t.chain, run.owner.address), run.before.owner + BigInt(count) * RENT - fees);
  assert.equal(await getLamports(s.t.chain, sponsorAddress()), run.before.sponsor, 'the sponsor whole');
  return fees;
}

/** Refused before anything was sent: the code, a reason naming `why`, every balance and account as before. */
async function assertRefused(run: Run, code: string, why: RegExp): Promise<void> {
  assert.equal(run.relayed.statusCode, 400, run.relayed.body);
  const problem = run.relayed.json();
  assert.equal(problem.code, code, run.relayed.body);
  assert.match(problem.detail, why);
  if (code !== 'VALIDATION_FAILED') assert.match(problem.detail, /Nothing was sent/);
  assert.equal(await getLamports(s.t.chain, run.owner.address), run.before.owner);
  assert.equal(await getLamports(s.t.chain, sponsorAddress()), run.before.sponsor);
  assert.equal(await tokenAccounts(run.owner.address), run.before.accounts);
}

describe('what wallets add lands, to the lamport', () => {
  it('Phantom-like, the owner pays: four guards on the owner, the fee as prepared', async () => {
    const fees = await assertLanded(await signedBy('phantom', await wallet(3, 50_000_000n), 'owner'), 3, false, 4);
    assert.equal(fees, 5_000n, 'one signature, no priority fee');
  });

  it('Phantom-like, sponsored: four guards on the sponsor (a lower bound on its lamports), the sponsor whole', async () => {
    const fees = await assertLanded(await signedBy('phantom', await wallet(3), 'sponsor'), 3, true, 4);
    assert.equal(fees, 10_000n, 'two signatures, no priority fee, repaid by the owner');
  });

  it('Phantom-like raising the compute-unit limit by its guards\' cost, sponsored: at a unit price of 0 it costs nothing', async () => {
    const fees = await assertLanded(await signedBy('phantomRaisingLimit', await wallet(2), 'sponsor'), 2, true, 4);
    assert.equal(fees, 10_000n);
  });

  it('Solflare-like, sponsored and owner-paid: two guards', async () => {
    await assertLanded(await signedBy('solflare', await wallet(2), 'sponsor'), 2, true, 2);
    await assertLanded(await signedBy('solflare', await wallet(2, 50_000_000n), 'owner'), 2, false, 2);
  });

  it('Seeker-like: a Memo (sponsored), and a Memo with a raised unit price where the owner pays (the fee as signed)', async () => {
    await assertLanded(await signedBy('seeker', await wallet(2), 'sponsor'), 2, true, 0, true);
    const run = await signedBy('seekerRaisingPrice', await wallet(2, 50_000_000n), 'owner');
    const fees = await assertLanded(run, 2, false, 0, true);
    assert.ok(fees > 5_000n, `the wallet's priority fee was charged (${fees})`);
  });

  it('a wallet of 60 empty accounts, prepared for a browser wallet and signed by the Phantom-like one, sponsored: everything closes', async () => {
    const owner = await wallet(60);
    const preview = await s.t.app.inject({ method: 'GET', url: `/api/reclaim_rent?owner=${owner.address}&signer=wallet` });
    assert.equal(preview.statusCode, 200, preview.body);
    const prepare = await post('/api/reclaim_rent/prepare', { owner: owner.address, priorityFee: 0, feePayer: 'sponsor', signer: 'wallet' });
    assert.equal(prepare.statusCode, 200, prepare.body);
    const prepared = prepare.json();
    const n = prepared.transactions.length as number;
    assert.equal(n, preview.json().summary.transactions, 'the preview counts the transactions that follow');
    assert.ok(n >= 2 && n <= 9, `${n} transactions`);
    // Only the first is sponsored; the rest are the owner's, paid from the rent the first returns.
    assert.equal(prepared.sponsoredTransactions, 1);
    const sponsorBefore = await getLamports(s.t.chain, sponsorAddress());
    // One approval: Phantom guards each fee payer's balance as it is at signing (the owner holds 0).
    const wires = await Promise.all(
      (prepared.transactions as string[]).map((wire, i) => signAsWallet('phantom', wire, [owner.keyPair], i === 0 ? sponsorBefore - FLOOR_MARGIN : 0n)),
    );
    for (const wire of wires) assert.ok(getBase64Encoder().encode(wire).length <= 1232, 'each guarded transaction fits the packet');
    const first = await post('/api/transactions', { transactions: wires.slice(0, 1), relayToken: prepared.relayToken });
    assert.equal(first.statusCode, 200, first.body);
    const rest = await post('/api/transactions', { transactions: wires.slice(1) });
    assert.equal(rest.statusCode, 200, rest.body);
    const reports = [...first.json().details.transactions, ...rest.json().details.transactions];
    assert.ok(reports.every((r: { status: string }) => r.status === 'success'));
    assert.deepEqual(reports.map((r: { sponsored: boolean }) => r.sponsored), [true, ...wires.slice(1).map(() => false)]);
    let fees = 0n;
    for (const report of reports) {
      const chain = await onChain(report.signature);
      assert.equal(chain.programs.filter((p) => p === LIGHTHOUSE_PROGRAM_ADDRESS).length, 4, 'the guards ran on chain');
      fees += chain.fee;
    }
    assert.equal(fees, 10_000n + 5_000n * BigInt(n - 1));
    assert.equal(await tokenAccounts(owner.address), 0, 'every account closed');
    assert.equal(await getLamports(s.t.chain, owner.address), 60n * RENT - fees);
    assert.equal(await getLamports(s.t.chain, sponsorAddress()), sponsorBefore, 'the sponsor whole');
  });

  it('packed full for a key signer, the same 60 accounts no longer fit once Phantom\'s guards are added: refused, nothing sent', async () => {
    const run = await signedBy('phantom', await wallet(60), 'sponsor', 'key');
    assert.ok(run.wires.some((wire) => getBase64Encoder().encode(wire).length > 1232), 'a guarded transaction outgrows the packet');
    // The relay holds a legacy transaction to 1,232 bytes (the body schema admits v1's 4,096).
    await assertRefused(run, 'INVALID_TRANSACTION', /over the 1232-byte limit of a legacy transaction/);
  });
});

describe('what wallets may not add is refused, nothing sent', () => {
  for (const feePayer of ['owner', 'sponsor'] as const) {
    const funded = feePayer === 'owner' ? 50_000_000n : 0n;
    it(`${feePayer} pays: a System transfer out of the fee payer`, async () => {
      await assertRefused(await signedBy('hostileTransfer', await wallet(2, funded), feePayer), 'INSTRUCTION_NOT_ALLOWED', /System TransferSol/);
    });
    it(`${feePayer} pays: a Lighthouse memory write`, async () => {
      await assertRefused(await signedBy('hostileMemoryWrite', await wallet(2, funded), feePayer), 'INSTRUCTION_NOT_ALLOWED', /MemoryWrite, which pays for a memory account/);
    });
    it(`${feePayer} pays: a second Memo`, async () => {
      await assertRefused(await signedBy('hostileSecondMemo', await wallet(2, funded), feePayer), 'INSTRUCTION_NOT_ALLOWED', /second Memo/);
    });
  }

  it('sponsored: an exact-balance guard on the sponsor (anyone could break it by sending the sponsor a lamport)', async () => {
    const exact: WalletEdit = (instructions, { feePayer, floor }) => [lamportsGuard(feePayer, LighthouseOperator.Equal, floor + FLOOR_MARGIN), ...instructions];
    await assertRefused(await signedBy(exact, await wallet(2), 'sponsor'), 'INSTRUCTION_NOT_ALLOWED', /anyone can break by sending the sponsor lamports/);
  });

  it('sponsored: a lower bound on the sponsor above what it holds less the fees at stake', async () => {
    const tooHigh: WalletEdit = (instructions, { feePayer, floor }) => [lamportsGuard(feePayer, LighthouseOperator.GreaterThanOrEqual, floor + FLOOR_MARGIN), ...instructions];
    await assertRefused(await signedBy(tooHigh, await wallet(2), 'sponsor'), 'RELAY_TOKEN_INVALID', /requires the fee sponsor to hold at least/);
  });

  it('sponsored: a Seeker-like raised unit price, which the repayment does not cover: refused with what to do', async () => {
    await assertRefused(await signedBy('seekerRaisingPrice', await wallet(2), 'sponsor'), 'RELAY_TOKEN_INVALID', /Set the wallet's priority fee to none/);
  });

  it('owner pays, several transactions: an exact-balance guard on the owner, which the request\'s other transactions change', async () => {
    const exact: WalletEdit = (instructions, { feePayer, floor }) => [lamportsGuard(feePayer, LighthouseOperator.Equal, floor + FLOOR_MARGIN), ...instructions];
    const run = await signedBy(exact, await wallet(60, 50_000_000n), 'owner');
    assert.ok(run.wires.length > 1);
    await assertRefused(run, 'TRANSACTIONS_CONFLICT', /whichever lands second would fail on chain/);
  });
});

describe('guards that assert, on a chain whose Lighthouse stand-in compares lamports as Lighthouse does', () => {
  let main: SponsoredTestApp;
  before(async () => {
    main = s;
    s = await createSponsoredTestApp(10_000_000_000n, {}, { programs: [{ address: LIGHTHOUSE_PROGRAM_ADDRESS, bytes: lamportsAssertionProgram() }] });
  });
  after(async () => {
    await s.close();
    s = main;
  });
  const atLeast =
    (extra: bigint): WalletEdit =>
    (instructions, { feePayer, floor }) => [lamportsGuard(feePayer, LighthouseOperator.GreaterThanOrEqual, floor + extra), ...instructions];

  it('sponsored: a lower bound on the sponsor still holds after a stranger sent the sponsor a lamport between signing and relaying; the sponsor whole', async () => {
    const owner = await wallet(2);
    const prepare = await post('/api/reclaim_rent/prepare', { owner: owner.address, priorityFee: 0, feePayer: 'sponsor', signer: 'wallet' });
    assert.equal(prepare.statusCode, 200, prepare.body);
    const { transactions, relayToken } = prepare.json();
    const sponsorBefore = await getLamports(s.t.chain, sponsorAddress());
    // What the wallet saw, less a margin: the guard's floor.
    const wires = await Promise.all(transactions.map((wire: string) => signAsWallet(atLeast(0n), wire, [owner.keyPair], sponsorBefore - FLOOR_MARGIN)));
    await airdropFactory({ rpc: s.t.chain.rpc, rpcSubscriptions: s.t.chain.rpcSubscriptions })({ recipientAddress: sponsorAddress(), lamports: lamports(1n), commitment: 'confirmed' });
    const relayed = await post('/api/transactions', { transactions: wires, relayToken });
    assert.equal(relayed.statusCode, 200, relayed.body);
    assert.equal(relayed.json().status, 'success', relayed.json().message);
    const { fee, programs } = await onChain(relayed.json().transactionId);
    assert.ok(programs.includes(LIGHTHOUSE_PROGRAM_ADDRESS));
    assert.equal(await getLamports(s.t.chain, sponsorAddress()), sponsorBefore + 1n, 'the sponsor whole, plus the stranger\'s lamport');
    assert.equal(await getLamports(s.t.chain, owner.address), 2n * RENT - fee);
  });

  it('owner pays: a guard the chain would fail (a floor above what the owner will hold) is refused by the simulation, nothing sent; one just at the balance less the fee lands', async () => {
    const owner = await wallet(2, 50_000_000n);
    const failing = await signedBy(atLeast(FLOOR_MARGIN + 10n * RENT), owner, 'owner');
    await assertRefused(failing, 'TRANSACTION_REJECTED', /6001|custom program error|Custom/i);
    // The guard runs after the fee is charged and before the closes: the owner then holds exactly its balance less the fee.
    const exactFloor: WalletEdit = (instructions, { feePayer, floor }) => {
      const budget = instructions.filter((i) => i.programAddress === 'ComputeBudget111111111111111111111111111111');
      const rest = instructions.filter((i) => i.programAddress !== 'ComputeBudget111111111111111111111111111111');
      return [...budget, lamportsGuard(feePayer, LighthouseOperator.GreaterThanOrEqual, floor + FLOOR_MARGIN - 5_000n), ...rest];
    };
    await assertLanded(await signedBy(exactFloor, owner, 'owner'), 2, false, 1);
  });
});
