/**
 * No guessable SERVER_SECRET: the start refuses a value printed in the docs or example files and a
 * plainly hand-made one, with the command that makes a good secret; the secrets the tests, scripts
 * and deploy files use pass; the example env file ships it empty.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { guessableSecretReason } from '../../src/keys/serverSecret.ts';
import { TEST_SERVER_SECRET } from '@cinder/testkit';

/** The repository's root, where the README and the deploy files are. */
const REPO = new URL('../../../../', import.meta.url);

const refused = (secret: string) =>
  assert.throws(() => loadConfig({ SERVER_SECRET: secret, SPONSOR_KEYPAIR: '/keys/sponsor.json' }), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /SERVER_SECRET .*anyone could guess it.*SERVER_SECRET=\$\(openssl rand -base64 32\)/);
    assert.ok(!e.message.includes(secret), 'the secret itself is not printed');
    return true;
  });

describe('SERVER_SECRET must not be guessable', () => {
  it('refuses the old example value, one repeated character, a repeated pattern, a short alphabet, a run of consecutive characters', () => {
    for (const secret of [
      'change-me-to-at-least-32-random-characters',
      'a'.repeat(40),
      'ab'.repeat(20),
      '0123456789'.repeat(4),
      'abcabcabdabcabcabdabcabcabdabcabcabd',
      'abcdefghijklmnopqrstuvwxyz0123456789',
    ]) {
      assert.ok(guessableSecretReason(secret), secret);
      refused(secret);
    }
  });

  it('accepts what `openssl rand -base64 32` and `-hex 32` make, and the secrets of the tests and scripts', () => {
    for (let i = 0; i < 200; i++) {
      assert.equal(guessableSecretReason(randomBytes(32).toString('base64')), null);
      assert.equal(guessableSecretReason(randomBytes(32).toString('hex')), null);
    }
    const checkDeploy = /const SERVER_SECRET = '([^']+)'/.exec(readFileSync(new URL('scripts/checkDeploy.ts', REPO), 'utf8'))?.[1];
    for (const secret of [TEST_SERVER_SECRET, checkDeploy!]) assert.equal(loadConfig({ SERVER_SECRET: secret }).serverSecret, secret);
  });

  it('the example env file ships it empty, and no SERVER_SECRET value printed in the docs or deploy files would start', () => {
    assert.match(readFileSync(new URL('deploy/cinder.env.example', REPO), 'utf8'), /^SERVER_SECRET=$/m);
    const docs = readdirSync(new URL('docs/', REPO)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    assert.ok(docs.includes('docs/deployment.md'), 'the docs are read');
    for (const file of ['README.md', ...docs, 'deploy/cinder.env.example', 'deploy/compose.yaml', 'deploy/cinder.service']) {
      for (const [, value] of readFileSync(new URL(file, REPO), 'utf8').matchAll(/SERVER_SECRET[=:] *["']?([^\s"'$`]{32,})/g)) {
        assert.ok(guessableSecretReason(value!), `${file} prints SERVER_SECRET=${value}, which must be refused`);
      }
    }
  });
});
