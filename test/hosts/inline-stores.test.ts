import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TaskStore } from '../../src/store/port.js';
import { openStore } from '../../src/stores/open.js';
import type { Child } from '../helpers/child.js';
import { startServing, startWorker } from '../helpers/taskrail.js';
import { waitFor } from '../helpers/wait.js';
import {
  dropSchema,
  skipWithoutPostgres,
  uniqueSchema,
  urlWithSchema,
} from '../postgres/postgres-env.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { rpc } from '../server/support.js';
import { SLOW_POLL_MS } from './fixtures/slow-poll-tools.js';

const TOOLS = '.build/test/hosts/fixtures/slow-poll-tools.js';
const NO_TASKS: Record<string, unknown> = {};

/**
 * The inline wait on a shared store: `serve --no-worker` answers a host without tasks while a
 * `taskrail worker` process runs the task. The tools' tasks are re-read every 30 s, so an
 * answer well within that was woken by the store's change events (pub/sub, LISTEN/NOTIFY).
 */
function inlineWaitAcrossProcesses(store: string, url: () => string, cleanup: () => Promise<void>) {
  describe(`inline wait on ${store}: woken by the store's change events`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-inline-store-'));
    const children: Child[] = [];
    let endpoint = '';
    let worker: Child;
    let observer: TaskStore;

    before(async () => {
      const common = ['--store', url(), '--tools', TOOLS, '--log-level', 'warn'];
      const serve = await startServing([
        ...['serve', '--no-worker', '--port', '0', ...common],
        ...['--fallback-tools', '--inline-wait', '60s'],
      ]);
      children.push(serve.child);
      endpoint = serve.url;
      worker = await startWorker(['--concurrency', '2', ...common]);
      children.push(worker);
      observer = await openStore(url());
    });
    after(async () => {
      await Promise.all(children.map((child) => child.kill('SIGTERM')));
      await observer?.close();
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers an inline call soon after the worker finishes, not at the next re-read', async () => {
      const gate = join(dir, 'gate');
      const reply = rpc(
        endpoint,
        'tools/call',
        { name: 'file_gate', arguments: { path: gate } },
        {
          caps: NO_TASKS,
        },
      );
      const task = await waitFor(
        'the task behind the inline call',
        async () => {
          const page = await observer.list({ limit: 10 });
          return page.tasks.find((t) => t.tool === 'file_gate' && t.status === 'working');
        },
        { timeoutMs: 30_000 },
      );
      assert.equal(task.pollIntervalMs, SLOW_POLL_MS);
      const opened = Date.now();
      writeFileSync(gate, 'open');
      const result = (await reply).body.result as { content?: { text?: string }[] } | undefined;
      const elapsed = Date.now() - opened;
      assert.equal(result?.content?.[0]?.text, `gate opened in ${worker.process.pid}`);
      assert.ok(elapsed < SLOW_POLL_MS / 2, `answered ${elapsed} ms after the gate opened`);
      const page = await observer.list({ limit: 10 });
      assert.equal(page.tasks.filter((t) => t.tool === 'file_gate').length, 1, 'one task');
    });
  });
}

if (!skipWithoutRedis('inline wait on redis')) {
  const prefix = uniquePrefix();
  inlineWaitAcrossProcesses(
    'redis',
    () => urlWithPrefix(prefix),
    async () => {
      await deletePrefix(prefix);
    },
  );
}

if (!skipWithoutPostgres('inline wait on postgres')) {
  const schema = uniqueSchema();
  inlineWaitAcrossProcesses(
    'postgres',
    () => urlWithSchema(schema),
    () => dropSchema(schema),
  );
}
