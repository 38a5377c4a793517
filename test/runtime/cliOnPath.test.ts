/**
 * The docs use the command line as `cinder …`. After `npm ci` it sits in the checkout's
 * node_modules/.bin, which no shell has on its PATH: the one step the CLI page gives must put it
 * there, run as written (read from the page, not copied into this test), from a shell that has no
 * `cinder` before it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

it('the CLI page\'s PATH step makes `cinder` a command, from the checkout\'s top folder', async () => {
  const page = readFileSync(new URL('../../docs/sdk-and-cli.md', import.meta.url), 'utf8');
  const step = /```sh\n(export PATH=[^\n]*node_modules\/\.bin[^\n]*)\n```/.exec(page)?.[1];
  assert.ok(step, 'docs/sdk-and-cli.md shows an `export PATH=…node_modules/.bin…` step');
  // A PATH with the system's programs only: no cinder from an earlier install can answer instead.
  const env = { ...process.env, PATH: `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin` };
  const before = await run('bash', ['-c', 'command -v cinder || echo none'], { cwd: ROOT, env });
  assert.equal(before.stdout.trim(), 'none');
  const after = await run('bash', ['-c', `${step}\ncinder --version`], { cwd: ROOT, env });
  assert.match(after.stdout, /^cinder \d+\.\d+\.\d+\n$/);
});
