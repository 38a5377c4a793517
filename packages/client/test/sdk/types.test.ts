/**
 * `cinder/client` is plain JavaScript with hand-written types: this file keeps the two honest.
 * - tsc checks src/client/index.js (`// @ts-check`, JSDoc typed by index.d.ts) in strict mode;
 * - the module's runtime exports are exactly the ones index.d.ts declares;
 * - the package self-reference `cinder/client` resolves, for TypeScript (this file imports it) and
 *   for plain Node without tsx or any build step.
 * The type-level assertions below are checked by `npm run typecheck`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as client from '@cinder/client';
import type {
  BurnResult,
  CinderApiError,
  GeneratedWallets,
  PreparedTransactions,
  ReclaimAction,
  ReclaimPreview,
  ReclaimResult,
  RelayResult,
  TransactionStatusResult,
} from '@cinder/client';
import { startFormBServer, type FormBServer } from './formBServer.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Type-level checks (compile errors, not runtime ones).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Returned<K extends Exclude<keyof client.CinderClient, 'baseUrl'>> = Awaited<ReturnType<client.CinderClient[K]>>;
type Param<K extends Exclude<keyof client.CinderClient, 'baseUrl'>> = Parameters<client.CinderClient[K]>[0];
const typeChecks: [
  Equal<Returned<'burnTokens'>, BurnResult>,
  Equal<Returned<'generateWallets'>, GeneratedWallets>,
  Equal<Returned<'getTransaction'>, TransactionStatusResult>,
  Equal<BurnResult['form'], 'A' | 'B' | 'A+B'>,
  Equal<BurnResult['status'], 'success' | 'failed' | 'pending' | 'unknown'>,
  Equal<Pick<CinderApiError, 'status' | 'code' | 'detail'>, { readonly status: number; readonly code: string; readonly detail: string }>,
  // The whole-wallet reclaim and the keyless methods (issues 13 and 14).
  Equal<Returned<'previewReclaim'>, ReclaimPreview>,
  Equal<Returned<'reclaimRent'>, ReclaimResult>,
  Equal<Returned<'prepareBurn'>, PreparedTransactions>,
  Equal<Returned<'prepareReclaim'>, PreparedTransactions>,
  Equal<Returned<'relay'>, RelayResult>,
  Equal<ReclaimPreview['accounts'][number]['action'], ReclaimAction>,
  Equal<ReclaimAction, 'close' | 'burn_and_close' | 'unwrap' | 'withdraw_excess' | 'keep' | 'skip'>,
  Equal<PreparedTransactions['details'], ReclaimPreview>,
  Equal<NonNullable<Param<'prepareReclaim'>['feePayer']>, 'owner' | 'sponsor'>,
  Equal<Param<'relay'>['relayToken'], string | undefined>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

// What callers write compiles against index.d.ts (and a wrong call would not).
async function usage(cinder: client.CinderClient): Promise<void> {
  const preview = await cinder.previewReclaim({ owner: 'So11111111111111111111111111111111111111112', burn: ['M'], priorityFee: 0.000005, withdrawExcess: true });
  const net: bigint = BigInt(preview.summary.netLamports);
  const reclaimed = await cinder.reclaimRent({ userPrivateKey: new Uint8Array(64), priorityFee: 0, burn: ['M'], allowNetLoss: true, idempotencyKey: 'k' });
  const closed: string[] | undefined = reclaimed.details?.closedAccounts;
  const prepared = await cinder.prepareBurn({ owner: 'O', mint: 'M', priorityFee: 0, feePayer: 'sponsor' });
  const again = await cinder.prepareReclaim({ owner: 'O', priorityFee: 0, withdrawExcess: false });
  const relayed = await cinder.relay({ transactions: [...prepared.transactions, ...again.transactions], relayToken: prepared.relayToken });
  const sponsored: boolean | undefined = relayed.details?.transactions[0]?.sponsored;
  // @ts-expect-error reclaimRent needs a priorityFee
  await cinder.reclaimRent({ userPrivateKey: 'k' });
  // @ts-expect-error feePayer is owner or sponsor
  await cinder.prepareReclaim({ owner: 'O', priorityFee: 0, feePayer: 'someone' });
  void [net, closed, sponsored];
}
void usage;
void typeChecks;

let server: FormBServer;
before(async () => {
  server = await startFormBServer();
});
after(async () => {
  await server.close();
});

function run(file: string, args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { PATH: process.env.PATH! } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it('src/client/index.js type-checks (strict) against src/client/index.d.ts', { timeout: 120_000 }, async () => {
  const tsc = await run(process.execPath, [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-p', 'test/sdk/tsconfig.checkjs.json']);
  assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
});

it('exports at run time exactly what index.d.ts declares', async () => {
  const declarations = await readFile(new URL('../../src/index.d.ts', import.meta.url), 'utf8');
  const declared = [...declarations.matchAll(/^export declare (?:function|class|const) (\w+)/gm)].map((m) => m[1]!).sort();
  assert.deepEqual(Object.keys(client).sort(), declared);
});

it('loads as cinder/client in plain Node, without tsx or a build step', async () => {
  const script = `
    import { createCinderClient, CinderApiError } from '@cinder/client';
    const cinder = createCinderClient({ baseUrl: ${JSON.stringify(server.url)} });
    const { wallets } = await cinder.generateWallets(2);
    const burn = await cinder.burnTokens({ mint: 'M', priorityFee: 0, userPrivateKey: 'k' });
    console.log(JSON.stringify({ wallets: wallets.length, form: burn.form, error: typeof CinderApiError }));
  `;
  const result = await run(process.execPath, ['--input-type=module', '-e', script]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { wallets: 2, form: 'B', error: 'function' });
  const imported = await run(process.execPath, ['-e', "import('@cinder/client').then((m) => console.log(typeof m.createCinderClient))"]);
  assert.equal(imported.stdout, 'function\n', imported.stderr);
});
