import type { TaskRecord } from '../../task/record.js';
import { decodeParts, encodeData, encodeFixed } from '../shared/record-parts.js';

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

/**
 * The body of the change notice a create publishes (after the origin, see lua/prelude.lua):
 * which task and its status, never its arguments or result.
 */
export function createdNotice(task: TaskRecord): string {
  return noticeBody({ k: 'c', id: task.id, s: task.status, u: task.updatedAt });
}

/** The body of a write's notice: the script adds the previous status it read. */
export function writeNotice(next: TaskRecord): string {
  return noticeBody({
    k: 'w',
    id: next.id,
    r: next.revision,
    s: next.status,
    ...(next.statusMessage === undefined ? {} : { m: next.statusMessage }),
    u: next.updatedAt,
  });
}

function noticeBody(fields: object): string {
  return JSON.stringify(fields).slice(1, -1);
}
