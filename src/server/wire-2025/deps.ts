import type { ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../../runtime/api.js';
import type { TaskRuntime } from '../../runtime/runtime.js';
import type { InstanceDeps } from '../sdk/mcp-server.js';
import type { FairBound } from '../tasks/fair-bound.js';

/** What the 2025-11-25 session face needs: the instance recipe and the whole runtime. */
export interface Wire2025Deps {
  instanceDeps: InstanceDeps;
  /** The full runtime: the 2025-11-25 wire also lists tasks and blocks on `tasks/result`. */
  runtime: TaskRuntime;
  /** Fallback tools for hosts without tasks (see fallback-tools.ts). */
  fallbackTools: boolean;
  /** Answer `required` tools of hosts without tasks with a task id instead of refusing them. */
  fallbackRequired: boolean;
  logger?: Logger;
  /** `taskId\0key` of input requests sent to some client and not yet answered (this process). */
  inFlight: Set<string>;
  /** The session of every request whose transport names none: a stdio connection's. */
  session?: string;
  /** Waiting `tasks/result` requests of HTTP sessions, shared fairly (stdio has one caller). */
  waitingResults?: FairBound;
}

export { SESSION_META } from '../tasks/task-uri.js';

/** The session a request belongs to: the HTTP session it names, else the connection's own. */
export function sessionOf(deps: Wire2025Deps, ctx: ServerContext): string | undefined {
  return ctx.sessionId ?? deps.session;
}
