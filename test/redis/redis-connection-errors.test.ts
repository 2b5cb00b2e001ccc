import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis, type RedisOptions } from 'ioredis';
import { redisStoreError } from '../../src/stores/redis/errors.js';
import { isStoreUnavailable } from '../../src/task/errors.js';

async function server(onSocket: (socket: net.Socket) => void): Promise<net.Server> {
  const listening = net.createServer((socket) => {
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return listening;
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

async function classified(failing: Promise<unknown>, message: RegExp): Promise<void> {
  const raw = await failing.then(
    () => assert.fail('expected ioredis to fail'),
    (error: unknown) => error,
  );
  assert.match(String((raw as Error).message), message);
  assert.ok(isStoreUnavailable(redisStoreError(raw)), `not store trouble: ${String(raw)}`);
}

/** ioredis's connection-level failures, produced for real (no Redis needed): store trouble. */
describe('redis connection failures, produced for real', () => {
  const sockets: net.Socket[] = [];
  let silent: net.Server;
  let closedPort: number;
  before(async () => {
    silent = await server((socket) => sockets.push(socket));
    const probe = await server(() => undefined);
    closedPort = portOf(probe);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  function client(port: number, options: RedisOptions = {}): Redis {
    const redis = new Redis(port, '127.0.0.1', { retryStrategy: () => 20, ...options });
    redis.on('error', () => undefined);
    return redis;
  }

  it('a dead port with maxRetriesPerRequest gives up the command', async () => {
    const redis = client(closedPort, { maxRetriesPerRequest: 1 });
    try {
      await classified(redis.get('k'), /max retries per request/);
    } finally {
      redis.disconnect();
    }
  });

  it('a dead port with the offline queue off refuses the command at once', async () => {
    const redis = client(closedPort, { enableOfflineQueue: false });
    try {
      await classified(redis.get('k'), /enableOfflineQueue/);
    } finally {
      redis.disconnect();
    }
  });

  it('a silent server times the command out', async () => {
    const redis = client(portOf(silent), { commandTimeout: 100, maxRetriesPerRequest: null });
    try {
      await classified(redis.get('k'), /Command timed out/);
    } finally {
      redis.disconnect();
    }
  });

  it('a client that was disconnected', async () => {
    const redis = client(closedPort, { retryStrategy: () => null, lazyConnect: true });
    redis.disconnect();
    await classified(redis.get('k'), /Connection is closed/);
  });
});
