import type { InputRequest } from '../task/record.js';
import { longDelay } from '../task/timers.js';
import type { InlineOutcome, InlineRunInput } from './api.js';
import { RunContext, type ContextBackend } from './context.js';
import { isParkSignal } from './park.js';
import type { RunnableTool } from './tool.js';

/**
 * A synchronous call: the same handler, with steps kept in memory and questions answered only
 * from the request's own `inputResponses` (MRTR). A question without an answer ends the call
 * with `input_required`; the client retries with the answers and the handler runs again.
 */
export async function runInline(tool: RunnableTool, input: InlineRunInput): Promise<InlineOutcome> {
  const steps = new Map<string, unknown>();
  const answers = input.inputResponses ?? {};
  let asked: Record<string, InputRequest> | undefined;
  const backend: ContextBackend = {
    taskId: undefined,
    principal: input.principal,
    attempt: 1,
    signal: input.signal ?? new AbortController().signal,
    answers: () => answers,
    async park(requests) {
      asked = requests;
    },
    async writeProgress() {},
    async appendOutput() {},
    async flushOutput() {},
    loadStep: (name) =>
      steps.has(name) ? { found: true, value: steps.get(name) } : { found: false },
    async saveStep(name, value) {
      steps.set(name, value);
    },
    // Without a task there is nothing durable to wait in: the call simply waits.
    async sleep(_n, ms) {
      await longDelay(ms, input.signal);
      return 0;
    },
  };
  const context = new RunContext(backend);
  const inputRequired = (): InlineOutcome => ({
    kind: 'input_required',
    inputRequests: Object.fromEntries(
      Object.entries(asked ?? {}).filter(([key]) => !(key in answers)),
    ),
  });
  try {
    const result = await tool.handler(input.arguments, context);
    // A handler that caught its question's signal and returned still gets no answer-less end.
    return context.parkedOn === undefined ? { kind: 'result', result } : inputRequired();
  } catch (error) {
    if ((isParkSignal(error) || context.parkedOn !== undefined) && asked !== undefined) {
      return inputRequired();
    }
    throw error;
  } finally {
    context.dispose();
  }
}
