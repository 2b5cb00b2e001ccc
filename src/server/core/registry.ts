import type { ToolCatalog } from '../../runtime/api.js';
import { normalizeTaskOption, type RunnableTool, type ToolHandler } from '../../runtime/tool.js';
import { TaskrailError } from '../../task/errors.js';
import type { RegisteredTaskTool, TaskToolConfig } from './types.js';

const TOOL_NAME = /^[A-Za-z0-9_./-]{1,64}$/;

/** The server's tools: what the SDK lists and calls, and the runtime's catalog. */
export class ToolRegistry implements ToolCatalog {
  readonly #tools = new Map<string, RegisteredTaskTool>();
  readonly #runnable = new Map<string, RunnableTool>();

  add(name: string, config: TaskToolConfig, handler: ToolHandler): void {
    if (!TOOL_NAME.test(name)) throw new TaskrailError('CONFIG', `invalid tool name '${name}'`);
    if (this.#tools.has(name))
      throw new TaskrailError('CONFIG', `tool '${name}' is registered twice`);
    this.#tools.set(name, { name, config, handler });
    this.#runnable.set(name, { name, task: normalizeTaskOption(config.task), handler });
  }

  get(name: string): RunnableTool | undefined {
    return this.#runnable.get(name);
  }

  definition(name: string): RegisteredTaskTool | undefined {
    return this.#tools.get(name);
  }

  all(): RegisteredTaskTool[] {
    return [...this.#tools.values()];
  }

  /** True when some tool can run as a task (so the runtime is worth starting). */
  hasTaskTools(): boolean {
    return [...this.#runnable.values()].some((tool) => tool.task.mode !== 'forbidden');
  }
}
