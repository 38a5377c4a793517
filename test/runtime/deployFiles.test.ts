/**
 * The deployment recipes and docs/deployment.md say the same thing: one production build line, run by
 * the Containerfile's stages, the page's production install and systemd steps, and by
 * `npm run check:deploy` (which CI runs; it executes the recipes for real). Also the runtime facts
 * the recipes rely on: node is started directly (no npm, no shell, no tsx) so the stop signal
 * reaches the server, and the stop timeouts outlast a burn's deadline.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@cinder/service';
import { PRODUCTION_BUILD } from '../../scripts/checkDeploy.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFile(join(ROOT, path), 'utf8');
/** Output-only npm flags, which change nothing that is installed. */
const quiet = (command: string) => command.replace(/ --no-audit| --no-fund/g, '');

it('the Containerfile, docs/deployment.md and check:deploy run one production build', async () => {
  const containerfile = await read('deploy/Containerfile');
  const runs = [...containerfile.matchAll(/^RUN (.+)$/gm)].map((m) => quiet(m[1]!));
  assert.deepEqual(runs, quiet(PRODUCTION_BUILD).split(' && '));
  const deployment = await read('docs/deployment.md');
  assert.ok(deployment.includes(`\n${quiet(PRODUCTION_BUILD)} `), 'the production install line of docs/deployment.md');
  assert.ok(deployment.includes(`\n${quiet(PRODUCTION_BUILD).split(' && ').map((c) => `sudo ${c}`).join(' && ')}\n`), 'the systemd steps of docs/deployment.md');
  // The runtime stage copies each package's build, not the sources, and runs node on the service's
  // launcher, which loads that build.
  for (const name of ['localnet', 'service', 'client']) {
    assert.match(containerfile, new RegExp(`^COPY --from=build /app/packages/${name}/dist packages/${name}/dist$`, 'm'), name);
  }
  assert.match(containerfile, /^CMD \["node", "packages\/service\/bin\/cinder-service\.js"\]$/m);
  assert.doesNotMatch(containerfile.split(/^FROM /m).at(-1)!, /\btsx\b|\/src\b|COPY packages packages/);
});

it('the systemd unit starts node on the build, stops it with SIGTERM, and waits longer than a burn may take', async () => {
  const unit = await read('deploy/cinder.service');
  assert.match(unit, /^ExecStart=\/usr\/bin\/node packages\/service\/bin\/cinder-service\.js$/m);
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  const stopSeconds = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
  const compose = await read('deploy/compose.yaml');
  const graceSeconds = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]);
  // The server gives itself BURN_DEADLINE_MS + 10 s to stop (src/server.ts); the supervisor must not kill it sooner.
  const burnDeadlineSeconds = loadConfig({}).operationDeadlineMs / 1000;
  assert.ok(stopSeconds >= burnDeadlineSeconds + 10, `TimeoutStopSec=${stopSeconds}`);
  assert.ok(graceSeconds >= burnDeadlineSeconds + 10, `stop_grace_period: ${graceSeconds}s`);
});

it('the compose file puts Redis beside Cinder and requires what a container needs', async () => {
  const compose = await read('deploy/compose.yaml');
  assert.match(compose, /^ {2}redis:$/m);
  assert.match(compose, /REDIS_URL: redis:\/\/redis:6379/);
  for (const name of ['API_KEYS', 'SERVER_SECRET', 'SOLANA_RPC_URL']) assert.match(compose, new RegExp(`${name}: \\$\\{${name}:\\?`), name);
  assert.match(compose, /dockerfile: deploy\/Containerfile/);
});

it('npm start execs node (no shell left between npm and the server), and engines names the supported lines', async () => {
  const pkg = JSON.parse(await read('package.json')) as { scripts: Record<string, string>; engines: { node: string } };
  assert.match(pkg.scripts.start!, /^exec node /);
  assert.equal(pkg.engines.node, '^20.18.0 || >=22');
  const client = JSON.parse(await read('packages/client/package.json')) as { dependencies: Record<string, string> };
  // The CLI loads cli-progress on a terminal; a production install must have it. tsx is for development only.
  assert.ok(client.dependencies['cli-progress'], 'cli-progress is a dependency of the client');
  for (const name of ['service', 'localnet', 'client', 'web', 'testkit']) {
    const manifest = JSON.parse(await read(`packages/${name}/package.json`)) as { dependencies?: Record<string, string> };
    assert.ok(!manifest.dependencies?.tsx, `tsx is not a run-time dependency of ${name}`);
    assert.equal((manifest as { engines?: { node: string } }).engines?.node, pkg.engines.node, `packages/${name} names the same Node lines`);
  }
  assert.ok((pkg as unknown as { devDependencies: Record<string, string> }).devDependencies.tsx, 'tsx is a development dependency');
});
