import { Queue, Worker } from 'bullmq';
import type { TaskStore } from '../../src/store/port.js';
import { newTaskId } from '../../src/task/ids.js';
import { newTaskRecord, type TaskRecord } from '../../src/task/record.js';
import { REDIS_URL } from './redis-env.js';

/**
 * The executor's BullMQ queue under `prefix`, and a worker with no processor: jobs move only
 * when a test takes them (`getNextJob`) or finishes them.
 */
export function handDrivenQueue(prefix: string): { queue: Queue; taker: Worker } {
  const connection = { url: REDIS_URL as string, maxRetriesPerRequest: null };
  return {
    queue: new Queue('tasks', { connection, prefix: `${prefix}:{bull}` }),
    taker: new Worker('tasks', null, { connection, prefix: `${prefix}:{bull}` }),
  };
}

/** A new `working` task of the tool `hello`, stored (no job yet). */
export async function storedTask(store: TaskStore): Promise<TaskRecord> {
  const record = newTaskRecord(
    {
      id: newTaskId(),
      principal: 'alice',
      tool: 'hello',
      arguments: {},
      ttlMs: 600_000,
      pollIntervalMs: 500,
    },
    Date.now(),
  );
  return (await store.create(record)).task;
}
