import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { taskStoreContract } from '../../src/testing/index.js';

taskStoreContract('memory', async ({ clock }) => ({
  store: new MemoryTaskStore({ clock }),
  cleanup: async () => {},
}));
