/**
 * The web app with wallets that change what they sign (docs/wallet-additions.md), in real headless
 * Chromium against the real app on the embedded chain, which loads a no-op stand-in at
 * Lighthouse's address so that guarded transactions execute. Each test wallet (a Wallet Standard
 * wallet, test/testWallet.ts) re-signs a changed message with the owner's key, as Phantom (four
 * guards), Solflare (two), Seeker (a Memo, its own unit price) or a hostile wallet would. Every
 * figure is checked on chain to the lamport: the owner's change is the rent of the closed accounts
 * less the fees the chain recorded; a sponsored reclaim leaves the sponsor where it began; a
 * refused one sends nothing. One browser for the file, a fresh context per wallet.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { airdropFactory, generateKeyPairSigner, lamports, type Address, type KeyPairSigner, type Signature } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  createSponsoredTestApp,
  getLamports,
  LIGHTHOUSE_PROGRAM_ADDRESS,
  noopProgram,
  writeEmptyTokenAccounts,
  type SponsoredTestApp,
  type TestWalletKind,
} from '@cinder/testkit';
import { sol } from '../src/format.ts';
import { WAIT } from './harness.ts';
import { installTestWallet, TEST_WALLET_NAME } from './testWallet.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.CINDER_BROWSER_REQUIRED === '1';
const RENT = 2_039_280n;

let s: SponsoredTestApp;
let url: string;
let browser: Browser | undefined;
let screenshots: string;

before(async () => {
  screenshots = process.env.CINDER_SCREENSHOT_DIR ?? join(await mkdtemp(join(tmpdir(), 'cinder-wallets-')), 'screenshots');
  await mkdir(screenshots, { recursive: true });
  s = await createSponsoredTestApp(5_000_000_000n, {}, { programs: [{ address: LIGHTHOUSE_PROGRAM_ADDRESS, bytes: noopProgram() }] });
  url = await s.t.app.listen({ host: '127.0.0.1', port: 0 });
  if (existsSync(CHROMIUM)) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
  }
  console.log(`wallet screenshots: ${screenshots}`);
});
after(async () => {
  await browser?.close();
  await s?.close();
});

function needBrowser(context: { skip(message: string): void }): boolean {
  if (browser) return true;
  if (REQUIRED) assert.fail(`Chromium not found at ${CHROMIUM}`);
  context.skip(`Chromium not found at ${CHROMIUM}`);
  return false;
}

const chain = () => s.t.chain;
const sponsorAddress = () => s.sponsor.signer.address;

/** An owner of `count` empty token accounts holding `funding` lamports (0: the sponsor pays). */
async function owner(count: number, funding: bigint): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  if (funding > 0n) {
    await airdropFactory({ rpc: chain().rpc, rpcSubscriptions: chain().rpcSubscriptions })({ recipientAddress: signer.address, lamports: lamports(funding), commitment: 'confirmed' });
  }
  await writeEmptyTokenAccounts(chain(), signer.address, count);
  return signer;
}

async function tokenAccounts(address: Address): Promise<number> {
  const { value } = await chain().rpc.getTokenAccountsByOwner(address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send();
  return value.length;
}

async function chainFees(signatures: readonly string[]): Promise<bigint> {
  let total = 0n;
  for (const signature of signatures) {
    const tx = await chain().rpc.getTransaction(signature as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.ok(tx?.meta, `transaction ${signature} is on the chain`);
    assert.equal(tx.meta.err, null);
    total += tx.meta.fee;
  }
  return total;
}

interface Visit {
  page: Page;
  relayPosts: number;
  errors: string[];
  close(): Promise<void>;
}

/** A page whose wallet changes what it signs as `kind` does, its guards asserting `floor` on the fee payer; connected, the preview shown. */
async function visit(signer: KeyPairSigner, kind: TestWalletKind, floor: bigint): Promise<Visit> {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT.timeout);
  const wallet = await installTestWallet(page, signer);
  wallet.changes = { kind, floor };
  const v: Visit = { page, relayPosts: 0, errors: [], close: () => context.close() };
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/transactions') v.relayPosts++;
  });
  page.on('pageerror', (error) => v.errors.push(error.message));
  await page.goto(`${url}/`);
  await page.getByRole('button', { name: `Connect ${TEST_WALLET_NAME}` }).click();
  await page.locator('dd[data-total="net"]').waitFor(WAIT);
  await page.locator('main button.big:not([disabled])').waitFor(WAIT);
  return v;
}

const mainButton = (page: Page) => page.getByRole('main').getByRole('button', { name: /reclaim/i });

/** Reclaims with a wallet of `kind`; checks the chain to the lamport and the page's words; returns the result's text. */
async function reclaimWith(kind: TestWalletKind, count: number, funding: bigint, expect: { safetyChecks: number; memo: boolean }, shot: string): Promise<string> {
  const signer = await owner(count, funding);
  const sponsored = funding === 0n;
  const ownerBefore = await getLamports(chain(), signer.address);
  const sponsorBefore = await getLamports(chain(), sponsorAddress());
  const payerBefore = sponsored ? sponsorBefore : ownerBefore;
  const v = await visit(signer, kind, payerBefore - 1_000_000n);
  const previewNet = await v.page.locator('dd[data-total="net"]').innerText();
  await mainButton(v.page).click();
  await v.page.locator('.result h2', { hasText: 'Done' }).waitFor(WAIT);
  const signatures = await v.page.locator('.result li[data-signature]').evaluateAll((items) => items.map((li) => li.getAttribute('data-signature')!));
  await v.page.screenshot({ path: join(screenshots, `${shot}.png`), fullPage: true });
  const fees = await chainFees(signatures);
  assert.equal(await tokenAccounts(signer.address), 0, 'every account closed');
  assert.equal(await getLamports(chain(), signer.address), ownerBefore + BigInt(count) * RENT - fees, "owner's change = rents − fees");
  assert.equal(await getLamports(chain(), sponsorAddress()), sponsorBefore, 'the sponsor whole');
  // The preview packed as the prepare did (signer "wallet"): its net is what followed, unless the wallet changed the fee.
  if (kind !== 'seekerRaisingPrice') assert.equal(previewNet, sol(BigInt(count) * RENT - fees), 'the preview promised what the owner received');
  const summary = await v.page.locator('[data-result="summary"]').innerText();
  assert.match(summary, new RegExp(`you received ${sol(BigInt(count) * RENT - fees).replace('.', '\\.')}`), 'the page states what the owner received, fees as signed');
  const added = await v.page.locator('[data-result="wallet-added"]').innerText();
  if (expect.safetyChecks > 0) assert.match(added, new RegExp(`added ${expect.safetyChecks} safety checks`));
  if (expect.memo) assert.match(added, /a memo/);
  assert.match(added, new RegExp(`Network fees as signed: ${sol(fees).replace('.', '\\.')}`));
  assert.doesNotMatch(await v.page.locator('main').innerText(), /turn .* off/i, 'never asks to turn a protection off');
  // Everything closed: the fresh preview finds nothing to reclaim, which the result already says.
  assert.equal(await v.page.locator('[data-note="problem"]').count(), 0, 'no stale "nothing to reclaim" warning beside the result');
  assert.deepEqual(v.errors, []);
  await v.close();
  return added;
}

/** A hostile wallet: the page shows the relay's reason; nothing is sent, every balance and account as before. */
async function refusedWith(kind: TestWalletKind, funding: bigint, why: RegExp, shot: string): Promise<void> {
  const signer = await owner(2, funding);
  const ownerBefore = await getLamports(chain(), signer.address);
  const sponsorBefore = await getLamports(chain(), sponsorAddress());
  const v = await visit(signer, kind, 0n);
  // After a reclaim, failed or not, the page reads the preview again: the reason must outlive it.
  const reread = v.page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === '/api/reclaim_rent', WAIT);
  await mainButton(v.page).click();
  const alert = v.page.locator('main .error[role="alert"]');
  await alert.waitFor(WAIT);
  await reread;
  await v.page.locator('dl.totals[aria-busy="false"]').waitFor(WAIT);
  assert.equal(await alert.isVisible(), true, 'the reason stays after the preview is read again');
  const text = await alert.innerText();
  assert.match(text, /Cinder did not send what your wallet signed/);
  assert.match(text, why);
  assert.match(text, /Nothing was sent/);
  assert.doesNotMatch(text, /turn .* off/i);
  await v.page.screenshot({ path: join(screenshots, `${shot}.png`), fullPage: true });
  assert.equal(v.relayPosts, 1, 'one relay request, refused');
  assert.equal(await getLamports(chain(), signer.address), ownerBefore);
  assert.equal(await getLamports(chain(), sponsorAddress()), sponsorBefore);
  assert.equal(await tokenAccounts(signer.address), 2, 'nothing closed');
  await v.close();
}

describe('the web app with wallets that change what they sign', () => {
  it('Phantom-like (four guards), the owner pays and sponsored; Phantom-like raising the limit; Solflare-like (two guards): all land, to the lamport', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(context)) return;
    const text = await reclaimWith('phantom', 3, 100_000_000n, { safetyChecks: 4, memo: false }, 'phantom-owner-pays');
    assert.match(text, /Your wallet \(Test Wallet\) added 4 safety checks to each transaction/);
    await reclaimWith('phantom', 3, 0n, { safetyChecks: 4, memo: false }, 'phantom-sponsored');
    await reclaimWith('phantomRaisingLimit', 2, 0n, { safetyChecks: 4, memo: false }, 'phantom-raising-limit-sponsored');
    await reclaimWith('solflare', 2, 0n, { safetyChecks: 2, memo: false }, 'solflare-sponsored');
  });

  it('Seeker-like: a Memo (sponsored), and a Memo with its own unit price where the owner pays (the fee as signed)', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(context)) return;
    await reclaimWith('seeker', 2, 0n, { safetyChecks: 0, memo: true }, 'seeker-sponsored');
    await reclaimWith('seekerRaisingPrice', 2, 100_000_000n, { safetyChecks: 0, memo: true }, 'seeker-raising-price-owner-pays');
  });

  it('hostile wallets (a transfer out of the fee payer, a Lighthouse memory write, a second Memo): refused with the reason, nothing sent', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(context)) return;
    await refusedWith('hostileTransfer', 100_000_000n, /System TransferSol/, 'hostile-transfer-owner-pays');
    await refusedWith('hostileTransfer', 0n, /System TransferSol/, 'hostile-transfer-sponsored');
    await refusedWith('hostileMemoryWrite', 0n, /MemoryWrite, which pays for a memory account/, 'hostile-memory-write-sponsored');
    await refusedWith('hostileSecondMemo', 100_000_000n, /second Memo/, 'hostile-second-memo-owner-pays');
  });

  it('a wallet of 60 empty accounts, sponsored, signed by the Phantom-like wallet: everything closes', { timeout: 600_000 }, async (context) => {
    if (!needBrowser(context)) return;
    await reclaimWith('phantom', 60, 0n, { safetyChecks: 4, memo: false }, 'phantom-60-accounts-sponsored');
  });
});
