import type { CallToolResult } from '@modelcontextprotocol/server';
import type { TaskRecord } from '../../task/record.js';
import type { HostFit } from '../tasks/host-fit.js';
import { resultCharsFor } from '../tasks/host-profiles.js';
import { readSlice, type TaskResourceDeps } from './task-resources.js';

/** `task_result`'s arguments: with `offset`, `length` or `part`, a part of a long result. */
export interface ResultArgs {
  taskId: string;
  offset?: number | undefined;
  length?: number | undefined;
  part?: 'result' | 'structured' | undefined;
}

export function asksForPart(args: ResultArgs): boolean {
  return args.offset !== undefined || args.length !== undefined || args.part !== undefined;
}

/** Room kept for the line that says which part this is and how to go on. */
const HEADER_ROOM = 400;

/** The most of `text` from its start whose UTF-8 form fits in `bytes`, never splitting a character. */
function withinBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(bytes));
  return text.slice(0, read);
}

/**
 * A part of a completed task's result text (or of its moved structuredContent's JSON), for a
 * host without a resource tool (Copilot CLI): at most what the host shows whole, with a first
 * line saying which characters of how many these are and the offset to ask for next.
 */
export async function resultPart(
  resources: Pick<TaskResourceDeps, 'store'>,
  task: TaskRecord,
  args: ResultArgs,
  fit: HostFit,
): Promise<CallToolResult> {
  const kind = args.part ?? 'result';
  const serverMax = Number.isFinite(fit.serverMaxChars) ? fit.serverMaxChars : 40_000;
  const room = Math.max(100, resultCharsFor(fit.profile, serverMax) - HEADER_ROOM);
  const offset = args.offset ?? 0;
  const length = Math.min(args.length ?? room, room);
  const slice = await readSlice(resources, task, { kind, offset, length });
  if (slice === undefined) {
    const text = `Task ${task.id} has no ${kind} text to read (it expired or was removed).`;
    return { content: [{ type: 'text', text }], isError: true };
  }
  const bytes = fit.profile.resultBytes;
  const shown = bytes === undefined ? slice.text : withinBytes(slice.text, bytes - HEADER_ROOM);
  const end = slice.start + shown.length;
  const partArg = kind === 'structured' ? ', "part": "structured"' : '';
  const next =
    end < slice.end
      ? `Call task_result with {"taskId": "${task.id}", "offset": ${end}${partArg}} for the next part.`
      : 'This is the end of it.';
  const what = kind === 'structured' ? 'the JSON of the structuredContent' : 'the result text';
  const header = `[Characters ${slice.start} to ${end} of ${slice.end} of ${what} of task ${task.id}. ${next}]\n`;
  return { content: [{ type: 'text', text: header + shown }] };
}
