import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord } from '../../src/task/record.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { tempDir } from './temp-dir.js';

taskStoreContract('sqlite', async ({ clock }) => {
  const dir = tempDir();
  const path = join(dir.path, 'nested', 'tasks.db');
  return {
    store: new SqliteTaskStore(path, { clock }),
    reopen: async () => new SqliteTaskStore(path, { clock }),
    localEvents: true,
    cleanup: async () => dir.remove(),
  };
});

test('sqlite: a claim to run reads the task and its steps in the claiming write', async () => {
  const dir = tempDir();
  const store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
  try {
    const { task } = await store.create(
      newTaskRecord(
        {
          id: newTaskId(),
          principal: 'p',
          tool: 't',
          arguments: { n: 1 },
          ttlMs: 60_000,
          pollIntervalMs: 1000,
        },
        Date.now(),
      ),
    );
    await store.saveStep(task.id, 'first', [1, 2]);
    const grant = await store.claim(task.id, 'worker', 5000, { load: true });
    assert.deepEqual(grant?.loaded, { task: await store.get(task.id), steps: { first: [1, 2] } });
    // Without `load` the grant stays as small as before.
    assert.equal((await store.claim(task.id, 'worker', 5000))?.loaded, undefined);
  } finally {
    await store.close();
    dir.remove();
  }
});
