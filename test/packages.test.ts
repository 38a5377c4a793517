/**
 * The packages meet only where docs/architecture.md draws it: this test reads every import of every
 * package's code and compares the arrows between packages with the picture there (a solid arrow:
 * an import at run time; a dotted one: types only). It also checks that each run-time arrow is a
 * declared dependency, that nothing imports another package's files by path (a second guard beside
 * the lint rule import-x/no-relative-packages) or past its public entry (`@cinder/x/sub/path`), and
 * that the run-time arrows make no circle.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = readdirSync(join(ROOT, 'packages')).filter((name) => statSync(join(ROOT, 'packages', name)).isDirectory());

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', 'bundle'].includes(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

interface Arrow {
  from: string;
  to: string;
  typesOnly: boolean;
}

/**
 * Every import between packages in the packages' own code (not their tests and benchmarks, which
 * also use @cinder/testkit); those too are checked to go through public entries only.
 */
function arrowsInCode(): { arrows: Arrow[]; problems: string[] } {
  const found = new Map<string, boolean>();
  const problems: string[] = [];
  const importPattern = /\b(import\s+type\s+[^;]*?from|export\s+type\s+[^;]*?from|import\s[^;]*?from|export\s[^;]*?from|import\s*\(|import)\s*['"]([^'"]+)['"]/g;
  for (const name of PACKAGES) {
    const dir = join(ROOT, 'packages', name);
    for (const file of sourceFiles(dir)) {
      const text = readFileSync(file, 'utf8');
      for (const [, how, specifier] of text.matchAll(importPattern)) {
        if (specifier!.startsWith('.')) {
          const target = relative(join(ROOT, 'packages'), resolve(file, '..', specifier!));
          if (target.split('/')[0] !== name) problems.push(`${relative(ROOT, file)} imports ${specifier} by path`);
          continue;
        }
        const match = /^@cinder\/([^/]+)(\/.*)?$/.exec(specifier!);
        if (!match || match[1] === name) continue;
        if (match[2] !== undefined && match[2] !== '/package.json') problems.push(`${relative(ROOT, file)} imports ${specifier}, past the public entry`);
        if (/^(test|bench)\//.test(relative(dir, file))) continue;
        const key = `${name} ${match[1]}`;
        const typesOnly = /^(import|export)\s+type\b/.test(how!);
        found.set(key, (found.get(key) ?? true) && typesOnly);
      }
    }
  }
  const arrows = [...found].map(([key, typesOnly]) => {
    const [from, to] = key.split(' ') as [string, string];
    return { from, to, typesOnly };
  });
  return { arrows, problems };
}

function arrowsInPicture(): Arrow[] {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const picture = /```mermaid\ngraph LR\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(picture, 'docs/architecture.md has the picture of the packages');
  return picture
    .trim()
    .split('\n')
    .map((line) => {
      const match = /^\s*(\w+) (-->|-\.->) (\w+)$/.exec(line);
      assert.ok(match, `a line of the picture: "${line}"`);
      return { from: match[1]!, to: match[3]!, typesOnly: match[2] === '-.->' };
    });
}

const sorted = (arrows: Arrow[]) => arrows.map((a) => `${a.from} ${a.typesOnly ? '-.->' : '-->'} ${a.to}`).sort();

it('the imports between packages are the picture in docs/architecture.md, through public entries only', () => {
  const { arrows, problems } = arrowsInCode();
  assert.deepEqual(problems, []);
  assert.deepEqual(sorted(arrows), sorted(arrowsInPicture()));
  assert.ok(!arrows.some((a) => a.from === 'localnet'), 'the local chain imports nothing of Cinder');
});

it('each run-time import of another package is a declared dependency, and they make no circle', () => {
  const runtime = arrowsInCode().arrows.filter((a) => !a.typesOnly);
  for (const { from, to } of runtime) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', from, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const declared = { ...manifest.dependencies, ...(from === 'testkit' ? manifest.devDependencies : {}) };
    assert.ok(`@cinder/${to}` in declared, `packages/${from}/package.json declares @cinder/${to}`);
  }
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (name: string, path: string[]) => {
    assert.ok(!visiting.has(name), `a circle: ${[...path, name].join(' → ')}`);
    if (done.has(name)) return;
    visiting.add(name);
    for (const arrow of runtime.filter((a) => a.from === name)) visit(arrow.to, [...path, name]);
    visiting.delete(name);
    done.add(name);
  };
  for (const name of PACKAGES) visit(name, []);
});
