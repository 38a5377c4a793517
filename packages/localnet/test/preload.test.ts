/**
 * Accounts and programs loaded at start with solana-test-validator's flags (`--account`,
 * `--account-dir`, `--bpf-program`, `--upgradeable-program`), from startLocalnet and from the CLI.
 * The program is SPL Memo's ELF as LiteSVM ships it, written to a temporary file and deployed at
 * another address: a small real sBPF program, and nothing committed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
} from '@solana/kit';
import { LiteSVM } from 'litesvm';
import { rpcResult } from '@cinder/testkit';
import { PreloadError, startLocalnet, type Localnet } from '../src/index.ts';

const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const packageDir = fileURLToPath(new URL('..', import.meta.url));

const memoElf = (() => {
  const account = new LiteSVM().getAccount(MEMO);
  assert.ok(account.exists);
  return new Uint8Array(account.data);
})();

const dir = mkdtempSync(join(tmpdir(), 'localnet-preload-'));
const memoFile = join(dir, 'memo.so');
const randomAddress = async () => (await generateKeyPairSigner()).address;
after(() => rmSync(dir, { recursive: true, force: true }));

/** `solana account --output json` of an account. */
const accountJson = (pubkey: string, lamports: number, data: Uint8Array, owner: string) =>
  JSON.stringify({ pubkey, account: { lamports, data: [Buffer.from(data).toString('base64'), 'base64'], owner, executable: false, rentEpoch: 0, space: data.length } })
    // As the CLI writes it: u64::MAX, which JSON.parse reads as an approximate number.
    .replace('"rentEpoch":0', '"rentEpoch":18446744073709551615');

async function callMemo(url: string, program: Address, text: string): Promise<{ err: unknown; logs: string[] }> {
  const payer = await generateKeyPairSigner();
  await rpcResult(url, 'localnet_setAccount', [payer.address, { lamports: 1_000_000_000 }]);
  const { value: blockhash } = await createSolanaRpc(url).getLatestBlockhash().send();
  const transaction = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) => appendTransactionMessageInstructions([{ programAddress: program, data: new TextEncoder().encode(text) }], m),
    ),
  );
  const simulation = await rpcResult<{ value: { err: unknown; logs: string[] } }>(url, 'simulateTransaction', [getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }]);
  return simulation.value;
}

describe('startLocalnet preloading', () => {
  let localnet: Localnet;
  const ids = {} as Record<'single' | 'dirA' | 'dirB' | 'direct' | 'bpf' | 'upgradeable' | 'authority', Address>;
  before(async () => {
    for (const key of ['single', 'dirA', 'dirB', 'direct', 'bpf', 'upgradeable', 'authority'] as const) ids[key] = await randomAddress();
    writeFileSync(memoFile, memoElf);
    writeFileSync(join(dir, 'single.json'), accountJson(ids.single, 5_000_000, new Uint8Array([1, 2, 3]), ids.authority));
    const accountDir = join(dir, 'accounts');
    mkdirSync(accountDir);
    writeFileSync(join(accountDir, 'a.json'), accountJson(ids.dirA, 1_000_000, new Uint8Array(10).fill(7), '11111111111111111111111111111111'));
    writeFileSync(join(accountDir, 'b.json'), accountJson(ids.dirB, 2_000_000, new Uint8Array(), '11111111111111111111111111111111'));
    writeFileSync(join(accountDir, 'notes.txt'), 'not an account');
    localnet = await startLocalnet({
      port: 0,
      testMode: true,
      slotIntervalMs: 0,
      accounts: [{ address: ids.single, file: join(dir, 'single.json') }, { address: ids.direct, account: { lamports: 42, data: ['AQID', 'base64'], owner: ids.authority } }],
      accountDirs: [accountDir],
      bpfPrograms: [{ address: ids.bpf, file: memoFile }],
      upgradeablePrograms: [{ address: ids.upgradeable, bytes: memoElf, authority: ids.authority }],
    });
  });
  after(() => localnet?.close());

  test('accounts from files, a directory and given directly are there as written', async () => {
    const { value } = await rpcResult<{ value: ({ lamports: number; data: [string, string]; owner: string; executable: boolean } | null)[] }>(localnet.rpcUrl, 'getMultipleAccounts', [
      [ids.single, ids.dirA, ids.dirB, ids.direct],
      { encoding: 'base64' },
    ]);
    assert.deepEqual(value.map((a) => a && [a.lamports, a.data[0], a.owner, a.executable]), [
      [5_000_000, 'AQID', ids.authority, false],
      [1_000_000, Buffer.from(new Uint8Array(10).fill(7)).toString('base64'), '11111111111111111111111111111111', false],
      [2_000_000, '', '11111111111111111111111111111111', false],
      [42, 'AQID', ids.authority, false],
    ]);
  });

  test('programs run at their addresses; --bpf-program has no upgrade authority, --upgradeable-program the one given', async () => {
    for (const program of [ids.bpf, ids.upgradeable]) {
      const { err, logs } = await callMemo(localnet.rpcUrl, program, 'hello');
      assert.equal(err, null);
      assert.deepEqual(logs.slice(1, 3), ['Program log: Memo (len 5)', 'Program log: hello']);
      assert.equal(logs[0], `Program ${program} invoke [1]`);
      const account = await rpcResult<{ value: { owner: string; executable: boolean; data: [string, string] } }>(localnet.rpcUrl, 'getAccountInfo', [program, { encoding: 'base64' }]);
      assert.equal(account.value.owner, UPGRADEABLE_LOADER);
      assert.equal(account.value.executable, true);
      const programData = getAddressDecoder().decode(Buffer.from(account.value.data[0], 'base64').subarray(4, 36));
      const stored = await rpcResult<{ value: { data: [string, string] } }>(localnet.rpcUrl, 'getAccountInfo', [programData, { encoding: 'base64', dataSlice: { offset: 0, length: 45 } }]);
      const header = Buffer.from(stored.value.data[0], 'base64');
      assert.equal(header.readUInt32LE(0), 3); // ProgramData
      assert.equal(header.readBigUInt64LE(4), 0n); // deployed at genesis
      if (program === ids.bpf) assert.equal(header[12], 0);
      else assert.deepEqual([header[12], ...header.subarray(13, 45)], [1, ...getAddressEncoder().encode(ids.authority)]);
    }
  });
});

describe('preloading errors name what is wrong', () => {
  const cases: [string, () => Promise<object>, RegExp][] = [
    ['a missing account file', async () => ({ accounts: [{ address: await randomAddress(), file: join(dir, 'missing.json') }] }), /account file .*missing\.json: ENOENT/],
    ['an account file that is not JSON', async () => {
      writeFileSync(join(dir, 'broken.json'), '{ nope');
      return { accounts: [{ address: '-', file: join(dir, 'broken.json') }] };
    }, /account file .*broken\.json: not JSON/],
    ['an account file without an owner', async () => {
      writeFileSync(join(dir, 'ownerless.json'), JSON.stringify({ pubkey: await randomAddress(), account: { lamports: 1, data: ['', 'base64'] } }));
      return { accountDirs: [], accounts: [{ file: join(dir, 'ownerless.json') }] };
    }, /ownerless\.json: "owner" is not an address/],
    ['a bad --account address', async () => ({ accounts: [{ address: 'not-an-address', file: join(dir, 'single.json') }] }), /--account address "not-an-address"/],
    ['a missing --account-dir', async () => ({ accountDirs: [join(dir, 'nowhere')] }), /--account-dir .*nowhere: ENOENT/],
    ['a missing program file', async () => ({ bpfPrograms: [{ address: await randomAddress(), file: join(dir, 'missing.so') }] }), /--bpf-program .*: cannot read .*missing\.so: ENOENT/],
    ['a file that is no program', async () => ({ bpfPrograms: [{ address: await randomAddress(), file: join(dir, 'single.json') }] }), /single\.json is not an ELF file/],
    ['an ELF that does not load', async () => ({ bpfPrograms: [{ address: await randomAddress(), bytes: memoElf.slice(0, 200) }] }), /is not a program the chain can load/],
    ['a bad program address', async () => ({ upgradeablePrograms: [{ address: 'nope', bytes: memoElf, authority: 'none' }] }), /--upgradeable-program address "nope" is neither an address nor a readable keypair file/],
  ];
  for (const [name, options, message] of cases) {
    test(name, async () => {
      await assert.rejects(startLocalnet({ port: 0, slotIntervalMs: 0, ...(await options()) }), (err: Error) => {
        assert.ok(err instanceof PreloadError, String(err));
        assert.match(err.message, message);
        return true;
      });
    });
  }
});

/** Runs the CLI (from sources, through tsx) until it prints its URLs or exits. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; rpcUrl?: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['bin/cinder-localnet.js', ...args], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cinder-localnet did not start or exit: ${stdout} ${stderr}`));
    }, 60_000);
    child.stdout.on('data', () => {
      const rpcUrl = /Solana WebSocket: /.test(stdout) ? /Solana JSON-RPC: (\S+)/.exec(stdout)?.[1] : undefined;
      if (rpcUrl) {
        clearTimeout(timer);
        resolve({ code: null, stdout, stderr, rpcUrl, stop });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, stop });
    });
  });
}

describe('cinder-localnet flags', () => {
  test('--help lists every flag', async () => {
    const { code, stdout } = await cli(['--help']);
    assert.equal(code, 0);
    for (const flag of ['--port', '--rpc-port', '--account', '--account-dir', '--bpf-program', '--upgradeable-program', '--timing', '--slot-ms', '--token-2022-native-mint', '--slots-per-epoch', '--reset', '--help']) {
      assert.ok(stdout.includes(flag), `${flag} in --help`);
    }
  });

  test('a bad file stops the start with an error naming it; an unknown flag is refused', async () => {
    const bad = await cli(['--port', '0', '--account-dir', join(dir, 'nowhere')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Could not start the local chain: --account-dir .*nowhere: ENOENT/);
    const tooShort = await cli(['--port', '0', '--slots-per-epoch', '31']);
    assert.equal(tooShort.code, 1);
    assert.match(tooShort.stderr, /--slots-per-epoch takes a whole number of at least 32, got "31"/);
    const unknown = await cli(['--bogus']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Unknown option '--bogus'/);
  });

  test('--account, --bpf-program and --upgradeable-program load what they name', async () => {
    const [account, bpf, upgradeable] = await Promise.all([randomAddress(), randomAddress(), randomAddress()]);
    writeFileSync(memoFile, memoElf);
    writeFileSync(join(dir, 'cli.json'), accountJson(account, 7_000_000, new Uint8Array([9]), '11111111111111111111111111111111'));
    const run = await cli(['--port', '0', '--reset', '--account', '-', join(dir, 'cli.json'), '--bpf-program', bpf, memoFile, '--upgradeable-program', upgradeable, memoFile, 'none']);
    try {
      assert.ok(run.rpcUrl, run.stderr);
      const { value } = await rpcResult<{ value: ({ lamports: number; executable: boolean } | null)[] }>(run.rpcUrl, 'getMultipleAccounts', [[account, bpf, upgradeable], { encoding: 'base64' }]);
      assert.deepEqual(value.map((a) => a && [a.lamports > 0, a.executable]), [[true, false], [true, true], [true, true]]);
      assert.equal(value[0]!.lamports, 7_000_000);
    } finally {
      await run.stop();
    }
  });
});
