import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { RpcError } from '../../task/errors.js';
import { pendingInputRequests, type JsonObject, type TaskRecord } from '../../task/record.js';
import { isServerTrouble } from '../tasks/server-trouble.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { schemaConvertedOnce } from './schema-once.js';

export const AnswerInput = schemaConvertedOnce(
  z.object({
    taskId: z.string().describe('The id of the task waiting for an answer'),
    key: z
      .string()
      .optional()
      .describe('Which question (the key its handle gives); needed only when several wait'),
    action: z
      .enum(['accept', 'decline', 'cancel'])
      .optional()
      .describe('accept (default) with content, or decline / cancel to refuse'),
    content: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The answer's fields, as the question's requestedSchema asks"),
  }),
);

export interface AnswerArgs {
  taskId: string;
  key?: string | undefined;
  action?: 'accept' | 'decline' | 'cancel' | undefined;
  content?: Record<string, unknown> | undefined;
}

function refusal(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The pending question `args` answers, or why none can be. */
function questionKey(task: TaskRecord, args: AnswerArgs): string | CallToolResult {
  const pending = pendingInputRequests(task);
  const keys = Object.keys(pending);
  if (task.status !== 'input_required' || keys.length === 0) {
    return refusal(`Task ${task.id} is not waiting for an answer (it is ${task.status}).`);
  }
  const key = args.key ?? (keys.length === 1 ? keys[0] : undefined);
  if (key === undefined || !(key in pending)) {
    return refusal(`Task ${task.id} waits for answers to ${keys.join(', ')}: name one as key.`);
  }
  if (pending[key]?.method !== 'elicitation/create') {
    return refusal(`Question ${key} of task ${task.id} needs a client that supports tasks.`);
  }
  return key;
}

/**
 * `task_answer`: a host that cannot show a tool's question (no elicitation) lets its model answer
 * it. An answer that does not fit the question's schema is refused with the reason, and the
 * task keeps waiting. Returns the task after the answer, or the refusal to hand back.
 */
export async function answerTask(
  runtime: TaskRuntimePort,
  task: TaskRecord,
  principal: string,
  args: AnswerArgs,
): Promise<{ task: TaskRecord } | { refused: CallToolResult }> {
  const key = questionKey(task, args);
  if (typeof key !== 'string') return { refused: key };
  const action = args.action ?? 'accept';
  const response: JsonObject =
    action === 'accept' ? { action, content: (args.content ?? {}) as JsonObject } : { action };
  try {
    const answered = await runtime.answerInput(task.id, principal, { [key]: response });
    if (answered !== undefined) return { task: answered };
    return { refused: refusal(`There is no task '${task.id}' (unknown, expired, or not yours).`) };
  } catch (error) {
    if (isServerTrouble(error) || !(error instanceof RpcError)) throw error;
    return { refused: refusal(`The answer was not taken: ${error.message}. Answer again.`) };
  }
}
