import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';

/** The tasks extension id, declared per request in `_meta` client capabilities. */
export const TASKS_EXTENSION = TASKS_EXTENSION_ID_V2;

/** The stateless protocol revision the tasks extension is defined on. */
export const WIRE_2026_VERSION = '2026-07-28';
export const SUPPORTED_WIRE_2026_VERSIONS: readonly string[] = [WIRE_2026_VERSION];

/** The session-based protocol revision whose core has tasks (`params.task`, `tasks/result`). */
export const WIRE_2025_VERSION = '2025-11-25';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  relatedTask: 'io.modelcontextprotocol/related-task',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** 2025-11-25: what a model may be told at once about a created task. */
  modelImmediateResponse: 'io.modelcontextprotocol/model-immediate-response',
} as const;

/**
 * taskrail's own `_meta` keys. `idempotencyKey` on `tools/call`: a retry with the same key (and
 * the same call) gets the task the first attempt created.
 */
export const TASKRAIL_META = {
  idempotencyKey: 'dev.taskrail/idempotency-key',
  /** On a `subscriptions/listen` ack: every acknowledged task's current state follows at once. */
  initialState: 'dev.taskrail/initialState',
} as const;

/** Lower-case HTTP header names (SEP-2243 routing headers). */
export const HEADER = {
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  /** The 2025-11-25 session. */
  sessionId: 'mcp-session-id',
} as const;

/** Core methods and notifications taskrail reads or writes itself. */
export const INITIALIZE_METHOD = 'initialize';
export const INITIALIZED_NOTIFICATION = 'notifications/initialized';
export const TOOLS_CALL_METHOD = 'tools/call';
export const CANCELLED_NOTIFICATION = 'notifications/cancelled';
export const PROGRESS_NOTIFICATION = 'notifications/progress';

/** Push: the stream request, its acknowledgement and the notification it carries (2026-07-28). */
export const LISTEN_METHOD = 'subscriptions/listen';
export const SUBSCRIPTION_ACK_NOTIFICATION = 'notifications/subscriptions/acknowledged';
export const TASKS_NOTIFICATION = 'notifications/tasks';
/** The 2025-11-25 wire's task status notification. */
export const TASK_STATUS_NOTIFICATION_2025 = 'notifications/tasks/status';

/** The methods the extension adds on the 2026-07-28 wire, and the 2025-11-25 ones it removed. */
export const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
export type TaskMethod = (typeof TASK_METHODS)[number];
export const REMOVED_TASK_METHODS = ['tasks/result', 'tasks/list'] as const;

export function isTaskMethod(method: unknown): method is TaskMethod {
  return (TASK_METHODS as readonly unknown[]).includes(method);
}

export function isRemovedTaskMethod(method: unknown): boolean {
  return (REMOVED_TASK_METHODS as readonly unknown[]).includes(method);
}

/**
 * Codes of JSON-RPC's server-error range beside the ones in `RPC` (src/task/errors.ts): a
 * quota reached (too many sessions or task streams, with HTTP 429 or 503), the SDK's unknown
 * `Mcp-Session-Id`, and the code early builds sent for a missing client capability (-32021 now).
 */
export const SERVER_ERROR = {
  LIMIT_REACHED: -32000,
  SESSION_NOT_FOUND: -32001,
  LEGACY_MISSING_CAPABILITY: -32003,
} as const;
