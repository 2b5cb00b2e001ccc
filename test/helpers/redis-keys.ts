import { Redis } from 'ioredis';

/**
 * Deletes the keys under one prefix, and only those: tests, benchmarks and the chaos suite share
 * the Redis with others, so nothing ever calls FLUSHDB. `url` may carry `?prefix=`; it is ignored.
 */
export async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  const plain = new URL(url);
  plain.searchParams.delete('prefix');
  const redis = new Redis(plain.toString(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
