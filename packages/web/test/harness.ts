/**
 * What the browser tests share: the real app on the embedded chain (with a fee sponsor), a real
 * headless Chromium (Debian's `chromium`, driven by playwright-core) with a Wallet Standard wallet
 * registered in the page (./testWallet.ts) whose key signs in the test, and the checks every page
 * gets: no console error, no request to another origin (all blocked and recorded), an axe scan with
 * no serious or critical violation, screenshots at 1280×800 and 390×844 (in CINDER_SCREENSHOT_DIR,
 * else a new temp dir; the path is printed).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import {
  airdropFactory,
  createKeyPairSignerFromBytes,
  getAddressEncoder,
  getBase64Decoder,
  lamports,
  type Address,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Config, Sponsor } from '@cinder/service';
import {
  createFundedSigner,
  createSponsoredTestApp,
  createTestKey,
  metaplexMetadataAddress,
  rpcResult,
  TOKEN_METADATA_PROGRAM,
  type SponsoredTestApp,
  type TestApp,
  type TestChain,
  type Timing,
} from '@cinder/testkit';
import { installTestWallet, type TestWallet } from './testWallet.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// .ci/run installs Chromium and sets this: there, a missing browser is a failure, not a skip.
const REQUIRED = process.env.CINDER_BROWSER_REQUIRED === '1';
// How long a step may take before the page counts as stuck: a bound for a hung page, never a
// speed. Generous, since a step of a large wallet on a machine whose cores are all busy can take
// minutes; each test's own timeout is longer still.
export const WAIT = { timeout: 240_000 };
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export interface Suite {
  t: TestApp;
  url: string;
  browser: Browser | undefined;
  sponsor: Sponsor;
  funder: KeyPairSigner;
  workDir: string;
  screenshots: string;
}

/** Headless Chromium, or undefined where it is not installed. */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/**
 * Starts the app, the chain and the browser before the file's tests and stops them after; the fields are set once `before` ran.
 * `timing: 'validator'` gives the chain a cluster's confirmation timing; `config` replaces the test app's settings (its limits, say).
 */
export function browserSuite(name: string, options: { timing?: Timing; config?: Partial<Config> } = {}): Suite {
  const suite = {} as Suite;
  let sponsored: SponsoredTestApp | undefined;
  before(async () => {
    suite.workDir = await mkdtemp(join(tmpdir(), `cinder-${name}-`));
    suite.screenshots = process.env.CINDER_SCREENSHOT_DIR ?? join(suite.workDir, 'screenshots');
    await mkdir(suite.screenshots, { recursive: true });
    sponsored = await createSponsoredTestApp(5_000_000_000n, options.config ?? {}, options.timing ? { timing: options.timing } : {});
    ({ t: suite.t, sponsor: suite.sponsor } = sponsored);
    suite.funder = (await createFundedSigner(suite.t.chain, 100_000_000_000n)).signer;
    suite.url = await suite.t.app.listen({ host: '127.0.0.1', port: 0 });
    suite.browser = await launchChromium();
    console.log(`${name} screenshots: ${suite.screenshots}`);
  });
  after(async () => {
    await suite.browser?.close();
    await sponsored?.close();
    if (!process.env.CINDER_SCREENSHOT_DIR) console.log(`(kept for looking at: ${suite.screenshots})`);
    else await rm(suite.workDir, { recursive: true, force: true });
  });
  return suite;
}

export function needBrowser(suite: Suite, context: { skip(message: string): void }): boolean {
  if (suite.browser) return true;
  if (REQUIRED) assert.fail(`Chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  context.skip(`Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  return false;
}

export interface Session {
  context: BrowserContext;
  page: Page;
  wallet: TestWallet;
  /** Requests to another origin (all blocked), console errors and page errors, and POSTs to the relay. */
  elsewhere: string[];
  errors: string[];
  relayPosts: number;
  check(): Promise<void>;
}

/** A fresh browser context with the test wallet of `owner` (declaring `versions`, default legacy and 0) and every guard installed. */
export async function open(suite: Suite, owner: KeyPairSigner, base = suite.url, versions?: Parameters<typeof installTestWallet>[2]): Promise<Session> {
  const context = await suite.browser!.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT.timeout);
  const wallet = await installTestWallet(page, owner, versions);
  const origin = new URL(base).origin;
  const session: Session = {
    context,
    page,
    wallet,
    elsewhere: [],
    errors: [],
    relayPosts: 0,
    async check() {
      assert.deepEqual(session.elsewhere, [], 'the page asked for nothing outside this server');
      assert.deepEqual(session.errors, [], 'no console error');
      await context.close();
    },
  };
  await page.route('**/*', (route) => {
    if (new URL(route.request().url()).origin === origin) return route.continue();
    session.elsewhere.push(route.request().url());
    return route.abort();
  });
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/transactions') session.relayPosts++;
  });
  page.on('console', (message) => {
    if (message.type() === 'error') session.errors.push(message.text());
  });
  page.on('pageerror', (error) => session.errors.push(error.message));
  await page.goto(`${base}/`);
  return session;
}

/** Screenshots at desktop and phone width, and an axe scan with no serious or critical violation. */
export async function look(suite: Suite, page: Page, name: string): Promise<void> {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(suite.screenshots, `${name}-${size}.png`), fullPage: true });
    const { violations } = await new AxeBuilder({ page }).analyze();
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `${name} at ${size} width: accessibility`,
    );
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/** A Metaplex Token Metadata account for `mint` (MetadataV1: key, update authority, mint, name, symbol, uri, …). */
export async function giveMetaplexMetadata(chain: TestChain, updateAuthority: Address, mint: Address, name: string, symbol: string): Promise<void> {
  const padded = (text: string, size: number) => {
    const bytes = new Uint8Array(4 + size);
    new DataView(bytes.buffer).setUint32(0, size, true);
    bytes.set(new TextEncoder().encode(text), 4);
    return bytes;
  };
  const data = new Uint8Array(679);
  data[0] = 4;
  data.set(getAddressEncoder().encode(updateAuthority), 1);
  data.set(getAddressEncoder().encode(mint), 33);
  let offset = 65;
  for (const part of [padded(name, 32), padded(symbol, 10), padded('https://example.invalid/meta.json', 200)]) {
    data.set(part, offset);
    offset += part.length;
  }
  await rpcResult(chain.localnet.rpcUrl, 'localnet_setAccount', [
    await metaplexMetadataAddress(mint),
    { lamports: 5_616_720, data: getBase64Decoder().decode(data), owner: TOKEN_METADATA_PROGRAM },
  ]);
}

export async function accountLamports(chain: TestChain, address: Address): Promise<bigint | null> {
  const { value } = await chain.rpc.getAccountInfo(address, { encoding: 'base64' }).send();
  return value ? value.lamports : null;
}

export async function tokenAmount(chain: TestChain, address: Address): Promise<bigint> {
  const { value } = await chain.rpc.getTokenAccountBalance(address).send();
  return BigInt(value.amount);
}

/** The fees the chain recorded for these transactions (each must have succeeded). */
export async function chainFees(chain: TestChain, signatures: readonly string[]): Promise<bigint> {
  let total = 0n;
  for (const signature of signatures) {
    const transaction = await chain.rpc.getTransaction(signature as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.ok(transaction?.meta, `transaction ${signature} is on the chain`);
    assert.equal(transaction.meta.err, null, `transaction ${signature} succeeded`);
    total += transaction.meta.fee;
  }
  return total;
}

export async function newOwner(chain: TestChain, funding: bigint): Promise<KeyPairSigner> {
  const key = await createTestKey();
  const signer = await createKeyPairSignerFromBytes(key.secretKey);
  if (funding > 0n) {
    await airdropFactory({ rpc: chain.rpc, rpcSubscriptions: chain.rpcSubscriptions })({ recipientAddress: signer.address, lamports: lamports(funding), commitment: 'confirmed' });
  }
  return signer;
}

/** The main action: the button of the main region whose accessible name contains "Reclaim". */
export const mainButton = (page: Page) => page.getByRole('main').getByRole('button', { name: /reclaim/i });

/** Clicks the main button and waits for the result; returns the signatures shown. */
export async function reclaimAndWait(page: Page, confirm?: () => Promise<void>): Promise<string[]> {
  await page.locator('main button.big:not([disabled])').waitFor(WAIT);
  await mainButton(page).click();
  if (confirm) await confirm();
  const result = page.locator('.result');
  await result.waitFor(WAIT);
  await page.locator('.result h2', { hasText: 'Done' }).waitFor(WAIT);
  return result.locator('li[data-signature]').evaluateAll((items) => items.map((li) => li.getAttribute('data-signature')!));
}
