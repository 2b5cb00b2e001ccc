/**
 * The permit scenarios with two `taskrail serve` processes on one SQLite file: each runs the
 * tasks created through it (and, by its recovery scan, any other runnable one), and a release
 * wakes the next waiter in the releasing process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import type { RawDispatch } from '../../src/client/rpc-http.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import type { Child } from '../helpers/child.js';
import { createTask, dispatchTo } from '../helpers/deployment.js';
import { registerPermitScenarios } from '../helpers/permit-scenarios.js';
import type { PolicyHarness } from '../helpers/run-policy-scenarios.js';
import { startServing } from '../helpers/taskrail.js';

const TOOLS = '.build/test/fixtures/policy-tools-module.js';

describe('concurrency permits across two serve processes on one SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-permits-serve-'));
  const db = join(dir, 'tasks.db');
  const journal = join(dir, 'journal.log');
  const serving: { child: Child; replica: RawDispatch }[] = [];
  let store: SqliteTaskStore;
  let turn = 0;
  before(() => {
    store = new SqliteTaskStore(db);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const alive = () =>
    serving.filter(
      ({ child }) => child.process.exitCode === null && child.process.signalCode === null,
    );
  const harness: PolicyHarness = {
    journal,
    pickupMs: 60_000,
    // Creates alternate between the live serve processes.
    create: (tool, args = {}) => {
      const live = alive();
      const target = live[turn++ % live.length];
      if (target === undefined) throw new Error('no serve process is running');
      return createTask(target.replica, tool, args);
    },
    get: (id) => store.get(id),
    leased: async () => (await store.findLeased(1000)).map((lease) => lease.id),
    async startRunner() {
      const args = ['serve', '--port', '0', '--store', `sqlite:${db}`, '--tools', TOOLS];
      const started = await startServing([...args, '--log-level', 'warn'], {
        env: { TASKRAIL_E2E_LOG: journal },
      });
      serving.push({ child: started.child, replica: dispatchTo(started.url) });
      return started.child;
    },
  };
  registerPermitScenarios(() => harness);
});
