import type { InputHandlers } from './input.js';
import type { TaskLedger } from './ledger.js';
import type { PushOptions } from './subscribe.js';
import type { TaskEvent } from './task-watch.js';

/**
 * Every optional setting also takes `undefined` (as not given), so `bearer: process.env.TOKEN`
 * compiles under `exactOptionalPropertyTypes`.
 */
export interface TaskrailClientOptions {
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL;
  bearer?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** The ledger to use; default: `ledger.db` under `home` / `~/.taskrail`. */
  ledger?: TaskLedger | undefined;
  home?: string | undefined;
  /** Declare the tasks extension (default true). See `clientOptionsFromEnv` for the env switch. */
  tasks?: boolean | undefined;
  /** Hand back a handle at once (default true); `false`: wait inside `callTool`. */
  background?: boolean | undefined;
  input?: InputHandlers | undefined;
  clientInfo?: { name: string; version: string } | undefined;
  /** Used when a reply carries no `pollIntervalMs`; default 1000. */
  defaultPollIntervalMs?: number | undefined;
  /** Check arguments against `inputSchema` before sending (default true). */
  validateArguments?: boolean | undefined;
  connectionGraceMs?: number | undefined;
  fetch?: typeof fetch | undefined;
  onEvent?: ((event: TaskEvent) => void) | undefined;
  /** Follow tasks over `subscriptions/listen` (default on; polling stays the fallback); `false`: poll only. */
  push?: false | PushOptions | undefined;
}

export interface CallToolOptions {
  background?: boolean | undefined;
  /** Aborting it stops watching (the task keeps running on the server and in the ledger). */
  signal?: AbortSignal | undefined;
  /**
   * Names this call (1–128 characters of A–Z a–z 0–9 . _ : -), so a retry never makes a second
   * task: a `tools/call` whose reply is lost to the connection is sent again with the same key
   * (as is a -32603 the server marks retryable: HTTP 503, its store in trouble) for up to
   * `connectionGraceMs`, and a server that honours the key (taskrail does) answers
   * with the task the first attempt created. The call is written to the ledger as pending
   * before it is sent: if this process dies before the reply, `resume()` sends it again with
   * its key. Use a new key for each new call.
   */
  idempotencyKey?: string | undefined;
}
