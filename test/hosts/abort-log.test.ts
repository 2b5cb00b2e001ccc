/**
 * A 2025-11-25 client that gives up on a request (the SDK client's abort: a
 * `notifications/cancelled` whose reason is a string) is the client's doing: the server logs it
 * at debug as a client abort, never at error level as store trouble.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod/v4';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { stderrLogger } from '../../src/runtime/logger.js';
import { createTaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { waitFor } from '../helpers/wait.js';

type Line = Record<string, unknown>;

describe('a 2025-11-25 request the client aborts', () => {
  it('is logged at debug as a client abort, not at error level as store trouble', async () => {
    const lines: Line[] = [];
    const logger = stderrLogger(
      'debug',
      'json',
      (line) => void lines.push(JSON.parse(line) as Line),
    );
    const store = new MemoryTaskStore();
    const app = createTaskServer({ store, logger, runtime: { logger } });
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    app.tool('held', { description: 'h', task: { mode: 'optional' } }, async () => {
      await held;
      return { content: [] };
    });
    const { url } = await app.listen(0, '127.0.0.1');
    const client = new Client(
      { name: 'aborter', version: '1' },
      { capabilities: { tasks: { requests: { tools: { call: {} } } } } },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const created = (await client.request(
        { method: 'tools/call', params: { name: 'held', arguments: {}, task: { ttl: 60_000 } } },
        z.any(),
      )) as { task: { taskId: string } };
      // A waiting tasks/result follows its task's updates: its listener shows it is waiting.
      const before = store.events.listenerCount('task:updated');
      const abort = new AbortController();
      const waiting = client.request(
        { method: 'tasks/result', params: { taskId: created.task.taskId } },
        z.any(),
        { signal: abort.signal },
      );
      await waitFor('the tasks/result request waits on the server', () =>
        store.events.listenerCount('task:updated') > before ? true : undefined,
      );
      abort.abort();
      await assert.rejects(waiting, /abort/i);
      await waitFor('the abort logged', () =>
        lines.some((line) => line['message'] === 'request aborted by the client')
          ? true
          : undefined,
      );
      const aborted = lines.find((line) => line['message'] === 'request aborted by the client');
      assert.equal(aborted?.['level'], 'debug');
      const errors = lines.filter((line) => line['level'] === 'error');
      assert.deepEqual(errors, [], 'no error-level line for a client abort');
    } finally {
      release();
      await client.close();
      await app.close(200);
      await store.close();
    }
  });
});
