import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createBullmqExecutor, type BullmqExecutor } from '../../src/executors/bullmq/index.js';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { scriptSources } from '../../src/stores/redis/scripts.js';
import type { TaskRecord } from '../../src/task/record.js';
import { TestTools, text } from '../runtime/tools.js';
import { commandsSentBy } from './monitor.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

const silent = { info() {}, warn() {}, error() {} };

/** The store's scripts by the SHA1 that EVALSHA names them with. */
const scriptBySha = new Map(
  [...scriptSources()].map(([name, lua]) => [createHash('sha1').update(lua).digest('hex'), name]),
);

/** A MONITOR line as the store script it calls, or its command (and script SHA) otherwise. */
function commandOf(line: string): string {
  const [command = '?', sha = ''] = [...line.matchAll(/"([^"]*)"/g)].map((match) => match[1]);
  if (command.toLowerCase() !== 'evalsha') return command.toLowerCase();
  return scriptBySha.get(sha) ?? `evalsha ${sha.slice(0, 8)}`;
}

/**
 * The latency a `serve` on Redis adds to a task it runs itself is its round trips to Redis, one
 * after another: this pins them at two (issue 19), so that a read, a BullMQ add or a `WAIT`
 * creeping onto that path shows here rather than as a slower benchmark.
 */
if (!skipWithoutRedis('Redis: a task run where it was created')) {
  describe('Redis: a task run where it was created', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    let store: TaskStore;
    let executor: BullmqExecutor;
    let runtime: TaskRuntime;

    before(async () => {
      store = await openRedisStore(url);
      executor = createBullmqExecutor({ connectionUrl: url, mode: 'work', store, lockMs: 60_000 });
      const tools = new TestTools().add('hello', () => text('hi'));
      runtime = new TaskRuntime({ store, tools, logger: silent, executor, leaseMs: 60_000 });
      runtime.start();
      await executor.ready();
    });

    after(async () => {
      await runtime.stop(1000);
      await executor.closed();
      await store.close();
      await deletePrefix(prefix);
    });

    /** Creates a task and resolves once it completed here, told by the local event (no read). */
    async function createAndComplete(): Promise<TaskRecord> {
      let off = (): void => undefined;
      const completed = new Promise<TaskRecord>((resolve) => {
        off = store.events.on('task:transition', ({ task, to }) => {
          if (to === 'completed') resolve(task);
        });
      });
      try {
        const created = await runtime.createTask({ tool: 'hello', arguments: {}, principal: 'a' });
        const task = await completed;
        assert.equal(task.id, created.id);
        return task;
      } finally {
        off();
      }
    }

    it('creates, leases and completes it in two store scripts, and nothing else', async () => {
      await createAndComplete(); // scripts load (EVAL) and connections open on first use
      const sent = await commandsSentBy(prefix, createAndComplete);
      // The BullMQ worker's blocking wait for jobs is not this task's.
      const commands = sent.map(commandOf).filter((command) => command !== 'bzpopmin');
      assert.deepEqual(commands, ['create', 'compare-and-set']);
    });
  });
}
