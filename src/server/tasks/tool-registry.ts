import type { ToolCatalog } from '../../runtime/api.js';
import { normalizeTaskOption, type RunnableTool, type ToolHandler } from '../../runtime/tool.js';
import { assertRunPolicy } from '../../runtime/run-policy.js';
import { TaskrailError } from '../../task/errors.js';
import type { RegisteredTaskTool, TaskToolConfig } from './types.js';

const TOOL_NAME = /^[A-Za-z0-9_./-]{1,64}$/;

/** The server's tools: what the SDK lists and calls, and the runtime's catalog. */
export class ToolRegistry implements ToolCatalog {
  readonly #tools = new Map<string, RegisteredTaskTool>();
  readonly #runnable = new Map<string, RunnableTool>();
  readonly #listeners = new Set<() => void>();

  add(name: string, config: TaskToolConfig, handler: ToolHandler): void {
    if (!TOOL_NAME.test(name)) throw new TaskrailError('CONFIG', `invalid tool name '${name}'`);
    if (this.#tools.has(name))
      throw new TaskrailError('CONFIG', `tool '${name}' is registered twice`);
    const task = normalizeTaskOption(config.task);
    assertRunPolicy(name, task);
    this.#tools.set(name, { name, config, handler });
    const declaresOutputSchema = config.outputSchema !== undefined;
    this.#runnable.set(name, { name, task, handler, declaresOutputSchema });
    this.#changed();
  }

  /**
   * Takes a tool away (a proxy's upstream dropped it): it is no longer listed or callable, and
   * a task of it that has yet to run ends failed. False when there was no such tool.
   */
  remove(name: string): boolean {
    const removed = this.#tools.delete(name);
    this.#runnable.delete(name);
    if (removed) this.#changed();
    return removed;
  }

  /** Calls `listener` after each add or remove (2025-11-25 sessions keep their tools in step). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
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
