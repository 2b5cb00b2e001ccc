/** The texts of a task a resource names (the store's `TaskTextKind`). */
export type TaskResourceKind = 'result' | 'output' | 'structured';

const TASK_URI = /^taskrail:\/\/tasks\/([^/?#]+)\/(result|output|structured)(?:\?([^#]*))?$/;

/** A `taskrail://tasks/ID/{result,output,structured}[?query]` URI taken apart. */
export interface TaskUriParts {
  taskId: string;
  kind: TaskResourceKind;
  /** The query (`offset=N&length=M`), empty without one. */
  query: string;
}

/** The task and text a task resource URI names, or undefined for any other URI. */
export function taskUriParts(uri: string): TaskUriParts | undefined {
  const match = TASK_URI.exec(uri);
  if (match === null) return undefined;
  try {
    return {
      taskId: decodeURIComponent(match[1] as string),
      kind: match[2] as TaskResourceKind,
      query: match[3] ?? '',
    };
  } catch {
    return undefined;
  }
}

/**
 * Where a 2025-11-25 task remembers the session that created it (anonymous callers list by it).
 * The key is stored in task records, so it keeps its old name: existing records must still match.
 */
export const SESSION_META = 'v1Session';

/**
 * The session of a task a 2025-11-25 session ran behind a plain `tools/call` (no task asked
 * for): not its task (no status notifications, not in `tasks/list`), but its resources (a
 * shortened result, the output) are that session's to read.
 */
export const CALL_SESSION_META = 'callSession';
