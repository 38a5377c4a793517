/**
 * The docs page in real headless Chromium (Debian's `chromium`, driven by playwright-core), with
 * every request to another origin blocked: the page must work offline. It shows both operations
 * and runs "Try it out" on generate_wallets with n=2. Screenshot: test-output/docs-generate-wallets.png.
 * It loads the document from /openapi.json (the address the README gives), and shows a lock on
 * the operations and an "Authorize" button only when the server has API_KEYS.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { createTestApp, type TestApp } from '@cinder/testkit';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// .ci/run installs Chromium and sets this: there, a missing browser is a failure, not a skip.
const REQUIRED = process.env.CINDER_BROWSER_REQUIRED === '1';
const OUTPUT = fileURLToPath(new URL('../../../../test-output/', import.meta.url));
const SCREENSHOT = `${OUTPUT}docs-generate-wallets.png`;

let t: TestApp;
let keyed: TestApp;
let url: string;
let keyedUrl: string;
let browser: Browser | undefined;

before(async () => {
  t = await createTestApp();
  keyed = await createTestApp({ apiKeys: ['docs-test-key'] }, { chain: t.chain });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keyedUrl = await keyed.app.listen({ host: '127.0.0.1', port: 0 });
});
after(async () => {
  await browser?.close();
  await keyed.close();
  await t.close();
});

/** Chromium, or a skip (a failure where CI requires it). */
async function launch(context: { skip(message: string): void }): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (REQUIRED) assert.fail(`Chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
    context.skip(`Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
    return undefined;
  }
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  return browser;
}

it('GET /docs: both operations, and "Try it out" on generate_wallets with n=2', { timeout: 120_000 }, async (context) => {
  const browser = await launch(context);
  if (!browser) return;
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  const elsewhere: string[] = [];
  const pageErrors: string[] = [];
  const asked: string[] = [];
  await page.route('**/*', (route) => {
    if (new URL(route.request().url()).origin === url) {
      asked.push(new URL(route.request().url()).pathname);
      return route.continue();
    }
    elsewhere.push(route.request().url());
    return route.abort();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));

  await page.goto(`${url}/docs`);
  const burn = page.locator('#operations-burn-burn_tokens');
  const wallets = page.locator('#operations-wallets-generate_wallets');
  await burn.waitFor();
  await wallets.waitFor();
  assert.match(await burn.locator('.opblock-summary-path').innerText(), /\/api\/burn_tokens/);
  assert.match(await wallets.locator('.opblock-summary-path').innerText(), /\/api\/generate_wallets/);

  await wallets.locator('.opblock-summary').click();
  await wallets.locator('button.try-out__btn').click();
  const n = wallets.locator('tr[data-param-name="n"] input');
  await n.fill('2');
  await wallets.locator('button.execute').click();
  const body = wallets.locator('.live-responses-table .response-col_description .highlight-code pre');
  await body.waitFor();
  const answer = JSON.parse(await body.innerText()) as { wallets: string[]; keypairs: { address: string }[] };
  assert.equal(await wallets.locator('.live-responses-table tr.response .response-col_status').innerText(), '200');

  mkdirSync(OUTPUT, { recursive: true });
  await wallets.scrollIntoViewIfNeeded();
  await page.screenshot({ path: SCREENSHOT, fullPage: true });

  assert.equal(answer.wallets.length, 2);
  for (const address of answer.wallets) assert.match(address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  assert.notEqual(answer.wallets[0], answer.wallets[1]);
  assert.deepEqual(
    answer.keypairs.map((k) => k.address),
    answer.wallets,
  );
  assert.deepEqual(elsewhere, [], 'the page asked for nothing outside this server');
  assert.deepEqual(pageErrors, []);

  // One address for the document: the page loaded /openapi.json and shows that address.
  assert.ok(asked.includes('/openapi.json'), asked.join(' '));
  assert.ok(!asked.includes('/docs/json'), asked.join(' '));
  assert.match(await page.locator('.topbar').innerText(), /\/openapi\.json/);
  // No API_KEYS: nothing to authorize, no lock on any operation.
  assert.equal(await page.locator('.opblock').count() > 5, true);
  assert.equal(await page.locator('button.authorize').count(), 0, 'no Authorize button');
  assert.equal(await page.locator('.authorization__btn').count(), 0, 'no lock');
});

it('GET /docs with API_KEYS: "Authorize" and a lock on every /api operation', { timeout: 120_000 }, async (context) => {
  const browser = await launch(context);
  if (!browser) return;
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(`${keyedUrl}/docs`);
  await page.locator('#operations-burn-burn_tokens').waitFor();
  await page.locator('button.authorize').waitFor();
  const apiOperations = await page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path^="/api/"]') }).count();
  assert.ok(apiOperations >= 5, `${apiOperations} /api operations`);
  assert.equal(await page.locator('.opblock .authorization__btn').count(), apiOperations);
});
