import type { JsonRpcErrorObject } from '../../task/errors.js';
import type { InputRequest, JsonObject, TaskRecord } from '../../task/record.js';
import type { TaskStatus } from '../../task/status.js';
import { storedWire, wireFromStored } from '../shared/record-parts.js';
import { LAZY_ARGUMENTS_CHARS, parseArgumentsWhenRead } from './lazy-arguments.js';

/** One row of `tasks` as better-sqlite3 returns it. */
export interface TaskRow {
  id: string;
  principal: string;
  tool: string;
  status: string;
  status_message: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number | null;
  expires_at: number | null;
  poll_interval_ms: number;
  revision: number;
  attempt: number;
  /** The record's `wire`, stored under its old name and values (see storedWire). */
  generation: string;
  idempotency_key: string | null;
  arguments: string;
  result: string | null;
  error: string | null;
  input_requests: string;
  input_responses: string;
  meta: string;
}

export const TASK_COLUMNS =
  'id, principal, tool, status, status_message, created_at, updated_at, ttl_ms, expires_at, ' +
  'poll_interval_ms, revision, attempt, generation, idempotency_key, arguments, result, error, ' +
  'input_requests, input_responses, meta';

export const TASK_PARAMS = TASK_COLUMNS.split(', ')
  .map((column) => `@${column}`)
  .join(', ');

/**
 * Columns fixed at creation. A compareAndSet never writes them: the stored values win (as in
 * every store), and leaving them out of the UPDATE spares SQLite rewriting their indexes.
 */
const FIXED_COLUMNS = new Set([
  'id',
  'principal',
  'tool',
  'arguments',
  'created_at',
  'generation',
  'idempotency_key',
]);
export type FixedColumns = Pick<
  TaskRow,
  'id' | 'principal' | 'tool' | 'arguments' | 'created_at' | 'generation' | 'idempotency_key'
>;

/** What a compare-and-set reads first: the fixed columns and what it compares. */
export type TaskHead = FixedColumns & {
  status: string;
  revision: number;
  ttl_ms: number | null;
  expires_at: number | null;
  /** The lease a fenced write must still hold. */
  lease_token: string | null;
};

/** TaskHead's columns, in the order rawHead reads them. */
export const HEAD_COLUMNS =
  'status, revision, ttl_ms, expires_at, ' +
  'id, principal, tool, arguments, created_at, generation, idempotency_key, lease_token';

export function rawHead(values: unknown[]): TaskHead {
  return {
    status: values[0],
    revision: values[1],
    ttl_ms: values[2],
    expires_at: values[3],
    id: values[4],
    principal: values[5],
    tool: values[6],
    arguments: values[7],
    created_at: values[8],
    generation: values[9],
    idempotency_key: values[10],
    lease_token: values[11],
  } as TaskHead;
}

export function fixedOf(head: TaskHead): FixedColumns {
  return {
    id: head.id,
    principal: head.principal,
    tool: head.tool,
    arguments: head.arguments,
    created_at: head.created_at,
    generation: head.generation,
    idempotency_key: head.idempotency_key,
  };
}

/** What a claim checks before it takes the lease. */
export interface ClaimHead {
  status: string;
  expires_at: number | null;
  lease_owner: string | null;
  lease_token: string | null;
  lease_expires_at: number | null;
}

/** A claim's read of the whole row (TASK_COLUMNS, then the lease's three): its head and values. */
export function rawClaimRow(values: unknown[]): ClaimHead & { values: unknown[] } {
  return {
    status: values[3],
    expires_at: values[8],
    lease_owner: values[20],
    lease_token: values[21],
    lease_expires_at: values[22],
    values,
  } as ClaimHead & { values: unknown[] };
}
const EXPIRY_COLUMNS = new Set(['ttl_ms', 'expires_at']);

/** Columns every compareAndSet writes. */
export const UPDATE_COLUMNS = TASK_COLUMNS.split(', ').filter(
  (column) => !FIXED_COLUMNS.has(column) && !EXPIRY_COLUMNS.has(column),
);
/** Written only when the expiry changed, so the expiry index is left alone otherwise. */
export const EXPIRY_UPDATE_COLUMNS = [...EXPIRY_COLUMNS];

export function recordToParams(task: TaskRecord): TaskRow {
  return withMutable(
    {
      id: task.id,
      principal: task.principal,
      tool: task.tool,
      arguments: JSON.stringify(task.arguments),
      created_at: task.createdAt,
      generation: storedWire(task.wire),
      idempotency_key: task.idempotencyKey ?? null,
    },
    task,
  );
}

/**
 * A compare-and-set's parameters: the stored fixed columns, `next`'s others, the revision it
 * expects. Read back, the same object is the stored record's row.
 */
export function casParams(
  head: TaskHead,
  next: TaskRecord,
  expected: number,
): TaskRow & { expected_revision: number } {
  const row = withMutable(fixedOf(head), next) as TaskRow & { expected_revision: number };
  row.expected_revision = expected;
  return row;
}

/**
 * The columns a write after creation may change, added to `fixed` in place: an object spread
 * here would build every row through V8's slow path (its shape is not known in advance).
 */
function withMutable(fixed: FixedColumns, task: TaskRecord): TaskRow {
  const row = fixed as TaskRow;
  row.status = task.status;
  row.status_message = task.statusMessage ?? null;
  row.updated_at = task.updatedAt;
  row.ttl_ms = task.ttlMs;
  row.expires_at = task.expiresAt;
  row.poll_interval_ms = task.pollIntervalMs;
  row.revision = task.revision;
  row.attempt = task.attempt;
  row.result = task.result === undefined ? null : JSON.stringify(task.result);
  row.error = task.error === undefined ? null : JSON.stringify(task.error);
  row.input_requests = objectText(task.inputRequests);
  row.input_responses = objectText(task.inputResponses);
  row.meta = objectText(task.meta);
  return row;
}

/**
 * `JSON.stringify` of a JSON object, with `{}` written without the serializer (the inverse of
 * parseObject's shortcut: most records carry empty objects, and the call costs ~10× the check).
 */
function objectText(value: object): string {
  // A key anywhere (even inherited) or a toJSON: let the serializer decide.
  for (const _key in value) return JSON.stringify(value);
  return 'toJSON' in value ? JSON.stringify(value) : '{}';
}

/** Most records carry empty objects; skipping the parser for them makes reads cheaper. */
function parseObject<T>(json: string): T {
  return (json === '{}' ? {} : JSON.parse(json)) as T;
}

/**
 * A row read in raw mode (its values in TASK_COLUMNS order). Hot reads use it: better-sqlite3
 * builds a keyed row by looking up each column name's string anew, which costs about as much as
 * the read itself (measured: 6.0 µs keyed, 3.9 µs raw, for one `get`).
 */
export function rawRowToRecord(values: unknown[]): TaskRecord {
  return rowToRecord({
    id: values[0],
    principal: values[1],
    tool: values[2],
    status: values[3],
    status_message: values[4],
    created_at: values[5],
    updated_at: values[6],
    ttl_ms: values[7],
    expires_at: values[8],
    poll_interval_ms: values[9],
    revision: values[10],
    attempt: values[11],
    generation: values[12],
    idempotency_key: values[13],
    arguments: values[14],
    result: values[15],
    error: values[16],
    input_requests: values[17],
    input_responses: values[18],
    meta: values[19],
  } as TaskRow);
}

export function rowToRecord(row: TaskRow): TaskRecord {
  const lazy = row.arguments.length > LAZY_ARGUMENTS_CHARS;
  const task: TaskRecord = {
    id: row.id,
    principal: row.principal,
    tool: row.tool,
    // A placeholder when lazy: the key keeps its place in the record's order and shape.
    arguments: lazy ? {} : parseObject<JsonObject>(row.arguments),
    status: row.status as TaskStatus,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ttlMs: row.ttl_ms,
    expiresAt: row.expires_at,
    pollIntervalMs: row.poll_interval_ms,
    revision: row.revision,
    inputRequests: parseObject<Record<string, InputRequest>>(row.input_requests),
    inputResponses: parseObject<Record<string, JsonObject>>(row.input_responses),
    attempt: row.attempt,
    wire: wireFromStored(row.generation, 'sqlite task row'),
    meta: parseObject<JsonObject>(row.meta),
  };
  if (row.status_message !== null) task.statusMessage = row.status_message;
  if (row.result !== null) task.result = JSON.parse(row.result) as JsonObject;
  if (row.error !== null) task.error = JSON.parse(row.error) as JsonRpcErrorObject;
  if (row.idempotency_key !== null) task.idempotencyKey = row.idempotency_key;
  if (lazy) parseArgumentsWhenRead(task, row.arguments);
  return task;
}
