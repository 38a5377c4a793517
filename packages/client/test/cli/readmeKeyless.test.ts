/**
 * Runs the "Keyless, step by step" script of docs/keyless.md as written (plain `node`, importing
 * @solana/kit as an installed project would) in its sponsored variant (SPONSORED=1) against the
 * real app with a fee sponsor, for a wallet that holds 0 SOL: afterwards the chain must show what
 * the page says, to the lamport (the owner gets the rent minus the fees the chain recorded, the
 * sponsor is unchanged). The variant where the owner pays, on the default start, with the wallet
 * and key file of demo:token: test/cli/readmeDemo.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { airdropFactory, createKeyPairSignerFromBytes, lamports, type Signature } from '@solana/kit';
import { loadSponsor, type Sponsor } from '@cinder/service';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { createAta, createAuxTokenAccount, createFundedSigner, createTestMint, getLamports } from '@cinder/testkit';
import { codeBlocksOf, ROOT, sectionOf } from './readmePages.ts';

const PAGE = 'docs/keyless.md';
const HEADING = 'Keyless, step by step: sign a prepared transaction with @solana/kit';
const TOKEN_ACCOUNT_RENT = 2_039_280n;

let t: TestApp;
let url: string;
let work: string;
let sponsor: Sponsor;

before(async () => {
  // Inside the checkout, so that `@solana/kit` resolves for the script as in a project that installed it.
  await mkdir(join(ROOT, 'test-output'), { recursive: true });
  work = await mkdtemp(join(ROOT, 'test-output', 'readme-keyless-'));
  const sponsorKey = await createTestKey();
  await writeFile(join(work, 'sponsor.json'), sponsorKey.keygenJson, { mode: 0o600 });
  sponsor = await loadSponsor(join(work, 'sponsor.json'));
  t = await createTestApp({}, { sponsor });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  await airdropFactory({ rpc: t.chain.rpc, rpcSubscriptions: t.chain.rpcSubscriptions })({
    recipientAddress: sponsor.signer.address,
    lamports: lamports(1_000_000_000n),
    commitment: 'confirmed',
  });
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

it('the docs\' keyless script reclaims a 0-SOL wallet without giving Cinder its key; the sponsor ends where it began', { timeout: 180_000 }, async () => {
  const script = codeBlocksOf(await sectionOf(PAGE, HEADING)).find((block) => block.lang === 'js')?.code;
  assert.ok(script, 'the section has a js block');
  const name = /^\/\/ (\S+\.mjs)/.exec(script)?.[1];
  assert.ok(name, 'the script names its file');

  // A wallet with 0 SOL and two empty token accounts, made by someone else.
  const { signer: funder } = await createFundedSigner(t.chain);
  const ownerKey = await createTestKey();
  const owner = await createKeyPairSignerFromBytes(ownerKey.secretKey);
  const mint = await createTestMint(t.chain, funder, { decimals: 0 });
  const accounts = [await createAta(t.chain, funder, owner.address, mint), await createAuxTokenAccount(t.chain, funder, owner.address, mint)];
  assert.equal(await getLamports(t.chain, owner.address), 0n);
  const keypair = join(work, 'id.json');
  await writeFile(keypair, ownerKey.keygenJson, { mode: 0o600 });
  await writeFile(join(work, name), script);
  const sponsorBefore = await getLamports(t.chain, sponsor.signer.address);

  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [name], { cwd: work, env: { PATH: process.env.PATH, HOME: work, KEYPAIR: keypair, CINDER_URL: url, SPONSORED: '1' }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  const outcome = /^success (\S+) Relayed 1 transaction; it landed\.$/m.exec(result.stdout);
  assert.ok(outcome, result.stdout);
  assert.ok(!t.logs().includes(ownerKey.base58SecretKey) && !t.logs().includes(ownerKey.keygenJson), 'the key never reached the service');

  for (const account of accounts) assert.equal((await t.chain.rpc.getAccountInfo(account, { encoding: 'base64' }).send()).value, null);
  const landed = await t.chain.rpc.getTransaction(outcome[1] as Signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.ok(landed?.meta);
  assert.equal(await getLamports(t.chain, owner.address), 2n * TOKEN_ACCOUNT_RENT - landed.meta.fee);
  assert.equal(await getLamports(t.chain, sponsor.signer.address), sponsorBefore);
});
