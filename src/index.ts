/**
 * `taskrail`: the task model, errors, the TaskStore port and shared types. This entry loads no
 * database driver and no MCP SDK; servers, clients and stores have their own subpaths.
 * Internals (the record constructor, transitions, the local executor, the park signal) stay
 * out: test/public-api.test.ts lists what each entry exports, so a change here is deliberate.
 */
export {
  TASK_STATUSES,
  TRANSITIONS,
  canTransition,
  isTaskStatus,
  isTerminal,
} from './task/status.js';
export type { TaskStatus, TerminalStatus } from './task/status.js';
export { RPC, RpcError, TaskrailError, isRpcError, isStoreUnavailable } from './task/errors.js';
export type { JsonRpcErrorObject, TaskrailErrorCode } from './task/errors.js';
export { newTaskId, isPlausibleTaskId } from './task/ids.js';
export { isoTime, systemClock } from './task/time.js';
export type { Clock } from './task/time.js';
export { pendingInputRequests, isExpired } from './task/record.js';
export type {
  InputRequest,
  JsonObject,
  NewTaskInput,
  TaskRecord,
  TaskWire,
} from './task/record.js';
export { TaskEvents } from './store/events.js';
export type { TaskEventMap, TaskEventName, TaskEventListener } from './store/events.js';
export type {
  CompareAndSetOutcome,
  CreateOutcome,
  LeaseGrant,
  LeaseRenewal,
  ListPage,
  ListQuery,
  PermitOutcome,
  PermitRequest,
  SaveStepOutcome,
  TaskStore,
  WriteFence,
} from './store/port.js';
export { TaskRuntime } from './runtime/runtime.js';
export { stderrLogger } from './runtime/logger.js';
export { installRejectionGuard } from './runtime/rejection-guard.js';
export type { LogLevel } from './runtime/logger.js';
export type {
  CreateTaskInput,
  DispatchReason,
  Executor,
  InlineOutcome,
  InlineRunInput,
  Logger,
  RetryReason,
  RunObserver,
  RuntimeOptions,
  ToolCatalog,
} from './runtime/api.js';
export type {
  ConcurrencyKeyFunction,
  ConcurrencyOptions,
  ElicitAnswer,
  ElicitParams,
  ProgressUpdate,
  RunnableTool,
  TaskContext,
  TaskMode,
  TaskOption,
  TaskSettings,
  ToolHandler,
  ToolResult,
} from './runtime/tool.js';
export { normalizeTaskOption } from './runtime/tool.js';
