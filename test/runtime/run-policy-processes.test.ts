import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { TaskRuntime } from '../../src/runtime/runtime.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { policyCatalog } from '../fixtures/policy-tools.js';
import { startNode } from '../helpers/child.js';
import { registerPermitScenarios } from '../helpers/permit-scenarios.js';
import { registerPolicyScenarios, type PolicyHarness } from '../helpers/run-policy-scenarios.js';

const CHILD = new URL('../fixtures/policy-child.js', import.meta.url).pathname;

describe('run policy across processes on SQLite (kill -9)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-policy-proc-'));
  const db = join(dir, 'tasks.db');
  const journal = join(dir, 'journal.log');
  let store: SqliteTaskStore;
  let recorder: TaskRuntime;
  before(() => {
    store = new SqliteTaskStore(db);
    // Records tasks only: the child runs them (its recovery scan, every lease, finds them).
    recorder = new TaskRuntime({ store, tools: policyCatalog(journal), executor: 'none' });
  });
  after(async () => {
    await recorder.stop(0);
    await store.close();
  });
  const harness: PolicyHarness = {
    journal,
    pickupMs: 30_000,
    create: async (tool, args = {}) =>
      (await recorder.createTask({ tool, arguments: args, principal: 'policy' })).id,
    get: (id) => store.get(id),
    leased: async () => (await store.findLeased(1000)).map((lease) => lease.id),
    async startRunner(slots = 1) {
      const child = startNode(CHILD, [db, journal, '1000', String(slots)]);
      await child.line(/^ready$/);
      return child;
    },
  };
  registerPolicyScenarios(() => harness);
  registerPermitScenarios(() => harness);
});
