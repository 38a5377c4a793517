/**
 * The pool's TypeScript worker loads both ways the service runs (`tsx src/server.ts` and
 * `node --import tsx`), and a pool never keeps the process alive: after close(), nor while idle.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsxCli = fileURLToPath(import.meta.resolve('tsx/cli'));

const dir = mkdtempSync(join(tmpdir(), 'cinder-workers-'));

/** A script file (worker threads inherit execArgv, so no --eval/--input-type) that uses the pool. */
function script(close: boolean): string {
  const file = join(dir, `pool-${close ? 'close' : 'idle'}.mts`);
  writeFileSync(
    file,
    `
    import { createWalletGenerator } from ${JSON.stringify(join(root, 'src/wallets/index.ts'))};
    const generator = createWalletGenerator({ vanityTimeoutMs: 1000, threads: 2 });
    const result = await generator.generate({ n: 1000 });
    const body = JSON.parse(Buffer.concat(result.parts).toString());
    result.wipe();
    console.log('wallets', body.wallets.length);
    ${close ? 'await generator.close();' : ''}
  `,
  );
  return file;
}

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('worker threads', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const close of [true, false]) {
    const what = close ? 'after close()' : 'with an idle pool and no close()';
    it(`node --import tsx: the .ts worker loads and the process exits ${what}`, () => {
      const child = run(['--import', 'tsx', script(close)]);
      assert.equal(child.status, 0, child.stderr);
      assert.match(child.stdout, /^wallets 1000$/m);
    });
  }

  it('tsx (as npm start runs the service): the .ts worker loads and the process exits after close()', () => {
    const child = run([tsxCli, script(true)]);
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /^wallets 1000$/m);
  });
});
