import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAdmin } from '../../src/server/admin/index.js';
import { createTaskServer } from '../../src/server/app.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { ADMIN, CALLER, call, startHarness } from './harness.js';

const EVENTS = ['task:created', 'task:updated', 'task:deleted'] as const;

describe('without --admin the operator view costs nothing', () => {
  it('has no /dashboard or /metrics routes', async () => {
    const h = await startHarness({ admin: false });
    try {
      for (const path of [
        '/dashboard',
        '/dashboard/',
        '/dashboard/app.js',
        '/dashboard/api/tasks',
        '/metrics',
      ]) {
        for (const token of [undefined, ADMIN, CALLER]) {
          assert.equal((await call(h.base, path, token)).status, 404, `${path}`);
        }
      }
    } finally {
      await h.close();
    }
  });

  it('adds no store listener and starts no interval timer', async () => {
    const store = new MemoryTaskStore();
    const intervals = countIntervals();
    try {
      const app = createTaskServer({ store });
      const info = await app.listen(0, '127.0.0.1');
      await fetch(`http://127.0.0.1:${info.port}/dashboard`);
      await fetch(`http://127.0.0.1:${info.port}/metrics`);
      for (const name of EVENTS) assert.equal(store.events.listenerCount(name), 0, name);
      assert.equal(intervals.count, 0);
      await app.close();
    } finally {
      intervals.restore();
      await store.close();
    }
  });

  it('with admin on, re-lists only while a dashboard is connected', async () => {
    const h = await startHarness();
    const admin = createAdmin(
      { tokens: { t: 'ops' } },
      { store: h.store, runtime: () => h.app.runtime },
    );
    try {
      assert.equal(admin.feed.polling, false);
      const stop = admin.feed.subscribe(() => undefined);
      assert.equal(admin.feed.polling, true);
      stop();
      assert.equal(admin.feed.polling, false);
    } finally {
      admin.close();
      await h.close();
    }
  });

  it('never loads prom-client (checked with a module resolve hook in a child process)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-admin-lazy-'));
    try {
      assert.equal(loadsPromClient(dir, false), false);
      assert.equal(
        loadsPromClient(dir, true),
        true,
        'the hook sees prom-client when --admin is on',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Counts `setInterval` calls until `restore`: the admin face's only periodic work uses it. */
function countIntervals(): { count: number; restore(): void } {
  const original = globalThis.setInterval;
  const counter = {
    count: 0,
    restore: () => void (globalThis.setInterval = original),
  };
  globalThis.setInterval = ((...args: Parameters<typeof original>) => {
    counter.count += 1;
    return original(...args);
  }) as typeof original;
  return counter;
}

function loadsPromClient(dir: string, admin: boolean): boolean {
  const marker = join(dir, `marker-${admin}`);
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (specifier === 'prom-client') appendFileSync(${JSON.stringify(marker)}, specifier);
  return next(specifier, context);
}
`,
  );
  const server = fileURLToPath(new URL('../../src/server/app.js', import.meta.url));
  const memory = fileURLToPath(new URL('../../src/stores/memory/index.js', import.meta.url));
  const script = `
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
register(pathToFileURL(${JSON.stringify(hooks)}));
const { createTaskServer } = await import(${JSON.stringify(server)});
const { MemoryTaskStore } = await import(${JSON.stringify(memory)});
const store = new MemoryTaskStore();
const app = createTaskServer({ store, ${admin ? `admin: { tokens: { t: 'ops' } }` : ''} });
app.tool('quick', { description: 'q', task: true }, () => ({ content: [] }));
const info = await app.listen(0, '127.0.0.1');
await app.runtime.createTask({ tool: 'quick', arguments: {}, principal: 'p' });
const res = await fetch('http://127.0.0.1:' + info.port + '/metrics', { headers: { authorization: 'Bearer t' } });
await res.text();
await app.close();
await store.close();
`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(child.status, 0, child.stderr);
  return existsSync(marker);
}
