/**
 * The SDK is TypeScript whose request and answer types are the route schemas (src/api.ts), and it
 * ships compiled with its declarations:
 * - test/sdk/apiTypes.ts (the type-level assertions) compiles: when a schema changes and the SDK
 *   does not follow, it does not;
 * - `tsc` emits the client's src/ as JavaScript and .d.ts; the emitted SDK imports nothing at run time
 *   (its types come from the service as types only), loads in plain Node without tsx, and talks to
 *   a server; a program typed against the emitted declarations compiles; the emitted CLI loads
 *   without tsx too, and nothing emitted for the client imports the service (nor Fastify, litesvm…)
 *   at run time: only the packages a client needs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFormBServer, type FormBServer } from './formBServer.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What the client may load at run time besides Node's own modules (cli-progress only on a terminal). */
const CLIENT_PACKAGES = new Set(['@solana/kit', '@scure/bip39', '@scure/bip39/wordlists/english.js', 'micro-key-producer/slip10.js', 'cli-progress']);
const TSC = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
/** The workspace's compiler settings (the repository root's tsconfig.json). */
const BASE_TSCONFIG = fileURLToPath(new URL('../../../../tsconfig.json', import.meta.url));

let server: FormBServer;
/** Inside the checkout, so that the emitted files find the dependencies in node_modules. */
let out: string;
before(async () => {
  server = await startFormBServer();
  await mkdir(join(ROOT, 'node_modules/.cache'), { recursive: true });
  out = await mkdtemp(join(ROOT, 'node_modules/.cache/cinder-client-build-'));
});
after(async () => {
  await server.close();
  await rm(out, { recursive: true, force: true });
});

function run(file: string, args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { PATH: process.env.PATH! } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function tsc(config: object, name: string): Promise<void> {
  const path = join(out, name);
  await writeFile(path, JSON.stringify(config));
  const result = await run(process.execPath, [TSC, '-p', path]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
}

// The timeouts only catch a hung compiler: a whole-program tsc took 213 s on 2 cores at load 25,
// so they are far above that, and no test here asserts how long a compile takes.
it('the type-level assertions of test/sdk/apiTypes.ts compile (strict)', { timeout: 900_000 }, async () => {
  await tsc({ extends: BASE_TSCONFIG, include: [], files: [join(ROOT, 'test/sdk/apiTypes.ts')] }, 'tsconfig.types.json');
});

it('emits the SDK and the CLI as JavaScript with declarations; the SDK imports nothing at run time and works in plain Node', { timeout: 900_000 }, async () => {
  await tsc(
    {
      extends: BASE_TSCONFIG,
      compilerOptions: { noEmit: false, declaration: true, rootDir: join(ROOT, 'src'), outDir: join(out, 'dist'), rewriteRelativeImportExtensions: true },
      include: [],
      files: [join(ROOT, 'src/index.ts'), join(ROOT, 'src/cli.ts')],
    },
    'tsconfig.build.json',
  );
  const sdk = await readFile(join(out, 'dist/index.js'), 'utf8');
  assert.doesNotMatch(sdk, /^\s*import\s/m, 'the SDK has no import at run time');
  // The entry re-exports the SDK's modules (dist/sdk/), which import only one another.
  for (const file of (await readdir(join(out, 'dist/sdk'))).filter((f) => f.endsWith('.js'))) {
    const code = await readFile(join(out, 'dist/sdk', file), 'utf8');
    for (const [, specifier] of code.matchAll(/(?:^import[^'"]*|^export[^'"]* from |\bimport\()['"]([^'"]+)['"]/gm)) {
      assert.match(specifier!, /^\.\/[^/]+\.js$/, `sdk/${file} imports ${specifier} at run time`);
    }
  }
  assert.match(await readFile(join(out, 'dist/index.d.ts'), 'utf8'), /^export \{ createCinderClient \} from '\.\/sdk\/client\.(ts|js)';$/m);
  assert.match(await readFile(join(out, 'dist/sdk/client.d.ts'), 'utf8'), /createCinderClient\(options: CinderClientOptions\): CinderClient/);

  const script = `
    import { createCinderClient, CinderApiError } from ${JSON.stringify(join(out, 'dist/index.js'))};
    const cinder = createCinderClient({ baseUrl: ${JSON.stringify(server.url)} });
    const { wallets } = await cinder.generateWallets(2);
    const burn = await cinder.burnTokens({ mint: 'M', priorityFee: 0, userPrivateKey: 'k' });
    console.log(JSON.stringify({ wallets: wallets.length, form: burn.form, error: typeof CinderApiError }));
  `;
  const result = await run(process.execPath, ['--input-type=module', '-e', script]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { wallets: 2, form: 'B', error: 'function' });

  // A program typed against the declarations alone (no source of Cinder in its program).
  await writeFile(
    join(out, 'consumer.ts'),
    `import { createCinderClient, type BurnResult } from './dist/index.js';
     const burn: Promise<BurnResult> = createCinderClient({ baseUrl: 'http://localhost' }).burnTokens({ mint: 'M', priorityFee: 0, userPrivateKey: 'k' });
     // @ts-expect-error a burn needs a mint
     void createCinderClient({ baseUrl: 'http://localhost' }).burnTokens({ priorityFee: 0, userPrivateKey: 'k' });
     void burn;\n`,
  );
  await tsc({ extends: BASE_TSCONFIG, compilerOptions: { types: ['node'] }, include: [], files: [join(out, 'consumer.ts')] }, 'tsconfig.consumer.json');

  const cli = await run(process.execPath, [
    '--input-type=module',
    '-e',
    `const { main } = await import(${JSON.stringify(join(out, 'dist/cli.js'))});
     process.exitCode = await main(['--help'], { env: {}, stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() });`,
  ]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /^Usage: cinder <command>/);

  const client = join(out, 'dist');
  const files = (await readdir(client, { recursive: true })).filter((f) => f.endsWith('.js'));
  for (const file of files) {
    const code = await readFile(join(client, file), 'utf8');
    for (const [, specifier] of code.matchAll(/(?:^import[^'"]*|^export[^'"]* from |\bimport\()['"]([^'"]+)['"]/gm)) {
      if (specifier!.startsWith('.')) {
        const target = relative(client, resolve(dirname(join(client, file)), specifier!));
        assert.ok(!target.startsWith('..'), `${file} imports ${specifier}, outside the client`);
      } else {
        assert.ok(specifier!.startsWith('node:') || CLIENT_PACKAGES.has(specifier!), `${file} imports ${specifier}`);
      }
    }
  }
});
