/**
 * The page made for hundreds of accounts, in real Chromium against the embedded chain (./harness.ts):
 * a 300-account wallet (empty accounts, dust, NFTs, a frozen account holding tokens) shown in groups
 * with counts and totals, "select all to burn" and its confirmation, one progress bar while sending,
 * the result naming what was burned and closed; a 0-SOL wallet on a service without a sponsor; a
 * rate limit the page waits out by itself; the generator's one phrase for many wallets; an
 * address looked at read-only. Money is checked on chain to the lamport.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Address, type KeyPairSigner } from '@solana/kit';
import {
  ABANDON,
  createAta,
  createTestApp,
  createTestMint,
  freezeTokenAccount,
  getLamports,
  mintTokens,
  referenceAddressAt,
  writeEmptyTokenAccounts,
} from '@cinder/testkit';
import { formatUnits, short, sol } from '../src/format.ts';
import {
  accountLamports,
  browserSuite,
  chainFees,
  giveMetaplexMetadata,
  look,
  mainButton,
  needBrowser,
  newOwner,
  open,
  tokenAmount,
  WAIT,
  type Suite,
} from './harness.ts';
import { TEST_WALLET_NAME } from './testWallet.ts';

const suite: Suite = browserSuite('large-wallet');
const H = 0x80000000;

/** A token account of `owner` holding `amount` of a new mint (named when `name` is given). */
async function dust(owner: Address, amount: bigint, name?: [string, string], decimals = 6): Promise<{ mint: Address; account: Address }> {
  const { t, funder } = suite;
  const mint = await createTestMint(t.chain, funder, { decimals, freezeAuthority: funder.address });
  const account = await createAta(t.chain, funder, owner, mint);
  await mintTokens(t.chain, funder, mint, account, amount);
  if (name) await giveMetaplexMetadata(t.chain, funder.address, mint, name[0], name[1]);
  return { mint, account };
}

async function connect(page: import('playwright-core').Page): Promise<void> {
  await page.getByRole('button', { name: `Connect ${TEST_WALLET_NAME}` }).click();
  await page.locator('dd[data-total="net"]').waitFor(WAIT);
}

const groupCount = async (page: import('playwright-core').Page, group: string) =>
  Number(await page.locator(`[data-group="${group}"] [data-count]`).getAttribute('data-count'));
const groupLamports = async (page: import('playwright-core').Page, group: string) =>
  BigInt((await page.locator(`[data-group="${group}"] [data-lamports-total]`).getAttribute('data-lamports-total'))!);

describe('the page with a 300-account wallet', () => {
  it('groups the accounts with counts and totals; select all to burn lists every token; one progress bar; the result names what was burned and closed; to the lamport', { timeout: 900_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t, funder } = suite;
    const owner: KeyPairSigner = await newOwner(t.chain, 1_000_000_000n);
    // 283 empty accounts, 12 holding dust (8 named), 4 NFTs, 1 frozen account holding tokens: 300.
    await writeEmptyTokenAccounts(t.chain, owner.address, 283);
    const dusts: { mint: Address; account: Address; amount: bigint }[] = [];
    for (let i = 0; i < 12; i++) {
      const amount = BigInt(1_000 + i * 1_111);
      dusts.push({ ...(await dust(owner.address, amount, i < 8 ? [`Dust Coin ${i}`, `DST${i}`] : undefined)), amount });
    }
    const nfts: Address[] = [];
    for (let i = 0; i < 4; i++) nfts.push((await dust(owner.address, 1n, [`Kept NFT ${i}`, `NFT${i}`], 0)).account);
    const frozen = await dust(owner.address, 5_000_000n, ['Frozen Coin', 'FRZ']);
    await freezeTokenAccount(t.chain, funder, frozen.account, frozen.mint);

    const s = await open(suite, owner);
    const { page } = s;
    await connect(page);
    await page.locator('[data-group="skip"]').waitFor(WAIT);

    // Groups: count and the rent each holds, to the lamport as on chain.
    assert.equal(await groupCount(page, 'close'), 283);
    assert.equal(await groupCount(page, 'burn'), 12);
    assert.equal(await groupCount(page, 'nft'), 4);
    assert.equal(await groupCount(page, 'skip'), 1);
    assert.equal(await page.locator('[data-group="kept"]').count(), 0);
    assert.equal(await groupLamports(page, 'close'), 283n * 2_039_280n);
    let dustRent = 0n;
    for (const d of dusts) dustRent += (await accountLamports(t.chain, d.account))!;
    assert.equal(await groupLamports(page, 'burn'), dustRent);
    assert.match(await page.locator('[data-group="skip"]').innerText(), /Frozen by the token’s issuer/);
    // Every named token shows its mint beside the name; a long group folds its rows away.
    for (const [i, d] of dusts.slice(0, 8).entries()) {
      const text = await page.locator(`tr[data-account="${d.account}"]`).innerText();
      assert.ok(text.includes(`Dust Coin ${i} (DST${i})`) && text.includes(`mint ${short(d.mint)}`), text);
    }
    assert.equal(await page.locator('[data-group="close"] details').count(), 1);
    assert.equal(await page.locator('[data-group="close"] details[open]').count(), 0);
    // One amount on the button: what the person receives, the same as "You receive".
    const net = await page.locator('dd[data-total="net"]').innerText();
    assert.equal(await mainButton(page).innerText(), `Reclaim ${net}`);
    await look(suite, page, 'large-1-before');

    // Select all to burn: the confirmation lists every token with its amount, none of the NFTs or the frozen one.
    await page.getByRole('button', { name: 'Select all to burn (12 tokens)' }).click();
    await page.getByRole('button', { name: /^Burn 12 tokens and reclaim \d/ }).waitFor(WAIT);
    await mainButton(page).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor(WAIT);
    const listed = await dialog.locator('li[data-burn]').evaluateAll((items) => items.map((li) => [li.getAttribute('data-burn'), (li as HTMLElement).innerText]));
    assert.deepEqual(listed.map(([mint]) => mint).sort(), dusts.map((d) => d.mint).sort());
    for (const [mint, text] of listed) {
      const d = dusts.find((x) => x.mint === mint)!;
      assert.ok(text!.includes(formatUnits(d.amount, 6)), `${text} names the amount`);
      assert.ok(text!.includes(`mint ${short(d.mint)}`), text!);
    }
    assert.doesNotMatch(await dialog.innerText(), /NFT|FRZ/);
    await look(suite, page, 'large-2-confirm');

    // Hold the relay until the page has shown its progress: then one request through, the rest after.
    const toClose = 283 + 12;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let relayed = 0;
    await page.route('**/api/transactions', async (route) => {
      if (route.request().method() === 'POST' && relayed++ > 0) await held;
      await route.continue();
    });
    const before = await getLamports(t.chain, owner.address);
    await dialog.getByRole('button', { name: 'Burn and reclaim' }).click();
    const progress = page.locator('[data-progress]');
    await page.waitForFunction(() => Number(document.querySelector('[data-progress]')?.getAttribute('data-progress')?.split('/')[0]) > 0, undefined, WAIT);
    const [closedSoFar, total] = (await progress.getAttribute('data-progress'))!.split('/').map(Number);
    assert.equal(total, toClose, 'the progress counts every account the job closes');
    assert.ok(closedSoFar! > 0 && closedSoFar! < toClose, `${closedSoFar} closed while the rest wait`);
    assert.match(await progress.innerText(), new RegExp(`^${closedSoFar} of ${toClose} accounts closed$`));
    // Signed transactions never read "waiting for your approval".
    const states = await page.locator('.progress li[data-state]').evaluateAll((items) => items.map((li) => li.getAttribute('data-state')));
    assert.ok(states.length > 1);
    assert.ok(!states.includes('waiting'), `no signed transaction waits for approval: ${states.join(',')}`);
    await page.locator('.progress summary').click();
    await look(suite, page, 'large-3-during');
    release();

    await page.locator('.result h2', { hasText: 'Done' }).waitFor(WAIT);
    const signatures = await page.locator('.result li[data-signature]').evaluateAll((items) => items.map((li) => li.getAttribute('data-signature')!));
    assert.equal(s.wallet.calls.length, 1, 'one approval');
    const fees = await chainFees(t.chain, signatures);
    assert.equal(await getLamports(t.chain, owner.address), before + 283n * 2_039_280n + dustRent - fees, "owner's change = rents − fees");
    for (const d of dusts) assert.equal(await accountLamports(t.chain, d.account), null, 'burned and closed');
    for (const nft of nfts) assert.equal(await tokenAmount(t.chain, nft), 1n, 'NFTs kept');
    assert.equal(await tokenAmount(t.chain, frozen.account), 5_000_000n, 'the frozen account is untouched');

    // The result names what was burned (each token and amount) and what was closed; no stale warning.
    assert.match(await page.locator('[data-result="summary"]').innerText(), new RegExp(`^Closed ${toClose} accounts; you received ${sol(283n * 2_039_280n + dustRent - fees).replace('.', '\\.')} after fees\\.$`));
    assert.equal(await page.locator('[data-result="closed"]').innerText(), 'Closed: 283 empty accounts, and 12 accounts after burning their tokens.');
    const burned = await page.locator('[data-result="burned"] li').allInnerTexts();
    assert.equal(burned.length, 12);
    for (let i = 0; i < 8; i++) assert.ok(burned.some((line) => line.includes(`DST${i}`) && line.includes(`(Dust Coin ${i})`)), `DST${i} named as burned`);
    await page.locator('[data-group="close"]').waitFor({ state: 'detached', ...WAIT });
    assert.equal(await page.locator('[data-note="problem"]').count(), 0, 'no warning left from before');
    // The preview read after it: only the 4 NFTs and the frozen account are left.
    assert.equal(await page.locator('[data-group="burn"]').count(), 0);
    assert.equal(await groupCount(page, 'nft'), 4);
    assert.equal(await groupCount(page, 'skip'), 1);
    await look(suite, page, 'large-4-result');
    await s.check();
  });
});

describe('the page where a wallet cannot pay or a limit bites', () => {
  it('a 0-SOL wallet on a service without a sponsor gets the plain next step, and no row promises SOL', { timeout: 300_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t, funder } = suite;
    const plain = await createTestApp({}, { chain: t.chain });
    try {
      const base = await plain.app.listen({ host: '127.0.0.1', port: 0 });
      const owner = await newOwner(t.chain, 0n);
      const mint = await createTestMint(t.chain, funder);
      const account = await createAta(t.chain, funder, owner.address, mint);
      const s = await open(suite, owner, base);
      await connect(s.page);
      const note = s.page.locator('[data-note="fund"]');
      await note.waitFor(WAIT);
      assert.match(await note.innerText(), /Send about 0\.0009 SOL to this wallet to pay its fees, or ask the operator to turn on the fee sponsor\./);
      assert.doesNotMatch(await note.innerText(), /rent-exempt/);
      const row = await s.page.locator(`tr[data-account="${account}"]`).innerText();
      assert.match(row, /Closes once this wallet can pay its fees/);
      assert.match(await s.page.locator('[data-group="close"] [data-lamports-total]').innerText(), /holding 0\.00203928 SOL of rent/);
      assert.equal(await s.page.locator('dd[data-total="net"]').innerText(), '0 SOL until the fees can be paid');
      const button = mainButton(s.page);
      assert.equal(await button.innerText(), 'Reclaim', 'the button promises no amount');
      assert.equal(await button.isDisabled(), true);
      await look(suite, s.page, 'large-5-zero-sol');
      await s.check();
    } finally {
      await plain.close();
    }
  });

  it('over the preview limit the page counts down and asks again by itself: the preview it asked for arrives', { timeout: 300_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t } = suite;
    const limited = await createTestApp({ rateLimitPreviewPerMin: 1 }, { chain: t.chain });
    try {
      const base = await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const owner = await newOwner(t.chain, 1_000_000_000n);
      const coin = await dust(owner.address, 7_000_000n, ['Retry Coin', 'RTY']);
      const s = await open(suite, owner, base);
      await connect(s.page);
      // The first preview used the minute's budget: choosing a burn asks for another, refused with 429.
      await s.page.getByRole('checkbox', { name: /Burn 7 RTY/ }).check();
      await s.page.locator('[data-note="retry"]').waitFor(WAIT);
      assert.match(await s.page.locator('[data-note="retry"]').innerText(), /tries again by itself in \d+ seconds?/);
      // Nobody clicks anything: the page asks again when the server said, and the burn's preview arrives.
      await s.page.locator(`tr[data-account="${coin.account}"]`, { hasText: 'Burns 7 RTY and closes' }).waitFor(WAIT);
      assert.equal(await s.page.locator('[data-note="retry"]').count(), 0, 'the countdown is gone');
      await s.page.getByRole('button', { name: /^Burn 1 token and reclaim \d/ }).waitFor(WAIT);
      // Chromium logs the refused request (429) as a console error of its own: expected here, nothing else.
      s.errors = s.errors.filter((e) => !/status of 429/.test(e));
      await s.check();
    } finally {
      await limited.close();
    }
  });
});

describe('the page does what the API does', () => {
  it('generates many wallets from one phrase (hd) with the derivation note; fields carry the limits; refusals name the form’s labels', { timeout: 300_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const s = await open(suite, await newOwner(suite.t.chain, 0n));
    const { page } = s;
    await page.getByRole('button', { name: 'Generate wallets' }).click();
    const count = page.getByLabel('Number of wallets');
    assert.equal(await count.getAttribute('max'), String(suite.t.config.maxWalletsPerRequest));
    await page.getByLabel('Recovery phrase').selectOption('12');
    assert.equal(await count.getAttribute('max'), String(suite.t.config.maxMnemonicWalletsPerRequest));
    assert.equal(await page.getByLabel('Address starts with').getAttribute('maxlength'), String(suite.t.config.maxVanityLength));

    // A refusal in the form's words: "Address starts with", never the parameter's name.
    await page.getByLabel('Recovery phrase').selectOption('');
    await page.getByLabel('Address starts with').fill('0');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor(WAIT);
    assert.match(await alert.innerText(), /^Address starts with: /);
    assert.doesNotMatch(await alert.innerText(), /\bprefix\b|MAX_/);
    await page.getByLabel('Address starts with').fill('');

    await page.getByLabel('Recovery phrase').selectOption('hd12');
    await count.fill('3');
    const note = page.locator('[data-note="derivation"]');
    assert.match(await note.innerText(), /m\/44'\/501'\/i'\/0'.*Phantom, Solflare, Backpack/s);
    assert.equal(await page.getByLabel('Address starts with').isDisabled(), true, 'hd addresses cannot be searched for');
    await look(suite, page, 'large-6-generate-hd');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.locator('[data-result="phrase"]').waitFor(WAIT);
    const phrase = await page.locator('[data-result="phrase"] code').innerText();
    assert.equal(phrase.split(' ').length, 12);
    const addresses = await page.locator('code[data-address]').evaluateAll((codes) => codes.map((c) => c.getAttribute('data-address')!));
    const paths = await page.locator('code[data-path]').evaluateAll((codes) => codes.map((c) => c.getAttribute('data-path')!));
    assert.deepEqual(paths, ["m/44'/501'/0'/0'", "m/44'/501'/1'/0'", "m/44'/501'/2'/0'"]);
    // Each wallet is the one Phantom derives from that phrase at its path.
    addresses.forEach((address, i) => assert.equal(address, referenceAddressAt(phrase, [44 + H, 501 + H, i + H, H])));
    assert.notEqual(ABANDON.mnemonic, phrase);
    s.errors = s.errors.filter((e) => !/status of 400/.test(e));
    await s.check();
  });

  it('a visitor pastes an address and sees its preview, read-only: no burn choice, no button, no wallet asked', { timeout: 300_000 }, async (context) => {
    if (!needBrowser(suite, context)) return;
    const { t } = suite;
    const owner = await newOwner(t.chain, 1_000_000_000n);
    await writeEmptyTokenAccounts(t.chain, owner.address, 3);
    const coin = await dust(owner.address, 2_500_000n, ['Looked Coin', 'LOOK']);
    const visitor = await newOwner(t.chain, 0n);
    const s = await open(suite, visitor);
    const { page } = s;
    await page.getByLabel('Wallet address').fill(owner.address);
    await page.getByRole('button', { name: 'See its accounts' }).click();
    await page.locator('[data-group="burn"]').waitFor(WAIT);
    assert.equal(await groupCount(page, 'close'), 3);
    assert.equal(await groupLamports(page, 'close'), 3n * 2_039_280n);
    assert.match(await page.locator(`tr[data-account="${coin.account}"]`).innerText(), /Looked Coin \(LOOK\)/);
    assert.match(await page.locator('[data-note="read-only"]').innerText(), new RegExp(`looking at ${owner.address} without its wallet`));
    assert.equal(await page.locator('input[type="checkbox"]').count(), 0, 'no burn choice');
    assert.equal(await mainButton(page).count(), 0, 'no reclaim button');
    assert.equal(s.wallet.calls.length, 0, 'no wallet was asked for anything');
    await look(suite, page, 'large-7-read-only');
    await s.check();
  });
});
