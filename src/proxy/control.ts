import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../runtime/api.js';
import { TaskrailError } from '../task/errors.js';
import { connectUpstream, UPSTREAM_CONNECT_TIMEOUT_MS } from './connection.js';
import type { UpstreamConnection } from './upstream.js';
import type { NotificationRate } from './notification-gate.js';
import { sleep } from './pool.js';
import { describeUpstream, type UpstreamSpec } from './upstream-spec.js';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';

export interface ControlOptions {
  spec: UpstreamSpec;
  logger: Logger;
  version: string;
  /** The upstream's tools, and which of them it can run as its own tasks. */
  onTools: (tools: Tool[], runsAsTask: (tool: Tool) => boolean) => void;
  notificationRate?: NotificationRate | undefined;
}

const RECONNECT: Backoff = { backoffMs: 200, maxBackoffMs: 10_000 };

/**
 * The proxy's own session with the upstream: lists its tools, hears `list_changed`, and
 * serves the passed-through resources and prompts. Restarted with backoff when it closes (a
 * stdio child that exited), so the proxy recovers from an upstream crash by itself.
 */
export class ControlSession {
  readonly #options: ControlOptions;
  #connection: UpstreamConnection | undefined;
  #closed = false;

  private constructor(options: ControlOptions) {
    this.#options = options;
  }

  /** Connects once, failing with a clear error when the upstream cannot be reached at all. */
  static async open(options: ControlOptions): Promise<ControlSession> {
    const session = new ControlSession(options);
    const { spec } = options;
    // `npx -y` may fetch the upstream first: say what the wait is for, and its bound.
    options.logger.info(
      `${spec.kind === 'stdio' ? 'starting upstream' : 'connecting to upstream'}: ` +
        `${describeUpstream(spec)} (waiting up to ${UPSTREAM_CONNECT_TIMEOUT_MS / 1000} s for it to answer)`,
    );
    try {
      await session.#connect();
    } catch (error) {
      throw new TaskrailError(
        'CONFIG',
        `cannot connect to the upstream ${describeUpstream(options.spec)}: ${(error as Error).message}`,
      );
    }
    return session;
  }

  /** The live connection, or an error saying the upstream is being reconnected. */
  get connection(): UpstreamConnection {
    const connection = this.#connection;
    if (connection === undefined || connection.closed) {
      throw new Error('the upstream is not connected right now; it is being restarted');
    }
    return connection;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#connection?.close().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const connection = await connectUpstream({
      ...this.#options,
      onToolsChanged: (tools) => this.#options.onTools(tools, runsAsTask(connection)),
      onClose: () => void this.#reconnect(),
    });
    if (this.#closed) {
      // Closed while connecting (a reconnect in flight): the new child must not outlive us.
      await connection.close().catch(() => undefined);
      return;
    }
    this.#connection = connection;
    this.#options.onTools(await listAllTools(connection), runsAsTask(connection));
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return;
    for (let failures = 0; !this.#closed; failures += 1) {
      const delay = backoffDelayMs(RECONNECT, failures + 1);
      this.#options.logger.warn('the upstream session closed; reconnecting', {
        upstream: describeUpstream(this.#options.spec),
        retryInMs: delay,
      });
      await sleep(delay);
      if (this.#closed) return;
      try {
        await this.#connect();
        return;
      } catch (error) {
        this.#options.logger.warn('cannot reach the upstream', { error: (error as Error).message });
      }
    }
  }
}

export async function listAllTools(connection: UpstreamConnection): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await connection.client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** Tools the upstream runs as its own tasks, by its task wire (none without one). */
function runsAsTask(connection: UpstreamConnection): (tool: Tool) => boolean {
  const wire = connection.tasks;
  return (tool) => wire?.runsAsTask(tool) ?? false;
}
