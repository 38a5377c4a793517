/**
 * One pipeline for one owner and for many (docs/architecture.md): each stage is built once and the
 * doors are different inputs to it. This test reads the service's code and fails when a door grows
 * a stage of its own again (a second simulate-and-price loop, lock wait, executor or relay-token
 * issuer), or when docs/architecture.md stops naming a module of the pipeline.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ARCHITECTURE = fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({ name: relative(SRC, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));

/** The modules whose code matches `pattern`, sorted. */
const where = (pattern: RegExp): string[] => files.filter((f) => pattern.test(f.text)).map((f) => f.name).sort();

it('docs/architecture.md names every module of operations/', () => {
  const page = readFileSync(ARCHITECTURE, 'utf8');
  const modules = files.filter((f) => f.name.startsWith('operations/')).map((f) => f.name);
  assert.ok(modules.length >= 20, `the operations were read (${modules.length})`);
  assert.deepEqual(modules.filter((m) => !page.includes(m)), []);
});

it('one simulation before sending, for one owner and many (the pricer); the relay simulates what others signed', () => {
  assert.deepEqual(where(/\bchain\.simulate\(/), ['operations/price.ts', 'operations/relay.ts']);
  assert.deepEqual(where(/export async function priceTransactions\b/), ['operations/price.ts']);
  assert.deepEqual(where(/\bpriceTransactions\(/).filter((m) => m !== 'operations/price.ts'), ['operations/compile.ts', 'operations/reclaimMany.ts']);
});

it('one lock wait for every signing door, one executor, one summary, one relay-token issuer', () => {
  // The sponsor's policy takes a lock of its own (one sponsored send per wallet), not an owner's turn.
  assert.deepEqual(where(/\bwithLock\(/).filter((m) => m.startsWith('operations/')), ['operations/ownerTurns.ts', 'operations/sponsorPolicy.ts']);
  assert.deepEqual(where(/\binOwnerTurns\(/).filter((m) => m !== 'operations/ownerTurns.ts'), ['operations/pipeline.ts', 'operations/reclaimMany.ts']);
  assert.deepEqual(where(/\bsignLandReport\(/).filter((m) => m !== 'operations/execute.ts'), ['operations/pipeline.ts', 'operations/reclaimMany.ts']);
  assert.deepEqual(where(/\btotalsOf\(/).filter((m) => m !== 'operations/price.ts'), ['operations/compile.ts', 'operations/reclaimMany.ts']);
  assert.deepEqual(where(/\bissueRelayToken\(/), ['operations/relayToken.ts']);
  assert.deepEqual(where(/\bfindIndex\(\(t\) => t\.ownerPays/), ['operations/compile.ts']);
});
