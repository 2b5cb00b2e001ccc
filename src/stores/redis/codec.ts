import { TaskrailError } from '../../task/errors.js';
import { fixedFieldsOf, type FixedFields, type TaskRecord } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';

/**
 * A record is stored in two JSON parts: `fixed` (written once at creation, so a compare-and-set
 * can neither change nor re-send it) and `data` (everything a write may change).
 */
export interface EncodedRecord {
  fixed: string;
  data: string;
}

export function encodeRecord(task: TaskRecord): EncodedRecord {
  return { fixed: JSON.stringify(fixedFieldsOf(task)), data: encodeData(task) };
}

export function encodeData(task: TaskRecord): string {
  const {
    id: _id,
    principal: _principal,
    tool: _tool,
    arguments: _arguments,
    createdAt: _createdAt,
    generation: _generation,
    idempotencyKey: _idempotencyKey,
    ...data
  } = task;
  return JSON.stringify(data);
}

export function decodeRecord(fixed: unknown, data: unknown): TaskRecord {
  if (typeof fixed !== 'string' || typeof data !== 'string') {
    throw new TaskrailError('STORE_CORRUPT', 'redis task hash lacks its JSON fields');
  }
  try {
    return { ...(JSON.parse(data) as object), ...(JSON.parse(fixed) as FixedFields) } as TaskRecord;
  } catch (error) {
    throw new TaskrailError('STORE_CORRUPT', 'redis task hash holds invalid JSON', {
      cause: error,
    });
  }
}

/** The store's copy of fixed fields wins over whatever the writer sent. */
export function withFixed(next: TaskRecord, storedFixed: unknown): TaskRecord {
  return decodeRecord(storedFixed, encodeData(next));
}

/** What a replica publishes on the events channel (see scripts-task.ts). */
export type WireEvent =
  | { o: string; k: 'created'; f: object; d: object }
  | { o: string; k: 'write'; p: TaskStatus; f: object; d: object }
  | { o: string; k: 'deleted'; id: string };

export function recordOf(event: { f: object; d: object }): TaskRecord {
  return { ...event.d, ...event.f } as TaskRecord;
}
