import { join } from 'node:path';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { tempDir } from './temp-dir.js';

taskStoreContract('sqlite', async ({ clock }) => {
  const dir = tempDir();
  const path = join(dir.path, 'nested', 'tasks.db');
  return {
    store: new SqliteTaskStore(path, { clock }),
    reopen: async () => new SqliteTaskStore(path, { clock }),
    cleanup: async () => dir.remove(),
  };
});
