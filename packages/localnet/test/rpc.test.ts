/** The JSON-RPC envelope and the cluster / account read methods, checked at the wire level. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getAddressEncoder,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NO_SNAPSHOT,
  type Address,
  type Rpc,
  type SolanaRpcApi,
} from '@solana/kit';
import { startLocalnet, type Localnet } from '../src/index.ts';
import { postRaw, rpcCall, rpcResult } from '@cinder/testkit';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

describe('JSON-RPC over HTTP (test mode)', () => {
  let localnet: Localnet;
  let url: string;
  before(async () => {
    localnet = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 0 });
    url = localnet.rpcUrl;
  });
  after(() => localnet.close());

  test('URLs point at 127.0.0.1 with two distinct ports', () => {
    assert.match(localnet.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(localnet.wsUrl, /^ws:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(localnet.rpcUrl).port, new URL(localnet.wsUrl).port);
  });

  test('batch requests answer every call, in order, with its id', async () => {
    const { status, text } = await postRaw(url, JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'getHealth' },
      { jsonrpc: '2.0', id: 7, method: 'noSuchMethod' },
      { jsonrpc: '2.0', method: 'getHealth' }, // a notification: no reply
      { jsonrpc: '2.0', id: 9, method: 'getSlot' },
      { id: 10, method: 'getSlot' },
    ]));
    assert.equal(status, 200);
    assert.deepEqual(JSON.parse(text), [
      { jsonrpc: '2.0', result: 'ok', id: 'a' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 7 },
      { jsonrpc: '2.0', result: 0, id: 9 },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null },
    ]);
  });

  test('malformed JSON, empty batch, unknown method and bad params', async () => {
    assert.deepEqual(JSON.parse((await postRaw(url, '{"jsonrpc":')).text), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    assert.deepEqual(JSON.parse((await postRaw(url, '[]')).text), { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
    assert.deepEqual(await rpcCall(url, 'getConfirmedBlock', [0]), { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1 });
    assert.deepEqual((await rpcCall(url, 'getBalance', ['not-an-address'])).error, { code: -32602, message: 'Invalid param: Invalid' });
    assert.equal((await rpcCall(url, 'getBalance', [])).error?.code, -32602);
    assert.equal((await rpcCall(url, 'getSlot', [{ commitment: 'soon' }])).error?.code, -32602);
    assert.equal((await rpcCall(url, 'getAccountInfo', [TOKEN_PROGRAM, { encoding: 'base64+zstd' }])).error?.code, -32602);
  });

  test('minContextSlot in the future is refused with -32016', async () => {
    assert.deepEqual((await rpcCall(url, 'getBalance', [TOKEN_PROGRAM, { minContextSlot: 1_000_000 }])).error, {
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: 1 }, // the chain starts in slot 1 (slot 0 is genesis)
    });
  });

  test('u64 values are bare JSON integers', async () => {
    const { text } = await postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [TOKEN_PROGRAM, { encoding: 'base64' }] }));
    assert.match(text, /"lamports":1141440,/);
    assert.match(text, /"rentEpoch":18446744073709551615,/);
  });

  test('cluster information', async () => {
    assert.equal(await rpcResult(url, 'getHealth'), 'ok');
    assert.deepEqual(Object.keys(await rpcResult<object>(url, 'getVersion')), ['solana-core', 'feature-set']);
    assert.match(await rpcResult<string>(url, 'getGenesisHash'), /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    assert.match((await rpcResult<{ identity: string }>(url, 'getIdentity')).identity, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    assert.equal(await rpcResult(url, 'getMinimumBalanceForRentExemption', [165]), 2039280);
    assert.equal(await rpcResult(url, 'getMinimumBalanceForRentExemption', [0]), 890880);
    assert.deepEqual(await rpcResult(url, 'getRecentPrioritizationFees', []), [
      { slot: 0, prioritizationFee: 0 },
      { slot: 1, prioritizationFee: 0 },
    ]);
  });

  test('slots, block height, epoch info and the blockhash window agree', async () => {
    const confirmed = [{ commitment: 'confirmed' }];
    const first = await rpcResult<{ context: { slot: number }; value: { blockhash: string; lastValidBlockHeight: number } }>(url, 'getLatestBlockhash', confirmed);
    assert.equal(first.value.lastValidBlockHeight, first.context.slot + 150);
    // From the first slot (1: slot 0 is genesis) to slot 40.
    assert.equal(first.context.slot, 1);
    assert.equal(await rpcResult(url, 'localnet_warpSlots', [39]), 40);
    const slot = await rpcResult<number>(url, 'getSlot', confirmed);
    assert.equal(await rpcResult(url, 'getBlockHeight', confirmed), slot);
    // A test validator's genesis schedule: no warm-up, 432,000 slots from epoch 0.
    assert.deepEqual(await rpcResult(url, 'getEpochSchedule'), { slotsPerEpoch: 432_000, leaderScheduleSlotOffset: 432_000, warmup: false, firstNormalEpoch: 0, firstNormalSlot: 0 });
    assert.deepEqual(await rpcResult(url, 'getEpochInfo', confirmed), { absoluteSlot: 40, blockHeight: 40, epoch: 0, slotIndex: 40, slotsInEpoch: 432_000, transactionCount: 0 });
    // `finalized` (the default commitment) lags the tip by 32 slots.
    assert.equal(await rpcResult(url, 'getSlot'), 8);
    assert.equal(await rpcResult(url, 'getBlockHeight', [{ commitment: 'finalized' }]), 8);
    assert.deepEqual(await rpcResult(url, 'getEpochInfo'), { absoluteSlot: 8, blockHeight: 8, epoch: 0, slotIndex: 8, slotsInEpoch: 432_000, transactionCount: 0 });
    const latest = await rpcResult<{ value: { blockhash: string; lastValidBlockHeight: number } }>(url, 'getLatestBlockhash', confirmed);
    const finalized = await rpcResult<{ value: { blockhash: string; lastValidBlockHeight: number } }>(url, 'getLatestBlockhash', [{ commitment: 'finalized' }]);
    assert.notEqual(finalized.value.blockhash, latest.value.blockhash);
    assert.equal(finalized.value.lastValidBlockHeight, 8 + 150);
    assert.notEqual(latest.value.blockhash, first.value.blockhash);
    assert.equal(latest.value.lastValidBlockHeight, 190);
    assert.deepEqual((await rpcResult<{ value: boolean }>(url, 'isBlockhashValid', [first.value.blockhash])).value, true);
    // Valid while block height <= lastValidBlockHeight (150 blocks after the hash), not one block longer.
    await rpcResult(url, 'localnet_warpSlots', [first.value.lastValidBlockHeight - 40]);
    assert.equal((await rpcResult<{ value: boolean }>(url, 'isBlockhashValid', [first.value.blockhash])).value, true);
    await rpcResult(url, 'localnet_warpSlots', [1]);
    assert.equal((await rpcResult<{ value: boolean }>(url, 'isBlockhashValid', [first.value.blockhash])).value, false);
    assert.equal((await rpcResult<{ value: boolean }>(url, 'isBlockhashValid', [latest.value.blockhash])).value, true);
  });

  test('SPL Token, Token-2022 and Associated Token programs and SPL Token\'s native mint exist; Token-2022\'s is not made at start', async () => {
    const accounts = await rpcResult<{ value: ({ executable: boolean; owner: string } | null)[] }>(url, 'getMultipleAccounts', [
      [TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ATA_PROGRAM, 'So11111111111111111111111111111111111111112', '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP'],
      { encoding: 'base64', dataSlice: { offset: 0, length: 0 } },
    ]);
    assert.deepEqual(accounts.value.map((a) => [a?.executable, a?.owner]), [
      [true, 'BPFLoaderUpgradeab1e11111111111111111111111'],
      [true, 'BPFLoaderUpgradeab1e11111111111111111111111'],
      [true, 'BPFLoader2111111111111111111111111111111111'],
      [false, TOKEN_PROGRAM],
      [undefined, undefined],
    ]);
    const wsol = await rpcResult<{ value: { data: unknown } }>(url, 'getAccountInfo', ['So11111111111111111111111111111111111111112', { encoding: 'jsonParsed' }]);
    assert.deepEqual(wsol.value.data, {
      program: 'spl-token',
      parsed: { type: 'mint', info: { decimals: 9, freezeAuthority: null, isInitialized: true, mintAuthority: null, supply: '0' } },
      space: 82,
    });
  });

  test('localnet_setAccount writes an account; encodings and dataSlice apply', async () => {
    const target = 'Bv9P8uWcexNSoFXFbhh3aJAqMDjXCwE4FMXXKSJx94F4';
    assert.equal(await rpcResult(url, 'localnet_setAccount', [target, { lamports: 1234, data: 'AQIDBAU=', owner: TOKEN_PROGRAM }]), null);
    const base64 = await rpcResult<{ value: unknown }>(url, 'getAccountInfo', [target, { encoding: 'base64', dataSlice: { offset: 1, length: 2 } }]);
    assert.deepEqual(base64.value, { data: ['AgM=', 'base64'], executable: false, lamports: 1234, owner: TOKEN_PROGRAM, rentEpoch: 18446744073709552000, space: 5 });
    const binary = await rpcResult<{ value: { data: unknown } }>(url, 'getAccountInfo', [target]);
    assert.equal(binary.value.data, '7bWpTW'); // default "binary" encoding: a bare base58 string
    const parsedFallback = await rpcResult<{ value: { data: unknown } }>(url, 'getAccountInfo', [target, { encoding: 'jsonParsed' }]);
    assert.deepEqual(parsedFallback.value.data, ['AQIDBAU=', 'base64']); // not a token account: base64
    assert.equal((await rpcResult<{ value: number }>(url, 'getBalance', [target])).value, 1234);
    assert.equal((await rpcResult<{ value: null }>(url, 'getAccountInfo', ['8qbHbw2BbbTHBW1sbeqakYXVKRQM8Ne7pLK7m6CVfeR'])).value, null);
  });

  test('getProgramAccounts with dataSize and memcmp filters', async () => {
    const owner = 'CktRuQ2mttgRGkXJtyksdKHjUdc2C4TgDzyB98oEzy8';
    await rpcResult(url, 'localnet_setAccount', [owner, { lamports: 10, data: 'AAAA', owner: ATA_PROGRAM }]);
    await rpcResult(url, 'localnet_setAccount', ['GQn9sQcTxTHnpxBvz4gmkzVg7bYYxrJwBG2ZWsHhjLtX', { lamports: 10, data: 'AAECAwQF', owner: ATA_PROGRAM }]);
    const all = await rpcResult<{ pubkey: string }[]>(url, 'getProgramAccounts', [ATA_PROGRAM, { encoding: 'base64', filters: [{ dataSize: 6 }] }]);
    assert.deepEqual(all.map((a) => a.pubkey), ['GQn9sQcTxTHnpxBvz4gmkzVg7bYYxrJwBG2ZWsHhjLtX']);
    const byBytes = await rpcResult<{ pubkey: string }[]>(url, 'getProgramAccounts', [ATA_PROGRAM, { encoding: 'base64', filters: [{ memcmp: { offset: 2, bytes: 'AgM=', encoding: 'base64' } }] }]);
    assert.deepEqual(byBytes.map((a) => a.pubkey), ['GQn9sQcTxTHnpxBvz4gmkzVg7bYYxrJwBG2ZWsHhjLtX']);
    const withContext = await rpcResult<{ context: { slot: number }; value: unknown[] }>(url, 'getProgramAccounts', [ATA_PROGRAM, { encoding: 'base64', withContext: true, filters: [{ memcmp: { offset: 0, bytes: '1' } }] }]);
    assert.equal(withContext.value.length, 2); // base58 "1" = one zero byte, both accounts start with 0
  });

  test('GET /health and non-POST requests', async () => {
    const health = await fetch(`${url}/health`);
    assert.equal(await health.text(), 'ok');
    assert.equal((await fetch(url)).status, 405);
  });

  test('request bodies over 10 MB are refused', async () => {
    const { status } = await postRaw(url, `"${'x'.repeat(10 * 1024 * 1024)}"`);
    assert.equal(status, 413);
  });
});

describe('snapshot, largest-accounts and inflation methods (test mode)', () => {
  let localnet: Localnet;
  let url: string;
  let rpc: Rpc<SolanaRpcApi>;
  before(async () => {
    localnet = await startLocalnet({ port: 0, testMode: true, slotIntervalMs: 0 });
    url = localnet.rpcUrl;
    rpc = createSolanaRpc(url);
  });
  after(() => localnet.close());

  /** Slots per year of the genesis defaults (160 ticks a second, 64 ticks a slot): 2.5 slots a second. */
  const slotsPerYear = 365.242199 * 24 * 60 * 60 * 2.5;
  /** The default inflation schedule at a year: max(terminal, initial × (1 − taper)^year), 5 % of it to the foundation for 7 years. */
  const expectedRate = (firstSlotOfEpoch: number, epoch: number) => {
    const year = firstSlotOfEpoch / slotsPerYear;
    const total = Math.max(0.015, 0.08 * Math.pow(0.85, year));
    const foundation = year < 7 ? total * 0.05 : 0;
    return { total, validator: total - foundation, foundation, epoch };
  };

  test('getHighestSnapshotSlot: the chain keeps no snapshot, so -32008 "No snapshot" as from a validator without one', async () => {
    assert.deepEqual(await rpcCall(url, 'getHighestSnapshotSlot'), { jsonrpc: '2.0', error: { code: -32008, message: 'No snapshot' }, id: 1 });
    assert.deepEqual((await rpcCall(url, 'getHighestSnapshotSlot', [])).error, { code: -32008, message: 'No snapshot' });
    assert.deepEqual((await rpcCall(url, 'getHighestSnapshotSlot', [{ commitment: 'finalized' }])).error, {
      code: -32602,
      message: 'Invalid parameters: No parameters were expected',
    });
    await assert.rejects(rpc.getHighestSnapshotSlot().send(), (err) => isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NO_SNAPSHOT));
  });

  test('getInflationGovernor: the default schedule, at any commitment; unknown commitments and extra params refused', async () => {
    const governor = { initial: 0.08, terminal: 0.015, taper: 0.15, foundation: 0.05, foundationTerm: 7 };
    assert.deepEqual(await rpcResult(url, 'getInflationGovernor'), governor);
    const { text } = await postRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getInflationGovernor', params: [{ commitment: 'confirmed' }] }));
    assert.equal(text, '{"jsonrpc":"2.0","result":{"initial":0.08,"terminal":0.015,"taper":0.15,"foundation":0.05,"foundationTerm":7},"id":1}');
    assert.deepEqual(await rpc.getInflationGovernor({ commitment: 'processed' }).send(), governor);
    assert.deepEqual((await rpcCall(url, 'getInflationGovernor', [{ commitment: 'soon' }])).error, {
      code: -32602,
      message: 'Invalid params: unknown variant `soon`, expected one of `processed`, `confirmed`, `finalized`.',
    });
    assert.deepEqual((await rpcCall(url, 'getInflationGovernor', [{}, {}])).error, {
      code: -32602,
      message: 'Invalid parameters: Expected from 0 to 1 parameters.',
      data: '"Got: 2"',
    });
  });

  test('getInflationRate: the rates of the finalized epoch, dated from its first slot, as getEpochInfo counts epochs', async () => {
    assert.deepEqual(await rpcResult(url, 'getInflationRate'), { total: 0.08, validator: 0.08 - 0.08 * 0.05, foundation: 0.08 * 0.05, epoch: 0 });
    assert.deepEqual((await rpcCall(url, 'getInflationRate', [{ commitment: 'confirmed' }])).error, {
      code: -32602,
      message: 'Invalid parameters: No parameters were expected',
    });
    // Tip 100, finalized 68: still epoch 0 (no warm-up), whose rates are the initial ones.
    await rpcResult(url, 'localnet_warpSlots', [100]);
    assert.equal((await rpcResult<{ epoch: number }>(url, 'getEpochInfo')).epoch, 0);
    assert.deepEqual(await rpcResult(url, 'getInflationRate'), expectedRate(0, 0));
    // Tip 1,000,101, finalized 1,000,069: epoch 2 (slots 864,000–1,295,999), dated from slot 864,000.
    await rpcResult(url, 'localnet_warpSlots', [1_000_000]);
    const info = await rpcResult<{ absoluteSlot: number; slotIndex: number; epoch: number }>(url, 'getEpochInfo');
    assert.deepEqual([info.epoch, info.absoluteSlot - info.slotIndex], [2, 864_000]);
    const late = await rpc.getInflationRate().send();
    assert.deepEqual(late, { ...expectedRate(864_000, 2), epoch: 2n });
    assert.ok(late.total < 0.0799 && late.foundation > 0, `total ${late.total}`);
  });

  test('getLargestAccounts: top 20 by lamports, ties in descending address order, every account circulating', async () => {
    type Balance = { address: Address; lamports: number };
    const largest = async (config?: object) => (await rpcResult<{ context: { slot: number }; value: Balance[] }>(url, 'getLargestAccounts', config ? [config] : [])).value;
    const addressBytes = getAddressEncoder();
    const descendingAddress = (a: Address, b: Address) => {
      const [x, y] = [addressBytes.encode(a), addressBytes.encode(b)];
      for (let i = 0; i < 32; i++) if (x[i] !== y[i]) return y[i]! - x[i]!;
      return 0;
    };
    const initial = await largest();
    assert.equal(initial.length, 20);
    assert.deepEqual(Object.keys(initial[0]!), ['address', 'lamports']);
    for (let i = 1; i < initial.length; i++) {
      const [a, b] = [initial[i - 1]!, initial[i]!];
      assert.ok(a.lamports > b.lamports || (a.lamports === b.lamports && descendingAddress(a.address, b.address) < 0), `${a.address} before ${b.address}`);
    }
    const faucet = initial[0]!;
    assert.equal((await rpcResult<{ value: number }>(url, 'getBalance', [faucet.address])).value, faucet.lamports);

    // Two written directly with the same balance, one funded by a landed airdrop.
    const [{ address: twinA }, { address: twinB }, { address: funded }] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
    const twins = 300_000_000_000_000;
    for (const twin of [twinA, twinB]) await rpcResult(url, 'localnet_setAccount', [twin, { lamports: twins }]);
    await rpcResult(url, 'requestAirdrop', [funded, 200_000_000_000_000]);
    const updated = await largest({ commitment: 'confirmed' });
    assert.equal(updated.length, 20);
    assert.deepEqual(updated.slice(0, 4), [
      // The faucet paid the airdrop and its 5000-lamport fee.
      { address: faucet.address, lamports: faucet.lamports - 200_000_000_000_000 - 5000 },
      ...[twinA, twinB].sort(descendingAddress).map((address) => ({ address, lamports: twins })),
      { address: funded, lamports: 200_000_000_000_000 },
    ]);
    assert.deepEqual(updated.slice(4), initial.slice(1, 17));
    // No account is non-circulating here (getSupply says the same).
    assert.deepEqual(await largest({ filter: 'circulating' }), updated);
    assert.deepEqual(await largest({ filter: 'nonCirculating' }), []);
    const kit = await rpc.getLargestAccounts({ filter: 'circulating' }).send();
    assert.deepEqual(kit.value.map((a) => [a.address, a.lamports]), updated.map((a) => [a.address, BigInt(a.lamports)]));

    // An account emptied to 0 lamports no longer exists, and leaves the list.
    await rpcResult(url, 'localnet_setAccount', [twinA, { lamports: 0 }]);
    assert.deepEqual((await largest()).map((a) => a.address).slice(0, 3), [faucet.address, twinB, funded]);

    assert.deepEqual((await rpcCall(url, 'getLargestAccounts', [{ filter: 'staked' }])).error, {
      code: -32602,
      message: 'Invalid params: unknown variant `staked`, expected `circulating` or `nonCirculating`.',
    });
    assert.equal((await rpcCall(url, 'getLargestAccounts', [{ commitment: 'soon' }])).error?.code, -32602);
    assert.deepEqual((await rpcCall(url, 'getLargestAccounts', [{}, {}])).error, {
      code: -32602,
      message: 'Invalid parameters: Expected from 0 to 1 parameters.',
      data: '"Got: 2"',
    });
  });
});

describe('JSON-RPC without test mode', () => {
  let localnet: Localnet;
  before(async () => {
    localnet = await startLocalnet({ port: 0, slotIntervalMs: 0 });
  });
  after(() => localnet.close());

  test('localnet_* methods do not exist', async () => {
    for (const [method, params] of [['localnet_warpSlots', [1]], ['localnet_setAccount', ['CktRuQ2mttgRGkXJtyksdKHjUdc2C4TgDzyB98oEzy8', { lamports: 1 }]]] as const) {
      assert.deepEqual((await rpcCall(localnet.rpcUrl, method, [...params])).error, { code: -32601, message: 'Method not found' });
    }
    // Without a clock or warps the chain stays in its first slot (1; slot 0 is genesis), and the
    // confirmed (two slots behind with validator timing) and finalized slots (getSlot's default
    // commitment) at genesis.
    assert.equal(await rpcResult(localnet.rpcUrl, 'getSlot', [{ commitment: 'processed' }]), 1);
    assert.equal(await rpcResult(localnet.rpcUrl, 'getSlot', [{ commitment: 'confirmed' }]), 0);
    assert.equal(await rpcResult(localnet.rpcUrl, 'getSlot'), 0);
  });
});

describe('startLocalnet options', () => {
  test('token2022NativeMint: Token-2022\'s native mint exists at start', async () => {
    const localnet = await startLocalnet({ port: 0, slotIntervalMs: 0, token2022NativeMint: true });
    try {
      const mint = await rpcResult<{ value: { owner: string; data: { parsed: { info: unknown } } } }>(localnet.rpcUrl, 'getAccountInfo', ['9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP', { encoding: 'jsonParsed' }]);
      assert.equal(mint.value.owner, TOKEN_2022_PROGRAM);
      assert.deepEqual(mint.value.data.parsed.info, { decimals: 9, freezeAuthority: null, isInitialized: true, mintAuthority: null, supply: '0' });
    } finally {
      await localnet.close();
    }
  });

  test('an explicit port puts the WebSocket on port + 1, and close() is idempotent', async () => {
    const probe = await startLocalnet({ port: 0, slotIntervalMs: 0 });
    const port = Number(new URL(probe.rpcUrl).port);
    await probe.close();
    const localnet = await startLocalnet({ port, slotIntervalMs: 0 });
    try {
      assert.equal(localnet.rpcUrl, `http://127.0.0.1:${port}`);
      assert.equal(localnet.wsUrl, `ws://127.0.0.1:${port + 1}`);
    } finally {
      await Promise.all([localnet.close(), localnet.close()]);
      await localnet.close();
    }
  });

  test('invalid ports are rejected and a busy port fails cleanly', async () => {
    await assert.rejects(startLocalnet({ port: 70000 }), RangeError);
    await assert.rejects(startLocalnet({ port: 65535 }), RangeError); // WebSocket would need 65536
    const busy = await startLocalnet({ port: 0, slotIntervalMs: 0 });
    try {
      await assert.rejects(startLocalnet({ port: Number(new URL(busy.rpcUrl).port), wsPort: 0 }), /EADDRINUSE/);
    } finally {
      await busy.close();
    }
  });
});
