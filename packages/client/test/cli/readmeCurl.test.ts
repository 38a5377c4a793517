/**
 * Every `curl` example of the README and of every page of docs/, run as written against the real app and the embedded
 * local chain, with only the server address substituted and the placeholders (`<mint address>`,
 * `<scam mint>`, `<address>`, `<base58 secret key>`, `5h3...`) filled with a real holder's mint,
 * address and key (who also holds an empty token account, so that a reclaim has something to
 * close) and a real signature. An HTTP error answer fails the example; a curl example this test
 * cannot fill, or a curl block with other commands in it, fails the test.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { createCinderClient } from '../../src/index.js';
import { createAta, createTestMint } from '@cinder/testkit';
import { dir as work, holder, run, supplyOf, t, url, useCliApp } from './cliFixture.ts';
import { DOC_PAGES, readPage } from './readmePages.ts';

const EXAMPLE_URL = 'http://127.0.0.1:8080';

let project: string;
let signature: string;

useCliApp('cinder-readme-curl-', {
  // The docs' vanity examples (a 3-character suffix: about 100,000 keys on average, a few times
  // that now and then) run as written; how long they take depends on the machine and its load, so
  // the search may take minutes here where it takes seconds on an idle machine.
  appConfig: { vanityTimeoutMs: 300_000 },
  async setUp() {
    project = join(work, 'project');
    await mkdir(project);
    const h = await holder(2_000_000n);
    signature = (await createCinderClient({ baseUrl: url }).burnTokens({ mint: h.mint, priorityFee: 0, userPrivateKey: h.base58 })).transactionId;
  },
});

it('every curl example of the README and the docs runs and succeeds', { timeout: 1_200_000 }, async () => {
  const pages = await Promise.all(DOC_PAGES.map(async (page) => ({ page, markdown: await readPage(page) })));
  const blocks = pages.flatMap(({ page, markdown }) =>
    [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => ({ page, block: m[1]! })).filter(({ block }) => /^curl /m.test(block)),
  );
  const curlLines = pages.flatMap(({ markdown }) => markdown.split('\n')).filter((line) => line.startsWith('curl ')).length;
  assert.ok(blocks.length >= 10, `found ${blocks.length} curl blocks`);
  assert.ok(blocks.some(({ page }) => page === 'README.md'), 'the README has curl examples');
  let ran = 0;
  for (const { page, block } of blocks) {
    // A block of curl commands only (and comments, and a command's continuation lines): nothing else to set up.
    const commands = block.split('\n').filter((line) => /^[A-Za-z]/.test(line));
    for (const command of commands) assert.match(command, /^curl /, `a curl block with another command in it:\n${block}`);
    const h = await holder(2_000_000n);
    const emptyMint = await createTestMint(t.chain, h.signer, { decimals: 0 });
    await createAta(t.chain, h.signer, h.address, emptyMint);
    const script = block
      .replaceAll(EXAMPLE_URL, url)
      .replaceAll('<mint address>', h.mint)
      .replaceAll('<scam mint>', h.mint)
      .replaceAll('<address>', h.address)
      .replaceAll('<base58 secret key>', h.base58)
      .replaceAll('5h3...', signature);
    assert.doesNotMatch(script, /<[a-z][^>]*>|\.\.\./, `an example placeholder this test does not fill:\n${script}`);
    // --fail-with-body: an HTTP error answer fails the example (with -e and pipefail, the block).
    const result = await run('bash', ['-euo', 'pipefail', '-c', `curl() { command curl --fail-with-body "$@"; }\n${script}`], project, { PATH: process.env.PATH!, HOME: work }, 600_000);
    const where = `${page} curl example:\n${block}\n${result.stdout}\n${result.stderr}`;
    assert.equal(result.code, 0, where);
    if (/\/api\/(burn_tokens|reclaim_rent) -H/.test(block)) {
      assert.match(result.stdout, /"status":"success"/, where);
      assert.equal(await supplyOf(h.mint), 0n, where);
    }
    if (block.includes('format=keygen')) {
      const bytes = JSON.parse(await readFile(join(project, 'id.json'), 'utf8')) as number[];
      assert.equal(bytes.length, 64, where);
    }
    if (block.includes('suffix=')) {
      for (const [, suffix, flags] of block.matchAll(/suffix=([1-9A-HJ-NP-Za-km-z]+)(&ignoreCase=true)?/g)) {
        assert.match(result.stdout, new RegExp(`"wallets":\\["[1-9A-HJ-NP-Za-km-z]+${suffix}"`, flags ? 'i' : ''), where);
      }
    }
    ran += commands.length;
  }
  assert.equal(ran, curlLines, 'every curl line of the README and the docs was run');
});
