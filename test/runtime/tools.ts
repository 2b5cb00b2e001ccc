import { RpcError } from '../../src/task/errors.js';
import type { RunnableTool, TaskSettings, ToolHandler } from '../../src/runtime/tool.js';
import type { ToolCatalog } from '../../src/runtime/api.js';

/** A tool catalog for runtime tests, with counters for side effects. */
export class TestTools implements ToolCatalog {
  readonly #tools = new Map<string, RunnableTool>();
  readonly calls = new Map<string, number>();

  add(name: string, handler: ToolHandler, task: TaskSettings = { mode: 'optional' }): this {
    this.#tools.set(name, {
      name,
      task,
      handler: (args, ctx) => {
        this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
        return handler(args, ctx);
      },
    });
    return this;
  }

  get(name: string): RunnableTool | undefined {
    return this.#tools.get(name);
  }
}

export function text(value: string) {
  return { content: [{ type: 'text', text: value }] };
}

export function abortable(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export const protocolError = () => {
  throw new RpcError(-32001, 'upstream rejected the job', { retryable: false });
};
