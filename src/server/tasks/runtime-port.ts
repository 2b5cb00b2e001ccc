import type { CreateTaskInput, InlineOutcome, InlineRunInput } from '../../runtime/api.js';
import type { SettleOptions } from '../../runtime/wait.js';
import type { JsonObject, TaskRecord } from '../../task/record.js';

/** The part of `TaskRuntime` the MCP face uses; tests may hand in anything with this shape. */
export interface TaskRuntimePort {
  createTask(input: CreateTaskInput): Promise<TaskRecord>;
  getTask(id: string, principal: string): Promise<TaskRecord | undefined>;
  answerInput(
    id: string,
    principal: string,
    responses: Record<string, JsonObject>,
  ): Promise<TaskRecord | undefined>;
  cancelTask(id: string, principal: string): Promise<TaskRecord | undefined>;
  runInline(input: InlineRunInput): Promise<InlineOutcome>;
  /** Until the task ends, asks for input, or the time is up (the inline wait). */
  waitForSettled(
    id: string,
    principal: string,
    options: SettleOptions,
  ): Promise<TaskRecord | undefined>;
  start(): void | Promise<void>;
  stop(graceMs?: number): Promise<void>;
}
