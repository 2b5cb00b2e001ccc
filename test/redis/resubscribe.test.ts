import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { waitFor } from '../helpers/wait.js';

const skip = hasRedisServer() ? false : 'redis-server is not installed';

const record = () =>
  newTaskRecord(
    { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs: null, pollIntervalMs: 100 },
    Date.now(),
  );

/** A replica's change notices reach the others again once Redis is back, and nothing throws. */
describe('redis change notices across a restart', { skip }, () => {
  let redis: OwnRedis;
  let watcher: TaskStore;
  let writer: TaskStore;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);

  before(async () => {
    process.on('unhandledRejection', onRejection);
    redis = await startOwnRedis();
    const quiet = { onWarning: () => undefined };
    watcher = await openRedisStore(`${redis.url}?prefix=resub`, quiet);
    writer = await openRedisStore(`${redis.url}?prefix=resub`, quiet);
  });
  after(async () => {
    await watcher.close();
    await writer.close();
    await redis.remove();
    process.off('unhandledRejection', onRejection);
  });

  it('subscribes again, says so with store:resync, then relays the next create', async () => {
    const seen = new Set<string>();
    let resyncs = 0;
    watcher.events.on('task:created', ({ task }) => void seen.add(task.id));
    watcher.events.on('store:resync', () => void (resyncs += 1));
    const first = record();
    await writer.create(first);
    await waitFor('the create before the restart relayed', () => seen.has(first.id));

    await redis.stop();
    await redis.start();
    await waitFor('store:resync after the subscription is back', () => resyncs > 0, {
      timeoutMs: 20_000,
    });
    const later = record();
    await waitFor('the writer to reach Redis again', async () => {
      try {
        await writer.create(later);
        return true;
      } catch {
        return false;
      }
    });
    await waitFor('the create after the restart relayed', () => seen.has(later.id));
    // Closing right after a reconnection must not leave a rejected promise behind.
    await redis.stop();
    await redis.start();
    await watcher.close();
    assert.deepEqual(rejections, []);
  });
});
