import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../runtime/api.js';
import type { ProgressUpdate, ToolResult } from '../runtime/tool.js';
import type { JsonObject } from '../task/record.js';
import type { UpstreamTaskWire } from './task-wire-2025.js';
import { describeUpstream, type UpstreamSpec } from './upstream-spec.js';
import {
  DEFAULT_NOTIFICATION_RATE,
  NotificationGate,
  type NotificationRate,
} from './notification-gate.js';

/**
 * What every connection to an upstream is, whichever SDK client and wire it uses
 * (connection.ts for 2025-11-25 sessions, client-2026.ts for 2026-07-28), and the helpers both
 * share: a file of its own so neither client file imports the other.
 */

/** A request the upstream sent us (elicitation or sampling), to be answered by the caller. */
export type ServerRequestHandler = (
  method: string,
  params: JsonObject,
  /** Aborted when the upstream withdraws the request (`notifications/cancelled`, its time-out). */
  withdrawn?: AbortSignal,
) => Promise<JsonObject>;

export interface UpstreamCallOptions {
  signal: AbortSignal;
  timeout?: number;
  onprogress?: (progress: ProgressUpdate) => void;
}

type Params = Record<string, unknown> | undefined;

/** What the proxy asks of an upstream, whichever wire it speaks. */
export interface UpstreamClient {
  callTool(
    params: { name: string; arguments: JsonObject },
    options: UpstreamCallOptions,
  ): Promise<ToolResult>;
  listTools(params: {
    cursor?: string;
  }): Promise<{ tools: Tool[]; nextCursor?: string | undefined }>;
  /** Capabilities as the upstream stated them (2026-07-28: from `server/discover`). */
  getServerCapabilities(): Record<string, unknown> | undefined;
  listResources(params: Params): Promise<unknown>;
  listResourceTemplates(params: Params): Promise<unknown>;
  readResource(params: Params): Promise<unknown>;
  listPrompts(params: Params): Promise<unknown>;
  getPrompt(params: Params): Promise<unknown>;
}

export interface UpstreamConnection {
  readonly client: UpstreamClient;
  /**
   * The upstream's task wire (2025-11-25 tasks or the 2026-07-28 extension), when it declared
   * one it can run tool calls on; undefined when it runs none.
   */
  tasks: UpstreamTaskWire | undefined;
  /** Where this connection's server→client requests go; set by whoever holds it. */
  onServerRequest: ServerRequestHandler | undefined;
  readonly closed: boolean;
  /** The upstream's HTTP session id (2025-11-25 sessions), which scopes its tasks. */
  readonly sessionId: string | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  spec: UpstreamSpec;
  logger: Logger;
  version: string;
  /** Called with the upstream's new tool list when it says its tools changed. */
  onToolsChanged?: (tools: Tool[]) => void;
  /** Called once when the session ends (a stdio child that exited, a closed HTTP session). */
  onClose?: () => void;
  /** Rejoin this HTTP session instead of opening one (to follow a task it holds). */
  sessionId?: string;
  /** Notifications this connection passes on; past it they are coalesced (notification-gate.ts). */
  notificationRate?: NotificationRate;
}

/** The gate for one connection's notifications; `guard` its transport once connected. */
export function notificationGate(options: ConnectOptions): NotificationGate {
  const rate = options.notificationRate ?? DEFAULT_NOTIFICATION_RATE;
  return new NotificationGate(rate, options.logger, describeUpstream(options.spec));
}

export function toolsChanged(options: ConnectOptions) {
  return {
    tools: {
      onChanged: (error: Error | null, tools: Tool[] | null) => {
        if (error !== null) {
          options.logger.warn('upstream tools/list failed', { error: error.message });
        } else if (tools !== null) options.onToolsChanged?.(tools);
      },
    },
  };
}

export function logStderr(stderr: Readable | null, logger: Logger): void {
  if (stderr === null) return;
  createInterface({ input: stderr }).on('line', (line) => logger.info('upstream stderr', { line }));
}

/** The child gets the proxy's environment: upstream credentials may come from there. */
export function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}
