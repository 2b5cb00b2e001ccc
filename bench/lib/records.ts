import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';

/** Realistic task records for the store benchmarks: small arguments, an hour's ttl. */
export function benchRecords(count: number): TaskRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) =>
    newTaskRecord(
      {
        id: newTaskId(),
        principal: 'bench',
        tool: 'slow_compute',
        arguments: { seconds: 1, label: `task ${i}` },
        ttlMs: 3_600_000,
        pollIntervalMs: 500,
        meta: { session: 'bench-session' },
      },
      now,
    ),
  );
}
