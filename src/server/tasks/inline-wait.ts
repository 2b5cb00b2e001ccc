import { CALL_SESSION_META } from './task-uri.js';
import {
  inputRequired,
  type CallToolResult,
  type InputRequest as SdkInputRequest,
} from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/index.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import { pendingInputRequests, type JsonObject, type TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { taskCreationInput } from './create-input.js';
import type { TaskRuntimePort } from './runtime-port.js';
import { endedWithoutResult, taskHandle } from './task-handle.js';
import { NO_FIT, resultForHost, type HostFit } from './host-fit.js';
import type { RegisteredTaskTool } from './types.js';

export { DEFAULT_INLINE_WAIT_MS } from './host-profiles.js';

export interface InlineWaitSettings {
  /** How long a call waits for its task before handing back (or, without fallback tools, on). */
  inlineWaitMs: number;
  /** Past the wait, answer with a handle naming the task and `task_result`. */
  fallbackTools: boolean;
  /** The host's profile and how a result is fitted to it (default: as stored, for any host). */
  fit?: HostFit;
  /** The tool declares an outputSchema: its structuredContent is handed out whole. */
  keepsStructured?: boolean;
}

export interface InlineCaller {
  principal: string;
  clientCapabilities: JsonObject;
  /** False on a 2025-11-25 session, where the SDK turns questions into real requests. */
  wire2026: boolean;
  inputResponses: Record<string, JsonObject>;
  /** The 2025-11-25 session the call came on: an anonymous caller's task belongs to it. */
  session?: string | undefined;
}

/**
 * What the wait needs from the request it answers, given by the SDK's tool callback and by the
 * front's synchronous path alike. Questions for the caller are not here: they go back in the
 * result (MRTR), and answers come in `InlineCaller.inputResponses`.
 */
export interface InlineRequest {
  /** Aborted when the caller goes away: the wait ends, the task runs on. */
  readonly signal: AbortSignal;
  /** Tells a caller that sent a `progressToken` of progress; absent when it asked for none. */
  readonly progress?: ((progress: number, message: string) => void) | undefined;
}

/** Questions of the task asked over the request are keyed `TASK_ID/KEY`, so answers find it. */
const KEY_SEPARATOR = '/';

/**
 * A task-capable tool called by a host that did not declare tasks: a durable task behind the
 * scenes, its result inline when it comes within the wait, progress to a caller that sent a
 * `progressToken`, questions over the request when the host can answer them, and past the
 * wait a handle (with fallback tools) instead of the host's time-out.
 */
export async function callBehindTheScenes(
  runtime: TaskRuntimePort,
  tool: RegisteredTaskTool,
  args: JsonObject,
  caller: InlineCaller,
  request: InlineRequest,
  settings: InlineWaitSettings,
): Promise<CallToolResult> {
  const answered = answersForTask(caller.inputResponses);
  if (answered !== undefined) {
    const task = await runtime.answerInput(answered.taskId, caller.principal, answered.responses);
    if (task === undefined) return noSuchTask(answered.taskId);
    return followInline(runtime, task, caller, request, settings);
  }
  let taskArgs = args;
  if (tool.config.beforeTask !== undefined) {
    const outcome = await tool.config.beforeTask(args, caller);
    if (outcome && 'inputRequests' in outcome) return ask(outcome.inputRequests);
    if (outcome && 'arguments' in outcome) taskArgs = outcome.arguments;
  }
  const meta =
    caller.session === undefined ? {} : { meta: { [CALL_SESSION_META]: caller.session } };
  const input = taskCreationInput(tool, taskArgs, caller, { wire: 'local', ...meta });
  const task = await runtime.createTask(input);
  // Nothing has run yet (the run starts after this turn): the created version is the latest.
  return followInline(runtime, task, caller, request, settings, true);
}

/**
 * Waits for the task within the inline wait, as often as needed when there is no handle to
 * give (without fallback tools the host keeps waiting, as a plain call would). `fresh`: `task`
 * was just created and nothing can have changed it yet, so it need not be read again.
 */
export async function followInline(
  runtime: TaskRuntimePort,
  task: TaskRecord,
  caller: InlineCaller,
  request: InlineRequest,
  settings: InlineWaitSettings,
  fresh = false,
): Promise<CallToolResult> {
  const onUpdate = progressNotifier(request);
  const signal = request.signal;
  let latest: TaskRecord | undefined = task;
  let known = fresh;
  for (;;) {
    latest = await runtime.waitForSettled(latest.id, caller.principal, {
      timeoutMs: settings.inlineWaitMs,
      signal,
      ...(onUpdate === undefined ? {} : { onUpdate }),
      ...(known ? { fresh: latest } : {}),
    });
    known = false;
    if (latest === undefined) return noSuchTask(task.id);
    if (isTerminal(latest.status)) return finalResult(latest, settings);
    if (latest.status === 'input_required') return askOrHandOver(latest, caller, settings);
    if (settings.fallbackTools || signal.aborted) return handleFor(latest, settings);
  }
}

function handleFor(task: TaskRecord, settings: InlineWaitSettings): CallToolResult {
  return taskHandle(task, settings.inlineWaitMs, (settings.fit ?? NO_FIT).profile.view);
}

/** A task's final result as its host should see it (fitted to its cut-off). */
export async function finalResult(
  task: TaskRecord,
  settings: Pick<InlineWaitSettings, 'fit' | 'keepsStructured'>,
): Promise<CallToolResult> {
  if (task.status === 'completed') {
    const result = { ...(task.result ?? {}) } as CallToolResult;
    if (!Array.isArray(result.content)) result.content = [];
    return resultForHost(task, result, settings.fit ?? NO_FIT, settings.keepsStructured === true);
  }
  return endedWithoutResult(task);
}

function askOrHandOver(
  task: TaskRecord,
  caller: InlineCaller,
  settings: InlineWaitSettings,
): CallToolResult {
  const pending = pendingInputRequests(task);
  // Asked over the request (MRTR on 2026-07-28, real requests on a 2025 session) only when the
  // host declared it can answer; else the handle, whose task_answer the model can call.
  if (canAnswer(caller.clientCapabilities, Object.values(pending))) {
    const keyed = Object.fromEntries(
      Object.entries(pending).map(([key, request]) => [
        `${task.id}${KEY_SEPARATOR}${key}`,
        request,
      ]),
    );
    return ask(keyed);
  }
  if (settings.fallbackTools) return handleFor(task, settings);
  const handle = handleFor(task, settings);
  return {
    ...handle,
    content: [
      {
        type: 'text',
        text:
          `Task ${task.id} (${task.tool}) needs input this host cannot give (it declares no ` +
          'elicitation). Answer it with a client that supports tasks (`taskrail tasks answer`).',
      },
    ],
    isError: true,
  } as CallToolResult;
}

const CAPABILITY_OF: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

function canAnswer(capabilities: JsonObject, requests: { method: string }[]): boolean {
  return requests.every((request) => {
    const capability = CAPABILITY_OF[request.method];
    return capability !== undefined && isObject(capabilities[capability]);
  });
}

function ask(requests: Record<string, unknown>): CallToolResult {
  return inputRequired({
    inputRequests: requests as Record<string, SdkInputRequest>,
  }) as unknown as CallToolResult;
}

/** Answers keyed `TASK_ID/KEY` belong to a task this server asked about over the request. */
function answersForTask(
  responses: Record<string, JsonObject>,
): { taskId: string; responses: Record<string, JsonObject> } | undefined {
  let taskId: string | undefined;
  const byKey: Record<string, JsonObject> = {};
  for (const [wireKey, response] of Object.entries(responses)) {
    const at = wireKey.indexOf(KEY_SEPARATOR);
    const id = at < 0 ? undefined : wireKey.slice(0, at);
    if (!isPlausibleTaskId(id) || (taskId !== undefined && id !== taskId)) return undefined;
    taskId = id;
    byKey[wireKey.slice(at + 1)] = response;
  }
  return taskId === undefined ? undefined : { taskId, responses: byKey };
}

/** Progress carrying each new status message, when the caller asked for progress. */
function progressNotifier(request: InlineRequest): ((task: TaskRecord) => void) | undefined {
  const progress = request.progress;
  if (progress === undefined) return undefined;
  let count = 0;
  let last: string | undefined;
  return (task) => {
    if (task.statusMessage === undefined || task.statusMessage === last) return;
    last = task.statusMessage;
    count += 1;
    progress(count, task.statusMessage);
  };
}

function noSuchTask(taskId: string): CallToolResult {
  return {
    content: [
      { type: 'text', text: `There is no task '${taskId}' (unknown, expired, or not yours).` },
    ],
    isError: true,
  } as CallToolResult;
}
