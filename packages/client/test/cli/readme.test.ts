/**
 * Runs every example of the "Client SDK" and "Command line" sections of docs/sdk-and-cli.md (the
 * page the README links to for them), as written, against the real app and the embedded
 * local chain: the `npm install` into a fresh project (offline: it links this checkout), the SDK
 * script with plain `node`, and each shell block with `cinder` on the PATH as `npx` puts it there. Only the server address is substituted (the examples use :8080).
 * (The curl examples of the README and docs/: test/cli/readmeCurl.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { createCinderClient } from '../../src/index.js';
import { dir as work, holder, run, supplyOf, url, useCliApp } from './cliFixture.ts';
import { codeBlocksOf, ROOT, sectionOf } from './readmePages.ts';

/** Where the SDK and CLI examples live. */
const PAGE = 'docs/sdk-and-cli.md';
const EXAMPLE_URL = 'http://127.0.0.1:8080';

interface Block {
  section: string;
  lang: string;
  code: string;
}

async function blocksOf(heading: string): Promise<Block[]> {
  return codeBlocksOf(await sectionOf(PAGE, heading)).map((block) => ({ section: heading, ...block }));
}

let project: string;
let signature: string;

/** A home directory whose ~/.config/solana/id.json holds the key of a fresh holder. */
async function homeWithKey(secretKey: Uint8Array): Promise<string> {
  const home = await mkdtemp(join(work, 'home-'));
  await mkdir(join(home, '.config', 'solana'), { recursive: true });
  await writeFile(join(home, '.config', 'solana', 'id.json'), JSON.stringify([...secretKey]), { mode: 0o600 });
  return home;
}

function baseEnv(home: string): Record<string, string> {
  return {
    PATH: `${join(project, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: home,
    CINDER_URL: url,
    // `npm install <folder>` links the folder: nothing is fetched.
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

useCliApp('cinder-readme-', {
  async setUp() {
    project = join(work, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'readme-example', version: '1.0.0', private: true, type: 'module' }));
    const h = await holder(2_000_000n);
    signature = (await createCinderClient({ baseUrl: url }).burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.base58 })).transactionId;
  },
});

it('every example of the SDK and CLI sections of the docs runs', { timeout: 300_000 }, async () => {
  const blocks = [...(await blocksOf('Client SDK')), ...(await blocksOf('Command line'))];
  assert.ok(blocks.length >= 4, `found ${blocks.length} examples`);
  let ran = 0;

  for (const block of blocks) {
    const where = `${PAGE} ${block.section}:\n${block.code}`;
    const h = await holder(2_000_000n);
    const home = await homeWithKey(h.secretKey);
    const env = { ...baseEnv(home), MINT: h.mint, SIGNATURE: signature };

    if (block.lang === 'js') {
      const name = /^\/\/ (\S+\.mjs)/.exec(block.code)?.[1] ?? 'example.mjs';
      await writeFile(join(project, name), block.code);
      const result = await run(process.execPath, [name], project, { ...env, SOLANA_KEY: h.base58 });
      assert.equal(result.code, 0, `${where}\n${result.stderr}`);
      assert.match(result.stdout, /^\[\s*'[1-9A-HJ-NP-Za-km-z]+',\s*'[1-9A-HJ-NP-Za-km-z]+'\s*\] 2\nsuccess \S+ Burned 2 of /, where);
      assert.match(result.stdout, /status now: success\n$/, where);
      assert.equal(await supplyOf(h.mint), 0n, where);
    } else if (block.lang === 'sh') {
      const script = block.code.replaceAll('/path/to/cinder', ROOT).replaceAll(EXAMPLE_URL, url);
      const result = await run('bash', ['-euo', 'pipefail', '-c', script], project, env);
      assert.equal(result.code, 0, `${where}\n${result.stdout}\n${result.stderr}`);
      if (/npm install/.test(block.code)) {
        assert.ok((await stat(join(project, 'node_modules', '@cinder', 'client', 'package.json'))).isFile(), '@cinder/client is installed');
      }
      if (/cinder burn/.test(block.code)) {
        assert.equal(await supplyOf(h.mint), 0n, where);
        assert.ok(!result.stdout.includes(h.base58) && !result.stderr.includes(h.base58));
      }
      if (/wallets\.csv/.test(block.code)) {
        assert.equal((await readFile(join(project, 'wallets.csv'), 'utf8')).trimEnd().split('\n').length, 2501);
        assert.equal((await readdir(join(project, 'keys'))).length, 2);
        assert.match(result.stdout, /^\{\n {2}"wallets": \[/);
        assert.match(result.stdout, /^(status: success|success \(slot \d+\))/m);
      }
    } else {
      assert.fail(`an example that no test runs (\`\`\`${block.lang}):\n${where}`);
    }
    ran++;
  }
  assert.equal(ran, blocks.length);
});
