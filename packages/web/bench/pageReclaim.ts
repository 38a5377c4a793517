/**
 * A dust wallet of any size in the web app: `npm run bench:any-size -w @cinder/web` (a few minutes;
 * needs Chromium, as the browser tests do).
 *
 * What a person sees: the time from the click on "Reclaim" to the page's "Done" (every account
 * closed and every transaction confirmed), in real Chromium with the test's Wallet Standard wallet
 * signing (one approval), against the embedded chain with a cluster's confirmation timing
 * (validator timing: a sent transaction executes a moment later and is confirmed a slot after), on a
 * service with a fee sponsor and a deployment's default limits. 70% of each size's accounts are SPL
 * Token, 30% Token-2022, as in the browser test. For each size, in the same process:
 * - 0 SOL: the sponsor pays only the first transaction, the rest the owner pays once it landed;
 * - baseline: the same wallet holding 0.05 SOL, the owner paying everything.
 */
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { createSponsoredTestApp, deploymentLimits, writeEmptyTokenAccounts } from '@cinder/testkit';
import { launchChromium, mainButton, newOwner, open, WAIT, type Suite } from '../test/harness.ts';
import { TEST_WALLET_NAME } from '../test/testWallet.ts';

const SIZES = (process.env.BENCH_SIZES ?? '100,1000,5000').split(',').map(Number);

async function run(browser: NonNullable<Suite['browser']>, accounts: number, funded: boolean) {
  const s = await createSponsoredTestApp(10_000_000_000n, deploymentLimits(), { timing: 'validator' });
  try {
    const url = await s.t.app.listen({ host: '127.0.0.1', port: 0 });
    const owner = await newOwner(s.t.chain, funded ? 50_000_000n : 0n);
    const token2022 = Math.round(accounts * 0.3);
    await writeEmptyTokenAccounts(s.t.chain, owner.address, accounts - token2022, TOKEN_PROGRAM_ADDRESS);
    await writeEmptyTokenAccounts(s.t.chain, owner.address, token2022, TOKEN_2022_PROGRAM_ADDRESS);
    const session = await open({ browser, url } as Suite, owner);
    const { page } = session;
    await page.getByRole('button', { name: `Connect ${TEST_WALLET_NAME}` }).click();
    await page.locator('main button.big:not([disabled])').waitFor(WAIT);
    const started = performance.now();
    await mainButton(page).click();
    await page.locator('.result h2', { hasText: 'Done' }).waitFor({ timeout: 600_000 });
    const ms = performance.now() - started;
    const transactions = await page.locator('.result li[data-signature]').count();
    const summary = await page.locator('[data-result="summary"]').innerText();
    await session.context.close();
    return { transactions, approvals: session.wallet.calls.length, summary, ms };
  } finally {
    await s.close();
  }
}

const browser = await launchChromium();
if (!browser) throw new Error('Chromium not found: apt-get install chromium (or set CHROMIUM_PATH)');
try {
  console.log('accounts  wallet                transactions  approvals  click to "Done"  page says');
  for (const accounts of SIZES) {
    for (const funded of [false, true]) {
      const wallet = funded ? 'baseline: owner pays' : '0 SOL, sponsored';
      try {
        const r = await run(browser, accounts, funded);
        console.log(`${String(accounts).padStart(8)}  ${wallet.padEnd(20)}  ${String(r.transactions).padStart(12)}  ${String(r.approvals).padStart(9)}  ${(r.ms / 1000).toFixed(2).padStart(13)} s  ${r.summary}`);
      } catch (error) {
        console.log(`${String(accounts).padStart(8)}  ${wallet.padEnd(20)}  failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
  }
} finally {
  await browser.close();
}
