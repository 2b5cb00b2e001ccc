import type { TaskRecord } from '../../task/record.js';
import { decodeParts, encodeData, encodeFixed } from '../shared/record-parts.js';
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
  return { fixed: encodeFixed(task), data: encodeData(task) };
}

export { encodeData };

export function decodeRecord(fixed: unknown, data: unknown): TaskRecord {
  return decodeParts(fixed, data, 'redis task hash');
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
