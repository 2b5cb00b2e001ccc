/**
 * The 2026-07-28 task shapes the client hands its callers, declared here rather than taken
 * from `@modelcontextprotocol/ext-tasks`: its generated declarations do not type-check without
 * `skipLibCheck` (optional members against a `JsonValue` index signature), and a library's
 * public types must compile in a strict app with the compiler's defaults. Values are still
 * checked at run time against ext-tasks' schemas (`wire.ts`); these types describe what those
 * checks let through.
 */

export type JsonObject = Record<string, unknown>;

export type WireTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** One request a parked task waits on, keyed by the server's key in `InputRequests`. */
export interface InputRequest {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params?: JsonObject;
}

export type InputRequests = Record<string, InputRequest>;

interface TaskFields {
  taskId: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** A task as `tasks/get` and `notifications/tasks/status` describe it, by status. */
export type DetailedTask =
  | (TaskFields & { status: 'working' })
  | (TaskFields & { status: 'input_required'; inputRequests: InputRequests })
  | (TaskFields & { status: 'completed'; result: JsonObject })
  | (TaskFields & {
      status: 'failed';
      error: { code: number; message: string; data?: unknown };
    })
  | (TaskFields & { status: 'cancelled' });

/** The handle a task-creating `tools/call` answers with. */
export type CreateTaskResult = TaskFields & {
  status: WireTaskStatus;
  resultType: 'task';
  _meta?: JsonObject;
};

/** A tool as `tools/list` describes it. */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: JsonObject;
  icons?: unknown[];
  _meta?: JsonObject;
  [key: string]: unknown;
}
