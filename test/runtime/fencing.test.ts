import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskContext } from '../../src/runtime/tool.js';
import type { TaskStore } from '../../src/store/port.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { JsonObject } from '../../src/task/record.js';
import { createFakeClock, type FakeClock } from '../../src/testing/support/fake-clock.js';
import { dropSchema, POSTGRES_URL, uniqueSchema, urlWithSchema } from '../postgres/postgres-env.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { waitFor } from '../helpers/wait.js';
import { TestTools, text } from './tools.js';

/** Long enough that no recovery scan or expiry happens by itself: the test moves the clock. */
const LEASE_MS = 60_000;

/** Two connections to one store's data (two processes' worth), judging leases by `clock`. */
interface SharedStore {
  first: TaskStore;
  second: TaskStore;
  cleanup(): Promise<void>;
}

type Opener = (clock: FakeClock) => Promise<SharedStore>;

const OPENERS: Record<string, { skip?: string; open: Opener }> = {
  memory: {
    async open(clock) {
      const store = new MemoryTaskStore({ clock: clock.clock });
      return { first: store, second: store, cleanup: () => store.close() };
    },
  },
  sqlite: {
    async open(clock) {
      const dir = mkdtempSync(join(tmpdir(), 'taskrail-fencing-'));
      const path = join(dir, 'tasks.db');
      const first = new SqliteTaskStore(path, { clock: clock.clock });
      const second = new SqliteTaskStore(path, { clock: clock.clock });
      return {
        first,
        second,
        async cleanup() {
          await Promise.all([first.close(), second.close()]);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  redis: {
    ...(REDIS_URL ? {} : { skip: 'TASKRAIL_REDIS_URL is not set' }),
    async open(clock) {
      const prefix = uniquePrefix();
      const url = urlWithPrefix(prefix);
      const options = { clock: clock.clock, leaseClock: 'caller' as const };
      const first = await openRedisStore(url, options);
      const second = await openRedisStore(url, options);
      return {
        first,
        second,
        async cleanup() {
          await Promise.all([first.close(), second.close()]);
          await deletePrefix(prefix);
        },
      };
    },
  },
  postgres: {
    ...(POSTGRES_URL ? {} : { skip: 'TASKRAIL_POSTGRES_URL is not set' }),
    async open(clock) {
      const schema = uniqueSchema();
      const url = urlWithSchema(schema);
      const first = await openPostgresStore(url, { clock: clock.clock });
      const second = await openPostgresStore(url, { clock: clock.clock });
      return {
        first,
        second,
        async cleanup() {
          await Promise.all([first.close(), second.close()]);
          await dropSchema(schema);
        },
      };
    },
  },
};

/**
 * `store` with its lease renewals stuck until `flow` is called, as on a link where the
 * heartbeat's requests hang: the first runner does not learn from its heartbeat that it lost
 * the task, so its late writes reach the store and only the store's fence stops them.
 */
function withStuckRenewals(store: TaskStore) {
  const stuck = gate();
  const wrapped = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      // The store's methods use private fields: they must run on the store itself.
      if (key !== 'renewLease') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<TaskStore['renewLease']>) => {
        await stuck.opened;
        return target.renewLease(...args);
      };
    },
  });
  return { store: wrapped, flow: stuck.open };
}

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A logger that keeps what it is told, to count lines. */
function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  const log = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, logger: { info: log('info'), warn: log('warn'), error: log('error') } };
}

/**
 * Attempt 1 waits until attempt 2 has taken the task over, then, ignoring its signal as a
 * handler cut off from its store would, reports progress, saves steps and returns a result.
 * Attempt 2 writes its own progress and step and finishes when let go. Every start and every
 * refusal goes to the journal.
 */
function lateWriterTools(journal: string[], lateGo: Promise<void>, secondGo: Promise<void>) {
  const late = async (ctx: TaskContext) => {
    await lateGo;
    await ctx.progress('first: late progress');
    for (const name of ['shared', 'first-only']) {
      await ctx
        .step(name, () => `from first`)
        .catch((error: unknown) => {
          journal.push(`first: step ${name} refused (${(error as Error).name})`);
        });
    }
    journal.push('first: returned');
    return text('first');
  };
  return new TestTools().add('work', async (_args: JsonObject, ctx) => {
    journal.push(`start attempt ${ctx.attempt}`);
    if (ctx.attempt === 1) return late(ctx);
    await ctx.progress('second: progress');
    await ctx.step('shared', () => 'from second');
    await secondGo;
    return text('second');
  });
}

for (const [kind, { skip, open }] of Object.entries(OPENERS)) {
  describe(`fenced writes at run time: ${kind}`, { ...(skip ? { skip } : {}) }, () => {
    it('a runner whose lease was taken over changes nothing: progress, steps, outcome', async () => {
      const clock = createFakeClock();
      const stores = await open(clock);
      const journal: string[] = [];
      const lateGo = gate();
      const secondGo = gate();
      const tools = lateWriterTools(journal, lateGo.opened, secondGo.opened);
      const firstLog = recordingLogger();
      const firstLink = withStuckRenewals(stores.first);
      const common = { tools, leaseMs: LEASE_MS, clock: clock.clock };
      const first = new TaskRuntime({ ...common, store: firstLink.store, logger: firstLog.logger });
      const second = new TaskRuntime({
        ...common,
        store: stores.second,
        logger: recordingLogger().logger,
      });
      try {
        const task = await first.createTask({ tool: 'work', arguments: {}, principal: 'alice' });
        await waitFor('attempt 1 to start', () => journal.includes('start attempt 1'));
        // The first runner's lease runs out (on the store's clock); the second claims the task.
        second.start();
        clock.advance(LEASE_MS + 1);
        assert.equal(await second.runHere(task.id), true, 'the second runner takes the task over');
        const secondWrites = await waitFor('attempt 2 to write its progress and step', async () => {
          const [record, steps] = await Promise.all([
            stores.second.get(task.id),
            stores.second.loadSteps(task.id),
          ]);
          return record?.statusMessage === 'second: progress' && 'shared' in steps
            ? { record, steps }
            : undefined;
        });
        assert.equal(secondWrites.record.attempt, 2);

        lateGo.open();
        await waitFor('attempt 1 to return', () => journal.includes('first: returned'));
        await first.stop(10_000); // waits for the first runner's outcome write too
        assert.deepEqual(await stores.second.get(task.id), secondWrites.record);
        assert.deepEqual(await stores.second.loadSteps(task.id), { shared: 'from second' });

        secondGo.open();
        const done = await waitFor('the task to complete', async () => {
          const record = await stores.second.get(task.id);
          return record?.status === 'completed' ? record : undefined;
        });
        assert.deepEqual(done.result, text('second'));
        assert.equal(done.attempt, 2);
        assert.deepEqual(await stores.second.loadSteps(task.id), { shared: 'from second' });
        assert.deepEqual(
          journal.filter((line) => line.startsWith('start')),
          ['start attempt 1', 'start attempt 2'],
        );
        const fencedLines = firstLog.lines.filter((line) =>
          line.message.includes('belongs to another attempt'),
        );
        assert.equal(fencedLines.length, 1, 'the first runner says once that it was fenced out');
        assert.deepEqual(
          firstLog.lines.filter((line) => line.level === 'error'),
          [],
          'a fenced-out run is no failure',
        );
      } finally {
        firstLink.flow();
        lateGo.open();
        secondGo.open();
        await first.stop(10_000);
        await second.stop(10_000);
        await stores.cleanup();
      }
    });
  });
}
