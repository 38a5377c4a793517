/**
 * A newcomer's first hour, as the README and its pages tell it, on the default start (no fee
 * sponsor, no API keys, the default rate limits): `npm run demo:token` against the running service
 * and its chain, then what it prints, run as printed: the burn `curl`, the reclaim preview `curl`,
 * and the "Keyless, step by step" script (extracted from docs/keyless.md, run with plain `node`
 * and the key file demo:token wrote). Each must succeed and the chain must show what it says, to
 * the lamport. (The sponsored variant of the script: test/cli/readmeKeyless.test.ts.)
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { createKeyPairSignerFromBytes, getBase58Encoder, type Address, type Signature } from '@solana/kit';
import { fetchMint, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { loadConfig } from '@cinder/service';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { getLamports } from '@cinder/testkit';
import { codeBlocksOf, ROOT, sectionOf } from './readmePages.ts';

const KEYLESS = { page: 'docs/keyless.md', heading: 'Keyless, step by step: sign a prepared transaction with @solana/kit' };
const TRY_A_BURN = { page: 'docs/local-chain.md', heading: 'Try a burn on the local chain' };

let t: TestApp;
let url: string;
let work: string;

before(async () => {
  // The default start: the rate limits a newcomer meets (createTestApp raises them otherwise), no sponsor, no API keys.
  t = await createTestApp({ rateLimit: loadConfig({}).rateLimit });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  // Inside the checkout, so that `@solana/kit` resolves for the script as in a project that installed it.
  await mkdir(join(ROOT, 'test-output'), { recursive: true });
  work = await mkdtemp(join(ROOT, 'test-output', 'readme-demo-'));
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

function bash(command: string, cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('bash', ['-euo', 'pipefail', '-c', command], { cwd, env: { PATH: process.env.PATH!, HOME: work, ...env }, timeout: 150_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it('demo:token makes a wallet for every tutorial; its burn, its preview and the docs\' keyless script run as printed', { timeout: 300_000 }, async () => {
  const demoCommand = /^npm run demo:token\b/m.exec(await sectionOf(TRY_A_BURN.page, TRY_A_BURN.heading))?.[0];
  assert.equal(demoCommand, 'npm run demo:token', `${TRY_A_BURN.page} says to run npm run demo:token`);
  const script = codeBlocksOf(await sectionOf(KEYLESS.page, KEYLESS.heading)).find((block) => block.lang === 'js')?.code;
  assert.ok(script, 'the keyless section has a js block');
  const scriptName = /^\/\/ (\S+\.mjs)/.exec(script)?.[1];
  assert.ok(scriptName, 'the script names its file');

  // 1. demo:token, as npm start prints it for these ports; its key file goes to TMPDIR.
  const tmp = await mkdtemp(join(work, 'tmp-'));
  const made = await bash(demoCommand, ROOT, {
    CINDER_URL: url,
    LOCALNET_RPC_URL: t.chain.localnet.rpcUrl,
    LOCALNET_WS_URL: t.chain.localnet.wsUrl,
    TMPDIR: tmp,
    npm_config_update_notifier: 'false',
  });
  assert.equal(made.code, 0, `${made.stdout}\n${made.stderr}`);
  const out = made.stdout;
  const wallet = /^wallet (\S+) holds 1 SOL, 1,234\.5 tokens of mint (\S+) \(account (\S+)\), and 2 empty token accounts: (\S+) \(SPL Token\) and (\S+) \(Token-2022\)\.$/m.exec(out);
  assert.ok(wallet, out);
  const [, owner, mint, , emptyClassic, empty2022] = wallet as unknown as [string, Address, Address, Address, Address, Address];
  const base58 = /^its key in base58 \(userPrivateKey\): ([1-9A-HJ-NP-Za-km-z]{87,88})$/m.exec(out)?.[1];
  const keyFile = /^its key as a solana-keygen file: (\S+)$/m.exec(out)?.[1];
  assert.ok(base58 && keyFile, out);

  // The key file: new, in TMPDIR, the owner's only, the same key as the base58 one.
  assert.equal(keyFile, join(tmp, `cinder-demo-${owner}.json`));
  assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
  const bytes = new Uint8Array(JSON.parse(await readFile(keyFile, 'utf8')) as number[]);
  assert.deepEqual(bytes, new Uint8Array(getBase58Encoder().encode(base58)));
  assert.equal((await createKeyPairSignerFromBytes(bytes)).address, owner);
  // The empty accounts are of both programs.
  for (const [account, program] of [[emptyClassic, TOKEN_PROGRAM_ADDRESS], [empty2022, TOKEN_2022_PROGRAM_ADDRESS]] as const) {
    assert.equal((await t.chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send()).value?.owner, program);
  }

  const [burnCurl, previewCurl] = out.split('\n').filter((line) => line.startsWith('curl '));
  const keylessLine = out.split('\n').find((line) => / node reclaim\.mjs$/.test(line));
  assert.ok(burnCurl && previewCurl && keylessLine, out);

  // 2. The preview: the two empty accounts to close, the tokens kept, nothing in the way.
  const preview = await bash(previewCurl, work, {});
  assert.equal(preview.code, 0, preview.stderr);
  const previewed = JSON.parse(preview.stdout) as { accounts: { address: string; action: string }[]; summary: { close: number; keep: number; problem: string | null } };
  assert.deepEqual(
    previewed.accounts.filter((a) => a.action === 'close').map((a) => a.address).sort(),
    [emptyClassic, empty2022].sort(),
    preview.stdout,
  );
  assert.equal(previewed.summary.problem, null, preview.stdout);

  // 3. The burn, as printed: the answer the docs show.
  const burned = await bash(burnCurl, work, {});
  assert.equal(burned.code, 0, burned.stderr);
  const burn = JSON.parse(burned.stdout) as { status: string; message: string };
  assert.equal(burn.status, 'success', burned.stdout);
  assert.match(burn.message, /^Burned 1,234\.5 of \S+ and closed 1 account; reclaimed 0\.00203928 SOL/);
  assert.equal((await fetchMint(t.chain.rpc, mint)).data.supply, 0n);

  // 4. The keyless script, as docs/keyless.md has it, run by the line demo:token printed: the owner pays.
  await writeFile(join(work, scriptName), script);
  const rents = (await Promise.all([emptyClassic, empty2022].map((a) => t.chain.rpc.getBalance(a).send()))).reduce((sum, { value }) => sum + value, 0n);
  const ownerBefore = await getLamports(t.chain, owner);
  const keyless = await bash(keylessLine, work, {});
  assert.equal(keyless.code, 0, `${keyless.stdout}\n${keyless.stderr}`);
  const outcome = /^success (\S+) Relayed 1 transaction; it landed\.$/m.exec(keyless.stdout);
  assert.ok(outcome, keyless.stdout);
  for (const account of [emptyClassic, empty2022]) assert.equal((await t.chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send()).value, null);
  const landed = await t.chain.rpc.getTransaction(outcome[1] as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.ok(landed?.meta);
  assert.equal(landed.transaction.message.accountKeys[0], owner, 'the owner paid the fee');
  assert.equal(await getLamports(t.chain, owner), ownerBefore + rents - landed.meta.fee);
  assert.ok(!t.logs().includes(base58), 'the key is never logged');
});
