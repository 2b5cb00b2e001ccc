import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskServer } from '../../src/server/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { waitFor } from '../helpers/wait.js';
import { rpc } from './support.js';
import {
  assertSafe,
  assertTroubleError,
  CapturingLogger,
  troubleServer,
} from './trouble-support.js';

const skip = hasRedisServer() ? false : 'redis-server is not installed';
if (skip !== false) process.stdout.write(`# skipping the Redis outage suite: ${skip}\n`);

/** Our own redis-server, stopped under a running server: retryable errors, then recovery. */
describe('store trouble: the Redis server goes away', { skip }, () => {
  const logger = new CapturingLogger();
  let redis: OwnRedis;
  let store: TaskStore;
  let app: TaskServer;
  let url: string;

  before(async () => {
    redis = await startOwnRedis();
    store = await openRedisStore(`${redis.url}?prefix=trouble`, { onWarning: () => undefined });
    app = troubleServer(store, logger);
    ({ url } = await app.listen(0));
  });
  after(async () => {
    await app.close(1000);
    await store.close();
    await redis.remove();
  });

  it('answers create and tasks/get with 503 -32603 while Redis is down, without its address', async () => {
    const made = await rpc(url, 'tools/call', { name: 'quick', arguments: {} });
    const taskId = made.body.result?.['taskId'] as string;
    assert.equal(typeof taskId, 'string');
    await redis.stop();
    for (const [method, params] of [
      ['tools/call', { name: 'quick', arguments: {} }],
      ['tasks/get', { taskId }],
    ] as const) {
      const reply = await rpc(url, method, params);
      assert.equal(reply.status, 503, `${method}: ${JSON.stringify(reply.body)}`);
      assertTroubleError(reply.body.error);
      assertSafe(JSON.stringify(reply.body), [String(redis.port), 'redis://', 'ioredis']);
    }
    assert.ok(logger.troubleLines().length >= 1, 'the detail went to the log');
    await redis.start();
    const again = await waitFor('a create after Redis is back', async () => {
      const reply = await rpc(url, 'tools/call', { name: 'quick', arguments: {} });
      return reply.status === 200 ? reply : undefined;
    });
    assert.equal(again.body.result?.['resultType'], 'task');
  });
});
