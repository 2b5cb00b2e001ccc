import type { CallToolResult } from '@modelcontextprotocol/server';
import { pendingInputRequests, type JsonObject, type TaskRecord } from '../../task/record.js';
import type { ResultView } from './host-profiles.js';

/**
 * What a host without tasks gets for a task that is still going: text for models that read
 * text, and the same instruction in `structuredContent` for hosts that show only that
 * (Claude Code, Codex). Every field a model needs to follow up is in both; a host that shows
 * both (`view` 'both') gets the instruction once, in the text.
 */
export function taskHandle(
  task: TaskRecord,
  waitMs: number,
  view: ResultView = 'either',
): CallToolResult {
  return readOnce(handleOf(task, waitMs), view);
}

function readOnce(handle: CallToolResult, view: ResultView): CallToolResult {
  const structured = handle.structuredContent as JsonObject | undefined;
  if (view !== 'both' || structured === undefined) return handle;
  const fields = { ...structured };
  delete fields['message'];
  return { ...handle, structuredContent: fields };
}

function handleOf(task: TaskRecord, waitMs: number): CallToolResult {
  const args = { taskId: task.id };
  const waitSeconds = Math.max(1, Math.round(waitMs / 1000));
  if (task.status === 'input_required') {
    const questions = questionsOf(task);
    const asked = questions.length === 0 ? '' : ` It asks: ${questions.join(' / ')}.`;
    const answer = answerArguments(task);
    return handle(
      `Task ${task.id} (${task.tool}) is waiting for an answer.${asked} Answer it with ` +
        `task_answer ${JSON.stringify(answer)} (content as the question's schema asks; ` +
        'action "decline" to refuse), or stop it with task_cancel.',
      { ...base(task), next: 'task_answer', arguments: answer, questions, asks: asksOf(task) },
    );
  }
  return handle(
    `Task ${task.id} (${task.tool}) is still ${task.status}${detail(task)}; it keeps running ` +
      `on the server. Call task_result with ${JSON.stringify(args)} to wait up to ` +
      `${waitSeconds}s for its result (call again if it is still running), task_status to check ` +
      'on it, or task_cancel to stop it.',
    {
      ...base(task),
      next: 'task_result',
      arguments: args,
      pollAfterMs: task.pollIntervalMs,
    },
  );
}

/** The pending questions with what an answer needs: the key and the schema of its content. */
export function asksOf(task: TaskRecord): JsonObject[] {
  return Object.entries(pendingInputRequests(task)).map(([key, request]) => ({
    key,
    method: request.method,
    ...(typeof request.params?.['message'] === 'string'
      ? { message: request.params['message'] }
      : {}),
    ...(request.params?.['requestedSchema'] === undefined
      ? {}
      : { requestedSchema: request.params['requestedSchema'] as JsonObject }),
  }));
}

/** What `task_answer` takes for the first pending question (its content left to the model). */
function answerArguments(task: TaskRecord): JsonObject {
  const key = Object.keys(pendingInputRequests(task))[0];
  return { taskId: task.id, ...(key === undefined ? {} : { key }), content: {} };
}

export function questionsOf(task: TaskRecord): string[] {
  return Object.values(pendingInputRequests(task)).map((request) => {
    const message = request.params?.['message'];
    return typeof message === 'string' ? message : request.method;
  });
}

/** The text of a task that ended without a result: failed or cancelled (an error result). */
export function endedWithoutResult(task: TaskRecord): CallToolResult {
  const message =
    task.status === 'cancelled'
      ? `Task ${task.id} was cancelled${detail(task)}.`
      : `Task ${task.id} failed: ${task.error?.message ?? task.statusMessage ?? 'unknown error'}`;
  return {
    content: [{ type: 'text', text: message }],
    structuredContent: base(task),
    isError: true,
  } as CallToolResult;
}

function base(task: TaskRecord): JsonObject {
  return {
    taskId: task.id,
    tool: task.tool,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
}

function detail(task: TaskRecord): string {
  return task.statusMessage === undefined ? '' : ` (${task.statusMessage})`;
}

/** The instruction is in `structuredContent` too: some hosts show the model nothing else. */
function handle(text: string, structured: JsonObject): CallToolResult {
  const structuredContent = { ...structured, message: text };
  return { content: [{ type: 'text', text }], structuredContent } as CallToolResult;
}
