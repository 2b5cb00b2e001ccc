import type { Logger } from '../../runtime/api.js';
import type { TaskRuntime } from '../../runtime/runtime.js';
import type { InstanceDeps } from '../core/mcp-instance.js';

/** What the 2025-11-25 session face needs: the instance recipe and the whole runtime. */
export interface LegacyDeps {
  instanceDeps: InstanceDeps;
  /** The full runtime: the v1 wire also lists tasks and blocks on `tasks/result`. */
  runtime: TaskRuntime;
  /** Answer `required` tools of hosts without tasks with a task id (see fallback-tools.ts). */
  fallbackTools: boolean;
  logger?: Logger;
  /** `taskId\0key` of input requests sent to some client and not yet answered (this process). */
  inFlight: Set<string>;
}

/** Where a v1 task remembers the session that created it (anonymous callers list by it). */
export const SESSION_META = 'v1Session';
