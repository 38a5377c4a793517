/**
 * The sponsor's key signs in one module, its policy (src/operations/sponsorPolicy.ts, `cosign`),
 * after every check of the message it signs: this test reads the service's code and fails when any
 * other module gets hold of the sponsor's signer. Reading its address anywhere is fine; handing the
 * loaded signer to the policy (src/app.ts) is the one other place the signer itself may appear.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const POLICY = 'operations/sponsorPolicy.ts';
/** Where the signer may be named: where it is loaded, where it is handed to the policy, and the policy. */
const MAY_HOLD_THE_SIGNER = new Set(['keys/sponsor.ts', 'app.ts', POLICY]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => ({ name: relative(SRC, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));

/** `sponsor.signer`, `deps.sponsor!.signer`, `sponsor?.signer` not followed by `.address`; `{ signer } = …sponsor`. */
const SIGNER_USE = [/\bsponsor\w*\s*[!?]?\.\s*signer\b(?!\s*\.\s*address\b)/g, /\{\s*[^}]*\bsigner\b[^}]*\}\s*=\s*[\w.!?]*sponsor\b/gi];

it('only the sponsor policy, where it is loaded and where it is handed to the policy name the sponsor\'s signer', () => {
  assert.ok(files.length > 50, 'the service\'s code was read');
  const found = files.flatMap(({ name, text }) => SIGNER_USE.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => `${name}: ${m[0]}`)));
  assert.ok(found.some((use) => use.startsWith('app.ts: ')), 'the check sees the one hand-over (src/app.ts)');
  assert.deepEqual(found.filter((use) => !MAY_HOLD_THE_SIGNER.has(use.split(':')[0]!)), []);
});

it('the policy signs in one function, cosign, after its checks', () => {
  const policy = files.find((f) => f.name === POLICY)!.text;
  const signing = [...policy.matchAll(/\b(partiallySignTransaction|signTransaction|signTransactionMessageWithSigners|signBytes)\s*\(/g)];
  assert.equal(signing.length, 1, 'one signing call in the policy');
  const cosign = policy.slice(policy.indexOf('async cosign('));
  const body = cosign.slice(0, cosign.indexOf('\n    },'));
  // Its checks are the policy's rules (src/operations/sponsorRules.ts `check`).
  assert.match(body, /await rules\.check\(transaction, context\)[\s\S]*partiallySignTransaction\(\[deps\.signer\.keyPair\], transaction\)/);
  // The policy's signer is used nowhere else in it.
  assert.equal([...policy.matchAll(/deps\.signer\.keyPair/g)].length, 1);
});

it('no other module signs with a key it did not get from its caller: the sponsor\'s keyPair appears in the policy only', () => {
  const keyPairUses = files.flatMap(({ name, text }) => [...text.matchAll(/\bsponsor\w*\s*[!?]?\.\s*signer\s*\.\s*keyPair\b|\bdeps\.signer\.keyPair\b/g)].map(() => name));
  assert.deepEqual([...new Set(keyPairUses)], [POLICY]);
});
