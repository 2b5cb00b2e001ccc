import type { ScanParts } from './scans.js';

/**
 * A principal's unfinished tasks, counted up to `atMost`: the live members (expiresAt after
 * `now`) of its unfinished set in each bucket (keys.ts), one ZCOUNT per bucket.
 */
export async function countUnfinished(
  parts: ScanParts,
  principal: string,
  atMost: number,
  now: number,
): Promise<number> {
  const counts = await Promise.all(
    parts.keys.allBuckets.map((bucket) =>
      parts.redis.zcount(parts.keys.unfinished(bucket, principal), `(${now}`, '+inf'),
    ),
  );
  return Math.min(
    counts.reduce((sum, count) => sum + count, 0),
    atMost,
  );
}
