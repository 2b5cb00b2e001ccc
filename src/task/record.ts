import type { JsonRpcErrorObject } from './errors.js';
import type { TaskStatus } from './status.js';

export type JsonObject = { [key: string]: unknown };

/** A request the task needs answered by the client: `{ method, params }`, no id (MCP InputRequest). */
export interface InputRequest {
  method: string;
  params?: JsonObject;
}

/**
 * Which wire created the task, named by its protocol version: the 2026-07-28 wire (the
 * `io.modelcontextprotocol/tasks` extension), the 2025-11-25 wire (the core's experimental
 * tasks), or `local` (an inline call that never became a wire task). Decides how `isError` maps
 * to a status and what `tasks/*` show.
 */
export type TaskWire = '2026-07-28' | '2025-11-25' | 'local';

/**
 * The durable task record. Times are epoch milliseconds; the wire layer renders them as ISO 8601.
 * `inputRequests` holds every request ever issued (keys are unique for the task's life);
 * `inputResponses` the answers received. A key is pending while it has no response.
 */
export interface TaskRecord {
  id: string;
  principal: string;
  tool: string;
  arguments: JsonObject;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  updatedAt: number;
  ttlMs: number | null;
  /** createdAt + ttlMs, or null for unlimited. */
  expiresAt: number | null;
  pollIntervalMs: number;
  /** Incremented by every write; the compare-and-set token. */
  revision: number;
  result?: JsonObject;
  error?: JsonRpcErrorObject;
  inputRequests: Record<string, InputRequest>;
  inputResponses: Record<string, JsonObject>;
  /** 1 for the first run; a re-run after a crash increments it. */
  attempt: number;
  wire: TaskWire;
  idempotencyKey?: string;
  /** Free-form data kept with the task (client capabilities at creation, session id, …). */
  meta: JsonObject;
}

/** The fields a task is created with and never changes: a write after creation keeps them. */
export type FixedFields = Pick<
  TaskRecord,
  'id' | 'principal' | 'tool' | 'arguments' | 'createdAt' | 'wire' | 'idempotencyKey'
>;

export function fixedFieldsOf(task: TaskRecord): FixedFields {
  const fixed: FixedFields = {
    id: task.id,
    principal: task.principal,
    tool: task.tool,
    arguments: task.arguments,
    createdAt: task.createdAt,
    wire: task.wire,
  };
  if (task.idempotencyKey !== undefined) fixed.idempotencyKey = task.idempotencyKey;
  return fixed;
}

export interface NewTaskInput {
  id: string;
  principal: string;
  tool: string;
  arguments: JsonObject;
  ttlMs: number | null;
  pollIntervalMs: number;
  wire?: TaskWire;
  idempotencyKey?: string;
  meta?: JsonObject;
  statusMessage?: string;
}

export function newTaskRecord(input: NewTaskInput, now: number): TaskRecord {
  return {
    id: input.id,
    principal: input.principal,
    tool: input.tool,
    arguments: input.arguments,
    status: 'working',
    ...(input.statusMessage === undefined ? {} : { statusMessage: input.statusMessage }),
    createdAt: now,
    updatedAt: now,
    ttlMs: input.ttlMs,
    expiresAt: input.ttlMs === null ? null : now + input.ttlMs,
    pollIntervalMs: input.pollIntervalMs,
    revision: 1,
    inputRequests: {},
    inputResponses: {},
    attempt: 1,
    wire: input.wire ?? '2026-07-28',
    ...(input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey }),
    meta: input.meta ?? {},
  };
}

/** Keys issued but not yet answered. */
export function pendingInputRequests(task: TaskRecord): Record<string, InputRequest> {
  const pending: Record<string, InputRequest> = {};
  for (const [key, request] of Object.entries(task.inputRequests)) {
    if (!(key in task.inputResponses)) pending[key] = request;
  }
  return pending;
}

export function isExpired(task: Pick<TaskRecord, 'expiresAt'>, now: number): boolean {
  return task.expiresAt !== null && task.expiresAt <= now;
}
