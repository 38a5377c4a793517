/**
 * The service's launcher runs JavaScript, and what it runs is what the sources say: freshBuild
 * (packages/service/bin/freshBuild.js, run by the launcher before each start and by `npm ci`)
 * compiles every source file that is newer than its JavaScript or has none, and only those; the
 * service's build imports TypeBox from its bundle.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';

/** The launcher's module (plain JavaScript, no declarations: it runs before any build exists). */
const launcherBuild = (await import(new URL('../../packages/service/bin/freshBuild.js', import.meta.url).href)) as {
  freshBuild: (packages?: string[]) => string[] | null;
  staleSources: (pkg: string) => string[];
  PACKAGES: string[];
};
const { freshBuild: build, staleSources: stale, PACKAGES } = launcherBuild;

function fixture(): string {
  const pkg = `${mkdtempSync(join(tmpdir(), 'cinder-fresh-build-'))}/`;
  mkdirSync(join(pkg, 'src', 'sub'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), '{"type":"module"}');
  writeFileSync(
    join(pkg, 'tsconfig.build.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', rootDir: 'src', outDir: 'dist', rewriteRelativeImportExtensions: true, allowImportingTsExtensions: true, verbatimModuleSyntax: true },
      include: ['src'],
    }),
  );
  writeFileSync(join(pkg, 'src', 'index.ts'), "import { twice } from './sub/twice.ts';\nimport type { Thing } from './sub/twice.ts';\nexport const answer: Thing = twice(21);\n");
  writeFileSync(join(pkg, 'src', 'sub', 'twice.ts'), 'export type Thing = number;\nexport const twice = (n: number): number => n * 2;\n');
  return pkg;
}

it('compiles the sources without JavaScript or newer than it, only those, into JavaScript that runs', async () => {
  const pkg = fixture();
  try {
    const index = join(pkg, 'src', 'index.ts');
    const twice = join(pkg, 'src', 'sub', 'twice.ts');
    assert.deepEqual(build([pkg])?.sort(), [index, twice].sort());
    assert.deepEqual(stale(pkg), []);
    assert.deepEqual(build([pkg]), [], 'nothing to compile the second time');
    const compiled = readFileSync(join(pkg, 'dist', 'index.js'), 'utf8');
    assert.match(compiled, /from "\.\/sub\/twice\.js"/, 'relative .ts imports become .js');
    assert.doesNotMatch(compiled, /Thing/, 'no types left');
    assert.equal((await import(pathToFileURL(join(pkg, 'dist', 'index.js')).href)).answer, 42);

    // An edit: that file only, and the new JavaScript says what it says.
    writeFileSync(twice, 'export type Thing = number;\nexport const twice = (n: number): number => n * 3;\n');
    const later = new Date(Date.now() + 5000);
    utimesSync(twice, later, later);
    assert.deepEqual(stale(pkg), [twice]);
    assert.deepEqual(build([pkg]), [twice]);
    assert.deepEqual(stale(pkg), [], 'its JavaScript is dated no earlier than a source dated in the future');
    assert.match(readFileSync(join(pkg, 'dist', 'sub', 'twice.js'), 'utf8'), /n \* 3/);

    // A build file removed: compiled again.
    rmSync(join(pkg, 'dist', 'index.js'));
    assert.deepEqual(build([pkg]), [index]);
  } finally {
    rmSync(pkg, { recursive: true, force: true });
  }
});

it("leaves the service's and the local chain's build as new as their sources, the service's importing TypeBox's bundle", () => {
  const packages = PACKAGES;
  assert.equal(packages.length, 2);
  assert.notEqual(build(), null, 'TypeScript is installed in a checkout');
  for (const pkg of packages) assert.deepEqual(stale(pkg), [], pkg);
  const config = readFileSync(join(packages[0]!, 'dist', 'config.js'), 'utf8');
  assert.match(config, /from "\.\/vendor\/typebox\.js"/);
  assert.match(config, /from "\.\/vendor\/typebox-value\.js"/);
  assert.doesNotMatch(config, /from ["']typebox/);
});
