import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import { DEFAULT_STORE_URL, openStore, sqlitePathFromUrl } from '../../src/stores/open.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir();
after(() => dir.remove());

describe('openStore', () => {
  it('opens sqlite: paths relative to cwd, creating the folder', async () => {
    const store = await openStore('sqlite:./data/tasks.db', { cwd: dir.path });
    assert.ok(store instanceof SqliteTaskStore);
    assert.equal(store.path, join(dir.path, 'data', 'tasks.db'));
    assert.ok(existsSync(join(dir.path, 'data', 'tasks.db')));
    await store.close();
  });

  it('resolves absolute and URL-style sqlite paths', () => {
    assert.equal(sqlitePathFromUrl('sqlite:/var/x.db', '/home'), '/var/x.db');
    assert.equal(sqlitePathFromUrl('sqlite:///var/x.db', '/home'), '/var/x.db');
    assert.equal(sqlitePathFromUrl('sqlite:x.db', '/home'), '/home/x.db');
    assert.equal(sqlitePathFromUrl(DEFAULT_STORE_URL, '/srv'), '/srv/.taskrail/tasks.db');
    assert.throws(() => sqlitePathFromUrl('sqlite:', '/'), { code: 'CONFIG' });
  });

  it('takes ?synchronous=full from a sqlite: URL, and keeps NORMAL without it', async () => {
    for (const [url, mode] of [
      ['sqlite:full.db?synchronous=full', 'full'],
      ['sqlite:normal.db?synchronous=normal', 'normal'],
      ['sqlite:plain.db', 'normal'],
    ] as const) {
      const store = (await openStore(url, { cwd: dir.path })) as SqliteTaskStore;
      assert.equal(store.path, join(dir.path, url.slice(7).split('?')[0] as string));
      assert.equal(store.synchronous, mode, url);
      await store.close();
    }
  });

  it('refuses an unknown sqlite: option, naming the one it takes', async () => {
    for (const url of ['sqlite:x.db?synchronous=off', 'sqlite:x.db?sync=full']) {
      await assert.rejects(
        openStore(url, { cwd: dir.path }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'CONFIG');
          assert.match(error.message, /unknown sqlite option .*synchronous=full/);
          return true;
        },
      );
    }
  });

  it('opens memory: quietly when asked', async () => {
    const store = await openStore('memory:', { quiet: true });
    assert.ok(store instanceof MemoryTaskStore);
    await store.close();
  });

  it('warns on stderr that memory: loses tasks on exit', () => {
    const open = fileURLToPath(new URL('../../src/stores/open.js', import.meta.url));
    const script = `const { openStore } = await import(${JSON.stringify(open)}); await openStore('memory:');`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /memory: task store.*lost when this process exits/);
  });

  const redisUrl = process.env.TASKRAIL_REDIS_URL;
  it(
    'opens redis:// URLs through the redis adapter, loaded on demand',
    { skip: redisUrl ? false : 'TASKRAIL_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0)' },
    async () => {
      const url = new URL(redisUrl as string);
      url.searchParams.set('prefix', `taskrail-open-store-${process.pid}`);
      const store = await openStore(url.toString());
      assert.match(store.description, /redis/);
      assert.equal(await store.get('no-such-task'), undefined);
      await store.close();
    },
  );

  it('rejects unknown schemes with the accepted forms', async () => {
    for (const url of ['mysql://db/x', 'tasks.db', '']) {
      await assert.rejects(openStore(url), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'CONFIG');
        assert.match(
          error.message,
          /use sqlite:PATH, memory:, redis:\/\/HOST:PORT\/DB or postgres:\/\/HOST:PORT\/DB/,
        );
        return true;
      });
    }
  });

  it('loads no database driver until a store is opened', () => {
    const open = fileURLToPath(new URL('../../src/stores/open.js', import.meta.url));
    const script =
      `import { createRequire } from 'node:module';` +
      `await import(${JSON.stringify(open)});` +
      `const loaded = Object.keys(createRequire(import.meta.url).cache);` +
      `process.stdout.write(JSON.stringify(loaded.filter((p) => /better-sqlite3|ioredis/.test(p))));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), []);
  });
});
