import { memberId } from './keys.js';
import { isLive, readTasks, type ScanParts } from './scans.js';

const BATCH = 500;
const UNFINISHED = new Set(['working', 'input_required']);

/**
 * A principal's unfinished tasks, counted up to `atMost`: each bucket's principal index read
 * newest first (where unfinished tasks are), a batch's statuses in one `read-tasks` call.
 */
export async function countUnfinished(
  parts: ScanParts,
  principal: string,
  atMost: number,
  now: number,
): Promise<number> {
  let total = 0;
  for (const bucket of parts.keys.allBuckets) {
    const index = parts.keys.principal(bucket, principal);
    for (let offset = 0; total < atMost; offset += BATCH) {
      const members = await parts.redis.zrange(index, offset, offset + BATCH - 1, 'REV');
      const rows = await readTasks(parts, members.map(memberId), ['status', 'expiresAt']);
      for (const [status, expiresAt] of rows) {
        if (UNFINISHED.has(status ?? '') && isLive(expiresAt, now)) total += 1;
      }
      if (members.length < BATCH) break;
    }
  }
  return Math.min(total, atMost);
}
