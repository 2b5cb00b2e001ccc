import assert from 'node:assert/strict';
import {
  createTaskServer,
  type TaskServer,
  type TaskServerOptions,
} from '../../src/server/index.js';
import { SERVER_TROUBLE_MESSAGE } from '../../src/server/tasks/server-trouble.js';
import type { Logger } from '../../src/runtime/api.js';
import type { TaskStore } from '../../src/store/port.js';
import type { JsonObject } from '../../src/task/record.js';

/** A logger that keeps its lines, to count what an outage writes. */
export class CapturingLogger implements Logger {
  readonly lines: { level: string; message: string; fields: JsonObject }[] = [];
  info(message: string, fields: JsonObject = {}): void {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields: JsonObject = {}): void {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields: JsonObject = {}): void {
    this.lines.push({ level: 'error', message, fields });
  }
  troubleLines(): { message: string; fields: JsonObject }[] {
    return this.lines.filter((line) => line.message.startsWith('store trouble'));
  }
}

/** Counts handler executions, so a test sees work that ran without a final write. */
export const executions = { count: 0 };

/**
 * A server with `quick` (created on the fast path) and `hooked` (a no-op `beforeTask` hook sends
 * it through the SDK path), both plain task tools that finish at once.
 */
export function troubleServer(
  store: TaskStore,
  logger: Logger,
  auth?: TaskServerOptions['auth'],
): TaskServer {
  const done = async () => {
    executions.count += 1;
    return { content: [{ type: 'text' as const, text: 'done' }] };
  };
  return createTaskServer({
    store,
    logger,
    name: 'trouble',
    version: '1.0.0',
    ...(auth === undefined ? {} : { auth }),
  })
    .tool('quick', { description: 'finishes at once', task: true }, done)
    .tool(
      'hooked',
      { description: 'same, via the SDK', task: true, beforeTask: () => undefined },
      done,
    );
}

/** What leaks must never reach the wire, whatever the fault. */
export function assertSafe(raw: string, secrets: string[]): void {
  for (const secret of secrets) assert.ok(!raw.includes(secret), `the answer leaks ${secret}`);
  assert.ok(!/\bat .+:\d+:\d+/.test(raw), 'the answer carries a stack');
}

/** The retryable server-trouble answer: -32603, the fixed message, never a tool result. */
export function assertTroubleError(error: { code: number; message?: string } | undefined): void {
  assert.equal(error?.code, -32603, `expected -32603, got ${JSON.stringify(error)}`);
  assert.equal(error.message, SERVER_TROUBLE_MESSAGE);
}
