import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import type { TaskStore } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { RedisKeys } from '../../src/stores/redis/keys.js';
import { SqliteTaskStore } from '../../src/stores/sqlite/index.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord, type TaskWire } from '../../src/task/record.js';
import {
  dropSchema,
  POSTGRES_URL,
  sql,
  uniqueSchema,
  urlWithSchema,
} from '../postgres/postgres-env.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';
import { tempDir } from './temp-dir.js';

/**
 * The record's `wire` was called `generation` ('v2' | 'v1' | 'local') before; the stores keep
 * that name and those values on disk. A record written before the rename must read back with
 * the new values, and new records must still be stored the old way (older nodes read them).
 */
const STORED: [stored: string, wire: TaskWire][] = [
  ['v2', '2026-07-28'],
  ['v1', '2025-11-25'],
  ['local', 'local'],
];

/** How one store keeps the wire: read and overwrite the stored value of one task. */
interface StoredWireAccess {
  store: TaskStore;
  readStored(id: string): Promise<unknown>;
  writeStored(id: string, value: string): Promise<void>;
}

function record(wire: TaskWire): TaskRecord {
  const input = { id: newTaskId(), principal: 'p', tool: 't', arguments: {}, ttlMs: null };
  return newTaskRecord({ ...input, pollIntervalMs: 1000, wire }, Date.now());
}

function defineCases(open: () => Promise<StoredWireAccess>): void {
  it('stores each wire under its old name and value', async () => {
    const access = await open();
    for (const [stored, wire] of STORED) {
      const { task } = await access.store.create(record(wire));
      assert.equal(await access.readStored(task.id), stored);
    }
  });

  it("reads a record written with 'v1'/'v2'/'local' as the new wire values", async () => {
    const access = await open();
    for (const [stored, wire] of STORED) {
      const other = wire === '2026-07-28' ? '2025-11-25' : '2026-07-28';
      const { task } = await access.store.create(record(other));
      await access.writeStored(task.id, stored);
      assert.equal((await access.store.get(task.id))?.wire, wire);
    }
  });

  it('refuses an unknown stored value as a corrupt record', async () => {
    const access = await open();
    const { task } = await access.store.create(record('2026-07-28'));
    await access.writeStored(task.id, 'v3');
    await assert.rejects(access.store.get(task.id), /unknown wire: v3/);
  });
}

describe('the stored wire on SQLite', () => {
  const dir = tempDir();
  const stores: TaskStore[] = [];
  const files: Database.Database[] = [];
  after(async () => {
    for (const store of stores) await store.close();
    for (const db of files) db.close();
    dir.remove();
  });
  let n = 0;
  defineCases(async () => {
    n += 1;
    const path = join(dir.path, `wire-${n}.db`);
    const store = new SqliteTaskStore(path);
    stores.push(store);
    const db = new Database(path);
    files.push(db);
    return {
      store,
      readStored: async (id) =>
        (db.prepare('SELECT generation FROM tasks WHERE id = ?').get(id) as { generation: string })
          .generation,
      writeStored: async (id, value) =>
        void db.prepare('UPDATE tasks SET generation = ? WHERE id = ?').run(value, id),
    };
  });
});

describe(
  'the stored wire on Redis',
  { skip: REDIS_URL ? false : 'TASKRAIL_REDIS_URL is not set' },
  () => {
    const prefix = uniquePrefix();
    const opened: TaskStore[] = [];
    const raw = REDIS_URL ? new Redis(REDIS_URL, { lazyConnect: true }) : undefined;
    after(async () => {
      for (const store of opened) await store.close();
      await deletePrefix(prefix);
      raw?.disconnect();
    });
    defineCases(async () => {
      const store = await openRedisStore(urlWithPrefix(prefix));
      opened.push(store);
      const redis = raw as Redis;
      const keys = new RedisKeys(prefix, 1); // one bucket on a single Redis
      const fixedOf = async (id: string) =>
        JSON.parse((await redis.hget(keys.task(id), 'fixed')) as string) as Record<string, unknown>;
      return {
        store,
        readStored: async (id) => (await fixedOf(id))['generation'],
        writeStored: async (id, value) => {
          const fixed = { ...(await fixedOf(id)), generation: value };
          await redis.hset(keys.task(id), 'fixed', JSON.stringify(fixed));
        },
      };
    });
  },
);

describe(
  'the stored wire on PostgreSQL',
  { skip: POSTGRES_URL ? false : 'TASKRAIL_POSTGRES_URL is not set' },
  () => {
    const schema = uniqueSchema();
    const opened: TaskStore[] = [];
    after(async () => {
      for (const store of opened) await store.close();
      await dropSchema(schema);
    });
    defineCases(async () => {
      const store = await openPostgresStore(urlWithSchema(schema));
      opened.push(store);
      return {
        store,
        readStored: async (id) =>
          (
            await sql<{ g: string }>(
              `SELECT fixed::json->>'generation' AS g FROM "${schema}".tasks WHERE id = $1`,
              [id],
            )
          )[0]?.g,
        writeStored: async (id, value) =>
          void (await sql(
            `UPDATE "${schema}".tasks SET fixed = jsonb_set(fixed::jsonb, '{generation}', to_jsonb($2::text))::text WHERE id = $1`,
            [id, value],
          )),
      };
    });
  },
);
