import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { after, describe, it } from 'node:test';
import type { TaskEventMap } from '../../src/store/events.js';
import type { TaskStore } from '../../src/store/port.js';
import { evictionWarning, openRedisStore, parseRedisUrl } from '../../src/stores/redis/index.js';
import { TaskrailError } from '../../src/task/errors.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { cancel, complete, report } from '../../src/task/transitions.js';
import { waitFor } from '../helpers/wait.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';
import { hasRedisServer, startOwnRedis } from '../helpers/own-redis.js';
import { freePort } from '../helpers/ports.js';

function record(ttlMs: number | null = 60_000) {
  return newTaskRecord(
    { id: newTaskId(), principal: 'alice', tool: 't', arguments: {}, ttlMs, pollIntervalMs: 500 },
    Date.now(),
  );
}

describe('redis store URLs and start-up checks', () => {
  it('parses prefix and database and hides credentials', () => {
    const location = parseRedisUrl('redis://bob:hunter2@example.test:6380/3?prefix=prod');
    assert.equal(location.prefix, 'prod');
    assert.equal(location.db, 3);
    assert.equal(location.safeUrl.includes('hunter2'), false);
    assert.equal(location.connectUrl.includes('prefix'), false);
    assert.equal(parseRedisUrl('redis://h:1').prefix, 'taskrail');
    assert.throws(() => parseRedisUrl('redis://h:1/x'), TaskrailError);
    assert.throws(() => parseRedisUrl('redis://h:1/0?prefix=a b'), TaskrailError);
  });

  it('fails fast and clearly when redis is unreachable, without the password', async () => {
    const port = await freePort();
    const started = Date.now();
    await assert.rejects(openRedisStore(`redis://bob:hunter2@127.0.0.1:${port}/0`), (error) => {
      assert.ok(error instanceof TaskrailError);
      assert.equal(error.code, 'STORE_UNAVAILABLE');
      assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.equal(error.message.includes('hunter2'), false);
      return true;
    });
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('warns about every eviction policy but noeviction', () => {
    assert.equal(evictionWarning('noeviction', 'redis://h:1/0'), undefined);
    assert.match(evictionWarning('allkeys-lru', 'redis://h:1/0') ?? '', /allkeys-lru.*noeviction/);
  });

  it('warns at start-up when a real redis may evict keys', async (t) => {
    if (!hasRedisServer()) return t.skip('redis-server is not installed');
    const server = await startOwnRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    try {
      const warnings: string[] = [];
      const onWarning = (message: string) => warnings.push(message);
      const store = await openRedisStore(server.url, { onWarning });
      await store.close();
      assert.equal(warnings.length, 1);
      assert.match(warnings[0] as string, /maxmemory-policy 'allkeys-lru'/);
    } finally {
      await server.remove();
    }
  });
});

if (!skipWithoutRedis('redis store across instances')) {
  describe('redis store across instances', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    const stores: TaskStore[] = [];
    const open = async () => {
      const store = await openRedisStore(url);
      stores.push(store);
      return store;
    };
    after(async () => {
      for (const store of stores) await store.close();
      await deletePrefix(prefix);
    });

    it("re-emits another instance's writes once, and never echoes its own", async () => {
      const [a, b] = [await open(), await open()];
      const seenA: string[] = [];
      const seenB: Array<TaskEventMap['task:transition']> = [];
      a.events.on('task:updated', ({ task }) => seenA.push(task.statusMessage ?? ''));
      b.events.on('task:transition', (event) => seenB.push(event));
      const created = await waitForEvent(
        b,
        'task:created',
        async () => (await a.create(record())).task,
      );
      const reported = report(created.task, 'half way', Date.now());
      assert.equal((await a.compareAndSet(reported, 1)).ok, true);
      const cancelled = cancel(reported, Date.now());
      assert.equal((await a.compareAndSet(cancelled, 2)).ok, true);
      await waitFor('the transition on b', () => seenB.length === 1);
      assert.deepEqual(seenB[0], { task: cancelled, from: 'working', to: 'cancelled' });
      assert.deepEqual(seenA, ['half way', 'Cancelled by request.']);
    });

    it('publishes ids and what changed, never the record, and replicas read it back', async () => {
      const [a, b] = [await open(), await open()];
      const raw = new Redis(url);
      const messages: string[] = [];
      raw.on('message', (_channel: string, message: string) => messages.push(message));
      await raw.subscribe(`${prefix}:events`);
      const transitions: Array<TaskEventMap['task:transition']> = [];
      b.events.on('task:transition', (event) => transitions.push(event));
      try {
        const pad = 'x'.repeat(1 << 20);
        const task = { ...record(), arguments: { pad } };
        const created = (await a.create(task)).task;
        const done = complete(created, { content: [{ type: 'text', text: pad }] }, Date.now());
        assert.equal((await a.compareAndSet(done, 1)).ok, true);
        await waitFor('both notices', () => messages.length === 2);
        for (const message of messages) assert.ok(message.length < 300, message.slice(0, 300));
        const [createdNotice, writeNotice] = messages.map((m) => JSON.parse(m) as object);
        assert.deepEqual(
          { ...createdNotice, o: undefined },
          { o: undefined, k: 'c', id: task.id, s: 'working', u: task.updatedAt },
        );
        assert.deepEqual(
          { ...writeNotice, o: undefined },
          {
            o: undefined,
            p: 'working',
            k: 'w',
            id: task.id,
            r: 2,
            s: 'completed',
            u: done.updatedAt,
          },
        );
        await waitFor('the transition on b', () => transitions.length === 1);
        assert.deepEqual(transitions[0], { task: done, from: 'working', to: 'completed' });
      } finally {
        raw.disconnect();
      }
    });

    it('announces sweeps to the other instances', async () => {
      const [a, b] = [await open(), await open()];
      const task = (await a.create(record(1))).task;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const deleted = await waitForEvent(b, 'task:deleted', () => a.sweepExpired(100));
      assert.equal(deleted.id, task.id);
    });
  });
}

async function waitForEvent<K extends 'task:created' | 'task:deleted'>(
  store: TaskStore,
  name: K,
  action: () => Promise<unknown>,
): Promise<TaskEventMap[K]> {
  let off = () => {};
  const seen = new Promise<TaskEventMap[K]>((resolve) => {
    off = store.events.on(name, resolve);
  });
  await action();
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no ${name}`)), 5000).unref(),
  );
  try {
    return await Promise.race([seen, timeout]);
  } finally {
    off();
  }
}
