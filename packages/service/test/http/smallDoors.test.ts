/**
 * Small doors of the HTTP edge (src/http/edge.ts), on the real app over real sockets:
 * - an X-Request-Id that is not a short printable id, or that could be a key (32 or more base58
 *   characters in a row: a 32-byte seed is 43–44), is replaced by a new UUID and never logged,
 *   at trace level included;
 * - open connections, idle keep-alive ones included, are bounded per address and in total.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '@cinder/testkit';
import { createTestKey } from '@cinder/testkit';
import { startTestChain, type TestChain } from '@cinder/testkit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let chain: TestChain;
const apps: TestApp[] = [];
before(async () => {
  chain = await startTestChain();
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await chain.close();
});

async function newApp(overrides: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> {
  const app = await createTestApp(overrides, { chain });
  apps.push(app);
  return app;
}

describe('X-Request-Id', () => {
  it('keeps a short printable id, and replaces (never logs) anything that could be a key', async () => {
    const t = await newApp({ logLevel: 'trace' });
    const key = await createTestKey();
    const kept = ['req-42', 'a1b2:c3.d4_e5', '3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b', `${'ab-'.repeat(21)}a`];
    for (const id of kept) {
      const response = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': id } });
      assert.equal(response.headers['x-request-id'], id);
    }
    const refused = [
      key.base58Seed, // a 32-byte seed: 43–44 base58 characters
      key.address, // indistinguishable from one
      key.base58SecretKey, // 64 bytes, and too long anyway
      `trace:${key.base58Seed.slice(0, 40)}`, // a key-length run inside an otherwise fine id
      'x'.repeat(65),
      'has space',
      'tab\tinside',
      'ünïcode',
      '',
    ];
    for (const id of refused) {
      for (const [method, url] of [['GET', '/health'], ['POST', '/api/burn_tokens']] as const) {
        const response = await t.app.inject({ method, url, headers: { 'x-request-id': id, 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined });
        assert.match(String(response.headers['x-request-id']), UUID, `${JSON.stringify(id)} was kept`);
        assert.notEqual(response.headers['x-request-id'], id);
      }
    }
    const logs = t.logs();
    assert.ok(logs.includes('"reqId":"req-42"'), 'a kept id is bound to the log lines');
    for (const secret of [key.base58Seed, key.address, key.base58SecretKey, key.base58Seed.slice(0, 40)]) {
      assert.ok(!logs.includes(secret), 'a key-like request id reached the log');
    }
  });
});

/** Opens a connection, sends a keep-alive GET /health, and resolves once it is answered (the socket stays open) or closed. */
function idleSocket(port: number): Promise<{ socket: Socket; answered: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    const done = (answered: boolean) => {
      socket.removeAllListeners('data');
      resolve({ socket, answered });
    };
    socket.once('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: cinder\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (/^HTTP\/1\.1 200/.test(received) && received.includes('\r\n\r\n')) done(true);
    });
    socket.once('close', () => done(false));
    socket.once('error', () => undefined); // a reset: 'close' follows
  });
}

/** Opens `attempts` keep-alive connections, `perRound` at a time, and counts those still open afterwards. */
async function holdSockets(port: number, attempts: number, perRound: number): Promise<{ open: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  for (let i = 0; i < attempts; i += perRound) {
    const round = await Promise.all(Array.from({ length: Math.min(perRound, attempts - i) }, () => idleSocket(port)));
    for (const { socket, answered } of round) if (answered) sockets.push(socket);
  }
  return { open: sockets.filter((s) => !s.destroyed && s.readyState === 'open').length, sockets };
}

describe('open connections', () => {
  it('one address cannot hold 2,000 idle keep-alive sockets: at most MAX_CONNECTIONS_PER_CLIENT', async () => {
    const t = await newApp({ maxConnectionsPerClient: 100 });
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = Number(new URL(address).port);
    const { open, sockets } = await holdSockets(port, 2_000, 200);
    try {
      assert.equal(open, 100, `${open} idle sockets held by one address`);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    // Closed sockets give their places back.
    let again: Awaited<ReturnType<typeof idleSocket>> | undefined;
    for (let i = 0; i < 100 && !again?.answered; i++) {
      again?.socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await idleSocket(port);
    }
    assert.equal(again?.answered, true);
    again?.socket.destroy();
  });

  it('the server holds at most MAX_CONNECTIONS in all', async () => {
    const t = await newApp({ maxConnections: 20 });
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { open, sockets } = await holdSockets(Number(new URL(address).port), 200, 50);
    try {
      assert.ok(open <= 20 && open > 0, `${open} sockets open`);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
