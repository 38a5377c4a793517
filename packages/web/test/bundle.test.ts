/**
 * The committed bundle (bundle/) is exactly what its sources build to, so it can never drift from
 * them, and it stays small.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { BUNDLE_FILES, buildWebApp } from '../build.ts';

const BUNDLE = fileURLToPath(new URL('../bundle/', import.meta.url));
describe('the committed bundle', () => {
  it('is byte for byte what web/build.ts makes from the sources (run `npm run build:web` after changing web/)', { timeout: 120_000 }, async () => {
    const out = await mkdtemp(join(tmpdir(), 'cinder-web-build-'));
    try {
      await buildWebApp(out);
      for (const name of BUNDLE_FILES) {
        const [built, committed] = await Promise.all([readFile(join(out, name)), readFile(join(BUNDLE, name))]);
        assert.ok(built.equals(committed), `packages/web/bundle/${name} differs from a fresh build: run npm run build:web`);
      }
      // The same sources, built twice, give the same bytes (no timestamps, no absolute paths).
      const again = await mkdtemp(join(tmpdir(), 'cinder-web-build-'));
      await buildWebApp(again);
      for (const name of BUNDLE_FILES) assert.ok((await readFile(join(again, name))).equals(await readFile(join(out, name))), name);
      await rm(again, { recursive: true, force: true });
      assert.doesNotMatch(await readFile(join(out, 'app.js'), 'utf8'), /\/work\/|\/home\/|\/tmp\//, 'no machine paths in the bundle');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('stays small: the JavaScript is under 20 KB gzipped', async () => {
    const size = gzipSync(await readFile(join(BUNDLE, 'app.js')), { level: 9 }).length;
    assert.ok(size < 20 * 1024, `app.js is ${size} bytes gzipped`);
  });
});
