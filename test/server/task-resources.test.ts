import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../stores/temp-dir.js';
import { readPage } from '../helpers/shortened.js';
import { describeTaskResources, LINES } from './task-resources-frame.js';

describeTaskResources('SQLite', async () => {
  const dir = tempDir();
  const store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
  return {
    store,
    async dispose() {
      await store.close();
      dir.remove();
    },
  };
});

describe('anonymous callers on 2025-11-25 sessions', () => {
  const dir = tempDir();
  let store: SqliteTaskStore;
  let app: TaskServer;

  before(() => {
    store = new SqliteTaskStore(join(dir.path, 'tasks.db'));
    app = createTaskServer({ store, name: 'resources-anon', version: '1.0.0' });
    app.tool('printer', { description: 'prints lines', task: true }, async (_args, ctx) => {
      for (const line of LINES.split(/(?<=\n)/)) await ctx.output(line);
      return { content: [{ type: 'text', text: 'printed' }] };
    });
  });

  after(async () => {
    await app.close(1000);
    await store.close();
    dir.remove();
  });

  it('each session lists only the task resources it created; the id reads and follows them', async () => {
    const { url } = await app.listen(0, '127.0.0.1');
    const anonymous = async () => {
      const client = new Client({ name: 'resources-anon', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    };
    const first = await anonymous();
    const second = await anonymous();
    try {
      await first.callTool({ name: 'printer', arguments: {} });
      const listed = await first.listResources();
      const output = listed.resources.find((resource) => resource.uri.endsWith('/output'));
      assert.ok(output, 'the creating session lists its output');
      assert.equal((await readPage(first, output.uri)).text, LINES);
      const theirs = await second.listResources();
      assert.ok(!theirs.resources.some((resource) => resource.uri === output.uri));
      // Asked by id, a task is its id's holder's (a session the server forgot reads on).
      assert.equal((await readPage(second, output.uri)).text, LINES);
      await second.subscribeResource({ uri: output.uri });
      await first.subscribeResource({ uri: output.uri });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
