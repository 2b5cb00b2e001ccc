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

export function decodeListCursor(cursor: string): ListPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'number' &&
      typeof value[1] === 'string'
    ) {
      return { createdAt: value[0], id: value[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new TaskrailError('INVALID_ARGUMENT', `invalid list cursor '${cursor}'`);
}

/** True when a task at `task` comes after `position` in list order. */
export function isAfterPosition(task: ListPosition, position: ListPosition): boolean {
  return (
    task.createdAt < position.createdAt ||
    (task.createdAt === position.createdAt && task.id < position.id)
  );
}
