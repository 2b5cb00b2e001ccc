import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { cancel } from '../../src/task/transitions.js';
import { tempDir } from '../stores/temp-dir.js';
import { waitFor } from '../helpers/wait.js';
import { notificationsOf, openListen, startApp, startHold } from './support.js';

describe('subscriptions/listen when the store may have missed events', () => {
  it('reads its tasks again at once on store:resync, not at the next keep-alive', async () => {
    const dir = tempDir('taskrail-listen-resync-');
    const file = join(dir.path, 'tasks.db');
    const t = await startApp({ store: new SqliteTaskStore(file), listen: { keepAliveMs: 60_000 } });
    // Another process on the same file: its writes raise no event in this server's store.
    const elsewhere = new SqliteTaskStore(file);
    try {
      const id = await startHold(t.url, 'missed');
      const listen = await openListen(t.url, [id]);
      await waitFor('the initial state', () => notificationsOf(listen).length >= 1);
      const task = await elsewhere.get(id);
      assert.ok(task !== undefined);
      const written = await elsewhere.compareAndSet(cancel(task, Date.now()), task.revision);
      assert.equal(written.ok, true);
      const cancelledPushed = () =>
        notificationsOf(listen).some(
          (n) => (n['params'] as { status?: unknown }).status === 'cancelled',
        );
      assert.equal(cancelledPushed(), false, 'nothing told this server of the cancel yet');
      t.app.store.events.emit('store:resync', {});
      await waitFor('the cancel to be pushed', cancelledPushed, { timeoutMs: 5_000 });
      await listen.ended;
    } finally {
      t.gates.release('missed');
      await t.close();
      await elsewhere.close();
      dir.remove();
    }
  });
});
