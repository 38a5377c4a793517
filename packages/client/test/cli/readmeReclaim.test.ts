/**
 * Runs every example of the "Reclaim a whole wallet, and keyless use, from the SDK and the CLI"
 * section of docs/sdk-and-cli.md (the page the README links to for them), as written, against the real app and a wallet on the embedded chain: the SDK
 * scripts with plain `node` (importing `@cinder/client` and `@solana/kit` as an installed project
 * would), and each shell block with `cinder` on the PATH. Only the server address is substituted,
 * and the comment line where the wallet signs is replaced by a signer with @solana/kit
 * (packages/client/test/cli/walletSign.ts). Afterwards the chain must show what each example says it does.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fetchMint } from '@solana-program/token';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { getLamports } from '@cinder/testkit';
import { stillOpen, walletToReclaim, type ReclaimWallet } from '../sdk/reclaimFixture.ts';
import { codeBlocksOf, ROOT, sectionOf } from './readmePages.ts';

/** Where the examples live. */
const PAGE = 'docs/sdk-and-cli.md';
const EXAMPLE_URL = 'http://127.0.0.1:8080';
const HEADING = 'Reclaim a whole wallet, and keyless use, from the SDK and the CLI';
/** The line of the keyless shell example where the user's wallet signs. */
const WALLET_SIGNS = /^# the wallet signs tx\.json.*$/m;

let t: TestApp;
let url: string;
let work: string;
let bin: string;

before(async () => {
  t = await createTestApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  // Inside the checkout, so that `@cinder/client` (built by npm test before the tests run) and `@solana/kit`
  // resolve for the scripts as they do in a project that installed both.
  await mkdir(join(ROOT, 'test-output'), { recursive: true });
  work = await mkdtemp(join(ROOT, 'test-output', 'readme-reclaim-'));
  bin = join(work, 'bin');
  await mkdir(bin);
  await symlink(join(ROOT, 'packages', 'client', 'bin', 'cinder.js'), join(bin, 'cinder'));
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

function run(command: string, args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

/** A home whose ~/.config/solana/id.json is `w`'s key, with `others` as ~/wallets/<n>.json. */
async function homeFor(w: ReclaimWallet, others: ReclaimWallet[]): Promise<string> {
  const home = await mkdtemp(join(work, 'home-'));
  await mkdir(join(home, '.config', 'solana'), { recursive: true });
  await writeFile(join(home, '.config', 'solana', 'id.json'), JSON.stringify([...w.secretKey]), { mode: 0o600 });
  await mkdir(join(home, 'wallets'));
  for (const [i, other] of others.entries()) await writeFile(join(home, 'wallets', `${i}.json`), JSON.stringify([...other.secretKey]), { mode: 0o600 });
  return home;
}

/** The wallet ends as a reclaim with `burn: [its kept mint]` leaves it: closable and kept accounts closed, the frozen one kept, no supply. */
async function assertReclaimed(w: ReclaimWallet, where: string): Promise<void> {
  assert.deepEqual(await stillOpen(t.chain, [...w.closable, w.kept!.account]), [], where);
  assert.deepEqual(await stillOpen(t.chain, [w.frozen!]), [w.frozen!], where);
  assert.equal((await fetchMint(t.chain.rpc, w.kept!.mint)).data.supply, 0n, where);
}

it('every example of the docs\' reclaim and keyless section runs and does what it says', { timeout: 600_000 }, async () => {
  const blocks = codeBlocksOf(await sectionOf(PAGE, HEADING));
  assert.ok(blocks.length >= 5, `found ${blocks.length} examples`);

  for (const block of blocks) {
    const where = `${PAGE} example:\n${block.code}`;
    if (block.lang === 'text') {
      // Output shown as the CLI prints it.
      assert.match(block.code, /^\$ cinder reclaim --owner \S+\nWallet \S+: \d+ token accounts\nACCOUNT +MINT +ACTION +LAMPORTS +CODE\n/, where);
      assert.match(block.code, /^accounts: \d+ \(.*\)\ntransactions: \d+\nreclaim: [0-9.]+ SOL\nfees: [0-9.]+ SOL\nnet: [+-]?[0-9.]+ SOL\n/m, where);
      continue;
    }
    const w = await walletToReclaim(t.chain, { classic: 2 });
    const others = await Promise.all([0, 1].map(() => walletToReclaim(t.chain, { classic: 1, token2022: false, wrappedSol: false, frozen: false, kept: false })));
    const home = await homeFor(w, others);
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, CINDER_URL: url, ADDRESS: w.signer.address, SOLANA_KEY: w.key, MINT: w.kept!.mint };
    const cwd = await mkdtemp(join(work, 'run-'));
    const before = await getLamports(t.chain, w.signer.address);

    if (block.lang === 'js') {
      const name = /^\/\/ (\S+\.mjs)/.exec(block.code)?.[1];
      assert.ok(name, `a script name in the first line:\n${where}`);
      await writeFile(join(cwd, name), block.code);
      const result = await run(process.execPath, [name], cwd, env);
      assert.equal(result.code, 0, `${where}\n${result.stdout}\n${result.stderr}`);
      assert.ok(!`${result.stdout}${result.stderr}`.includes(w.key), 'no key printed');
      if (name === 'reclaim.mjs') assert.match(result.stdout, /^success as previewed /m, where);
      else assert.match(result.stdout, /^success /m, where);
      await assertReclaimed(w, where);
      assert.ok((await getLamports(t.chain, w.signer.address)) > before, 'the rent came back');
    } else if (block.lang === 'sh') {
      const script = block.code.replaceAll(EXAMPLE_URL, url).replace(WALLET_SIGNS, `node --import tsx ${fileURLToPath(new URL('walletSign.ts', import.meta.url))} tx.json`);
      const result = await run('bash', ['-euo', 'pipefail', '-c', script], cwd, env);
      assert.equal(result.code, 0, `${where}\n${result.stdout}\n${result.stderr}`);
      assert.ok(!`${result.stdout}${result.stderr}`.includes(w.key), 'no key printed');
      if (/--keys-file/.test(block.code)) {
        for (const other of others) assert.deepEqual(await stillOpen(t.chain, other.closable), [], where);
        assert.match(result.stdout, /^WALLET +STATUS /m, where);
      } else {
        if (/cinder relay/.test(block.code)) assert.match(WALLET_SIGNS.exec(block.code)?.[0] ?? '', WALLET_SIGNS, 'the signing line is there to replace');
        await assertReclaimed(w, where);
        assert.match(result.stdout, /^status: success$/m, where);
      }
    } else {
      assert.fail(`an example that no test runs (\`\`\`${block.lang}):\n${where}`);
    }
  }
});
