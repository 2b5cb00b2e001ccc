import { ProtocolError, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import {
  alreadyTerminalMessage,
  encodeTaskPayload2025,
  encodeTask2025,
  type WireTask2025,
} from '../../protocol/wire-2025.js';
import { isExpired, type JsonObject, type TaskRecord } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import { ANONYMOUS, principalOf } from '../tasks/principal.js';
import { SESSION_META, sessionOf, type Wire2025Deps } from './deps.js';
import { runTaskOperation } from '../tasks/operations.js';
import { invalidParams, protocolErrorOf, rethrowing, taskNotFound } from './rpc.js';
import { InputForwarder } from './input-2025.js';
import { describeRefusal, fairKeyOf } from '../tasks/fair-bound.js';
import { SERVER_ERROR } from '../../protocol/constants.js';

const PAGE_SIZE = 50;
/** Store pages read per `tasks/list` call when the session filter skips most rows. */
const MAX_SCANNED_PAGES = 20;

type Params = { taskId?: unknown; cursor?: unknown };
type Request = { params?: Params };
type Handler = (request: Request, ctx: ServerContext) => Promise<JsonObject>;

/** `tasks/get` or `tasks/cancel` through the shared implementation (tasks/operations.ts). */
async function operate(
  deps: Wire2025Deps,
  method: 'tasks/get' | 'tasks/cancel',
  params: unknown,
  ctx: ServerContext,
): Promise<TaskRecord> {
  const runtime = deps.instanceDeps.runtime();
  const outcome = await runTaskOperation(runtime, method, params, principalOf(ctx));
  if ('error' in outcome) throw protocolErrorOf(outcome.error);
  return outcome.task;
}

function lookup(deps: Wire2025Deps, request: Request, ctx: ServerContext): Promise<TaskRecord> {
  return operate(deps, 'tasks/get', request.params, ctx);
}

function flat(task: TaskRecord): JsonObject {
  return { ...encodeTask2025(task) };
}

async function getTask(
  deps: Wire2025Deps,
  request: Request,
  ctx: ServerContext,
): Promise<JsonObject> {
  return flat(await lookup(deps, request, ctx));
}

/** A place among the waiting `tasks/result` requests, or the caller's refusal (-32000). */
function holdWaitingResult(deps: Wire2025Deps, ctx: ServerContext, principal: string) {
  const bound = deps.waitingResults;
  if (bound === undefined) return undefined;
  const ticket = bound.tryTake(fairKeyOf(principal, sessionOf(deps, ctx)));
  if (typeof ticket !== 'string') return ticket;
  const refused = describeRefusal('waiting tasks/result requests', ticket, bound);
  throw new ProtocolError(SERVER_ERROR.LIMIT_REACHED, refused.message, {
    ...refused.data,
    retryAfterMs: refused.retryAfterSeconds * 1000,
  });
}

/** Blocks until the task is terminal, forwarding its questions to the client meanwhile. */
async function taskResult(deps: Wire2025Deps, request: Request, ctx: ServerContext) {
  const first = await lookup(deps, request, ctx);
  const principal = principalOf(ctx);
  if (isTerminal(first.status)) return resultPayload(first);
  const ticket = holdWaitingResult(deps, ctx, principal);
  const forwarder = new InputForwarder(deps, ctx, principal);
  const unsubscribe = deps.runtime.events.onTaskUpdated(first.id, ({ task }) =>
    forwarder.offer(task),
  );
  // Store events are local; a task parked by another process is noticed by this re-read.
  const timer = setInterval(
    () => {
      deps.runtime.getTask(first.id, principal).then(
        (task) => forwarder.offer(task),
        () => undefined,
      );
    },
    Math.max(100, first.pollIntervalMs),
  );
  try {
    forwarder.offer(first);
    const last = await deps.runtime.waitForTerminal(first.id, principal, ctx.mcpReq.signal);
    if (last === undefined) throw taskNotFound();
    return resultPayload(last);
  } finally {
    ticket?.give();
    clearInterval(timer);
    unsubscribe();
    forwarder.release();
  }
}

function resultPayload(task: TaskRecord): JsonObject {
  const payload = encodeTaskPayload2025(task);
  if (!payload.ok)
    throw new ProtocolError(payload.error.code, payload.error.message, payload.error.data);
  return payload.result;
}

async function cancelTask(deps: Wire2025Deps, request: Request, ctx: ServerContext) {
  const task = await lookup(deps, request, ctx);
  // 2025-11-25 refuses to cancel a finished task (2026-07-28 acknowledges it).
  if (isTerminal(task.status)) throw invalidParams(alreadyTerminalMessage(task));
  const after = await operate(deps, 'tasks/cancel', { taskId: task.id }, ctx);
  if (after.status !== 'cancelled') throw invalidParams(alreadyTerminalMessage(after));
  return flat(after);
}

/**
 * The caller's tasks, newest first. An anonymous caller owns only the tasks its session
 * created (docs/auth.md; on stdio the one session every stdio process shares, see
 * stdio-session.ts); an authenticated one sees every task of its principal, whichever wire
 * created it.
 */
async function listTasks(deps: Wire2025Deps, request: Request, ctx: ServerContext) {
  const cursorParam = request.params?.cursor;
  if (cursorParam !== undefined && typeof cursorParam !== 'string') {
    throw invalidParams('cursor must be a string');
  }
  const principal = principalOf(ctx);
  const session = sessionOf(deps, ctx);
  const mine = (task: TaskRecord): boolean =>
    !isExpired(task, Date.now()) &&
    (principal !== ANONYMOUS || (session !== undefined && task.meta[SESSION_META] === session));
  const tasks: WireTask2025[] = [];
  let cursor = cursorParam;
  for (let page = 0; page < MAX_SCANNED_PAGES && tasks.length < PAGE_SIZE; page++) {
    const limit = PAGE_SIZE - tasks.length;
    const found = await deps.runtime.store.list({
      principal,
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    tasks.push(...found.tasks.filter(mine).map(encodeTask2025));
    cursor = found.nextCursor;
    if (cursor === undefined) break;
  }
  return cursor === undefined ? { tasks } : { tasks, nextCursor: cursor };
}

/** `tasks/get|result|list|cancel` of the 2025-11-25 wire, on one session's SDK server. */
export function registerTaskMethods2025(mcp: McpServer, deps: Wire2025Deps): void {
  const methods: Record<string, Handler> = {
    'tasks/get': (request, ctx) => getTask(deps, request, ctx),
    'tasks/result': (request, ctx) => taskResult(deps, request, ctx),
    'tasks/list': (request, ctx) => listTasks(deps, request, ctx),
    'tasks/cancel': (request, ctx) => cancelTask(deps, request, ctx),
  };
  const server = mcp.server as unknown as {
    setRequestHandler(method: string, handler: Handler): void;
  };
  for (const [method, handler] of Object.entries(methods)) {
    server.setRequestHandler(method, (request, ctx) =>
      rethrowing(() => handler(request, ctx), deps.instanceDeps.trouble, ctx.mcpReq.signal),
    );
  }
}
