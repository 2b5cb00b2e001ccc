import { TaskrailError } from '../../task/errors.js';

/** Page sizes: default when absent, hard cap from the port. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export function clampListLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isFinite(limit)) return MAX_LIST_LIMIT;
  return Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(limit)));
}

/** Position after the last task of a page; lists order by (createdAt desc, id desc). */
export interface ListPosition {
  createdAt: number;
  id: string;
}

export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** What a caller learns of a cursor no store gave out; the cursor itself is not echoed. */
export const FOREIGN_CURSOR_MESSAGE = 'the list cursor is not one this server gave out';

/** Longer than any cursor `encodeListCursor` makes (a time and a task id). */
const MAX_CURSOR_CHARS = 512;

/**
 * The position a cursor names. A cursor that is not one `encodeListCursor` made (garbage, a
 * time no task has, a forged id) is refused with INVALID_ARGUMENT before any query runs, so
 * no store sees a value its column cannot hold.
 */
export function decodeListCursor(cursor: string): ListPosition {
  const position = cursor.length <= MAX_CURSOR_CHARS ? positionOf(cursor) : undefined;
  if (position === undefined) throw new TaskrailError('INVALID_ARGUMENT', FOREIGN_CURSOR_MESSAGE);
  return position;
}

function positionOf(cursor: string): ListPosition | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [createdAt, id] = value as unknown[];
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt) || createdAt < 0) {
    return undefined;
  }
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return undefined;
  return { createdAt, id };
}

/** True when a task at `task` comes after `position` in list order. */
export function isAfterPosition(task: ListPosition, position: ListPosition): boolean {
  return (
    task.createdAt < position.createdAt ||
    (task.createdAt === position.createdAt && task.id < position.id)
  );
}
