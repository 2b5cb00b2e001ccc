import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { complete } from '../../src/task/transitions.js';
import { waitFor } from '../helpers/wait.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

const record = () =>
  newTaskRecord(
    {
      id: newTaskId(),
      principal: 'alice',
      tool: 't',
      arguments: {},
      ttlMs: 60_000,
      pollIntervalMs: 500,
    },
    Date.now(),
  );

/** Counts the reads a store makes, by task id. */
function countGets(store: TaskStore): Map<string, number> {
  const reads = new Map<string, number>();
  const get = store.get.bind(store);
  store.get = (id: string) => {
    reads.set(id, (reads.get(id) ?? 0) + 1);
    return get(id);
  };
  return reads;
}

if (!skipWithoutRedis('redis change notices read back only wanted tasks')) {
  describe('redis change notices read back only wanted tasks', () => {
    const prefix = uniquePrefix();
    const stores: TaskStore[] = [];
    after(async () => {
      await Promise.all(stores.map((store) => store.close()));
      await deletePrefix(prefix);
    });

    it("reads another process's write only for a task a listener follows", async () => {
      const writer = await openRedisStore(urlWithPrefix(prefix));
      const follower = await openRedisStore(urlWithPrefix(prefix));
      stores.push(writer, follower);
      const followed = record();
      const other = record();
      const reads = countGets(follower);
      const seen: string[] = [];
      follower.events.on('task:transition', ({ task }) => seen.push(`${task.id}:${task.status}`), {
        only: (id) => id === followed.id,
      });
      for (const task of [other, followed]) {
        await writer.create(task);
        const done = await writer.compareAndSet(complete(task, {}, Date.now()), task.revision);
        assert.equal(done.ok, true);
      }
      // Notices are handled in order: once the followed task's arrived, the other's was handled.
      await waitFor('the followed transition', () => seen.length === 1);
      assert.deepEqual(seen, [`${followed.id}:completed`]);
      assert.equal(reads.get(followed.id), 1, 'the followed task is read back once');
      assert.equal(reads.get(other.id), undefined, 'nobody follows the other: no read');
    });
  });
}
