import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import type { TaskStore } from '../../src/store/port.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { isTerminal } from '../../src/task/status.js';
import { parseJournal, policyTools } from '../fixtures/policy-tools.js';
import { watchTimers } from '../helpers/timer-watch.js';
import { waitFor } from '../helpers/wait.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the process is watched once the sleep is set. */
const WATCH_MS = 1500;
/**
 * Timers armed in that time, by everything in the process: a few renewals and scans. A timer
 * re-armed for a wake time past node's longest delay fires every millisecond (~650 a second).
 */
const ARMS_BOUND = 100;

function setup(store: TaskStore, dir: string) {
  const journal = join(dir, 'journal.log');
  const logged: string[] = [];
  const logger = {
    info() {},
    warn() {},
    error: (_message: string, fields?: Record<string, unknown>) =>
      void logged.push(String(fields?.['error'])),
  };
  const tools = new Map(policyTools(journal).map((tool) => [tool.name, tool]));
  const runtime = new TaskRuntime({
    store,
    tools: { get: (name) => tools.get(name) },
    concurrency: 2,
    leaseMs: 2000,
    logger,
  });
  const events = () => parseJournal(existsSync(journal) ? readFileSync(journal, 'utf8') : '');
  const create = (args: Record<string, unknown>) =>
    runtime.createTask({ tool: 'nap_for', arguments: args, principal: 'sleeper' });
  return { runtime, events, create, logged };
}

const stores: [string, (dir: string) => TaskStore][] = [
  ['SQLite (one alarm for every wait)', (dir) => new SqliteTaskStore(join(dir, 'tasks.db'))],
  ['memory (a timer per wait)', () => new MemoryTaskStore()],
];

for (const [name, open] of stores) {
  describe(`a sleep of 30 days on ${name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-long-sleep-'));
    const store = open(dir);
    const t = setup(store, dir);
    after(async () => {
      await t.runtime.stop(100);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('waits without spinning: no timer past the longest delay, a bounded number armed', async () => {
      const watch = watchTimers();
      let seen;
      let inWindow = 0;
      try {
        const task = await t.create({ ms: 30 * DAY_MS });
        await waitFor('the sleep to be set', async () => {
          const record = await store.get(task.id);
          return record?.statusMessage?.startsWith('sleeping') === true ? record : undefined;
        });
        const armedBefore = watch.armed();
        await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
        inWindow = watch.armed() - armedBefore;
        process.stdout.write(`# ${inWindow} timers armed in the ${WATCH_MS} ms after the sleep\n`);
        assert.equal((await store.get(task.id))?.status, 'working', 'still asleep');
        assert.equal(
          t.events().filter((e) => e.taskId === task.id && e.event === 'nap-for-run').length,
          1,
          'the handler ran once: no early wake-up',
        );
      } finally {
        seen = watch.stop();
      }
      assert.equal(seen.overflowing, 0, 'a timer was armed past 2^31−1 ms');
      assert.deepEqual(seen.warnings, [], 'no TimeoutOverflowWarning');
      assert.ok(inWindow < ARMS_BOUND, `${inWindow} timers armed in ${WATCH_MS} ms`);
    });

    it('refuses a sleep of NaN, Infinity, a negative or past 10 years with a clear error in the log', async () => {
      for (const ms of ['NaN', 'Infinity', -1, 11 * 365 * DAY_MS]) {
        const task = await t.create({ ms });
        const done = await waitFor(`the sleep of ${ms} to fail`, async () => {
          const record = await store.get(task.id);
          return record !== undefined && isTerminal(record.status) ? record : undefined;
        });
        assert.equal(done.status, 'failed', `a sleep of ${ms}`);
        const said = t.logged.at(-1) ?? '';
        assert.match(
          said,
          /ctx\.sleep\(ms\) needs a number of milliseconds from 0 to \d+ \(10 years\)/,
        );
        assert.ok(said.includes(`got ${Number(ms)}`), said);
      }
    });
  });
}
