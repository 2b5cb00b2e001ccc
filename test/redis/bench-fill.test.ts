import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { TaskStore } from '../../src/store/port.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { RedisKeys } from '../../src/stores/redis/keys.js';
import { createScriptSource, fillRedis, filledTask, taskIdAt } from '../../bench/lib/redis-fill.js';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';

const COUNT = 2_000;
const MADE = 100;
const SEED = 'test-seed';

/** Every key under `prefix`, with the prefix cut off, mapped to its content as comparable text. */
async function contents(redis: Redis, prefix: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const keys = await redis.keys(`${prefix}:*`);
  const strip = (text: string) => text.replaceAll(`${prefix}:`, 'P:');
  for (const key of keys) {
    const type = await redis.type(key);
    const name = strip(key);
    if (type === 'hash') {
      const hash = await redis.hgetall(key);
      out.set(name, Object.fromEntries(Object.entries(hash).map(([f, v]) => [f, strip(v)])));
    } else if (type === 'zset') {
      out.set(name, await redis.zrange(key, 0, -1, 'WITHSCORES'));
    } else {
      out.set(name, `${type}: not expected`);
    }
  }
  return out;
}

if (!hasRedisServer()) {
  it('the bench fill writes what the Redis store writes', { skip: 'no redis-server' }, () => {});
} else {
  describe('the bench fill writes what the Redis store writes', () => {
    let own: OwnRedis;
    let redis: Redis;
    let filled: TaskStore;
    let made: TaskStore;
    const firstCreatedAt = Date.now() - COUNT;
    const task = (i: number) => filledTask(SEED, i, firstCreatedAt);

    before(async () => {
      own = await startOwnRedis();
      redis = new Redis(own.url);
      await redis.script('LOAD', createScriptSource());
      const plan = { port: own.port, prefix: 'filled', seed: SEED, firstCreatedAt };
      await fillRedis({ ...plan, from: 0, to: COUNT });
      filled = await openRedisStore(`${own.url}?prefix=filled`);
      made = await openRedisStore(`${own.url}?prefix=made`);
      for (let i = 0; i < MADE; i += 1) await made.create(task(i));
    });

    after(async () => {
      await Promise.all([filled?.close(), made?.close()]);
      redis?.disconnect();
      await own?.remove();
    });

    it('every filled task reads back through the store as the record it was made from', async () => {
      for (let i = 0; i < COUNT; i += 1) {
        assert.deepEqual(await filled.get(taskIdAt(SEED, i)), task(i));
      }
      const page = await filled.list({ principal: 'anonymous', limit: 1000 });
      assert.equal(page.tasks.length, 1000);
      assert.ok(page.nextCursor !== undefined);
    });

    it("the filled keys hold what the store's own create wrote for the same tasks", async () => {
      const byStore = await contents(redis, 'made');
      const byFill = await contents(redis, 'filled');
      assert.equal(byFill.size, byStore.size - MADE + COUNT);
      for (const [key, value] of byStore) {
        const fromFill = byFill.get(key);
        if (Array.isArray(value)) {
          // An index holds every filled task; the store's made the first MADE of them.
          assert.deepEqual((fromFill as string[]).slice(0, value.length), value, key);
        } else {
          assert.deepEqual(fromFill, value, key);
        }
      }
      const id = taskIdAt(SEED, 0);
      const [ttlFilled, ttlMade] = await Promise.all([
        redis.pttl(new RedisKeys('filled', 1).task(id)),
        redis.pttl(new RedisKeys('made', 1).task(id)),
      ]);
      assert.ok(Math.abs(ttlFilled - ttlMade) < 60_000, `${ttlFilled} vs ${ttlMade}`);
    });
  });
}
