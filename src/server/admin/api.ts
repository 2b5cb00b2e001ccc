import type { TaskRuntime } from '../../runtime/runtime.js';
import type { TaskStore } from '../../store/port.js';
import { TaskrailError } from '../../task/errors.js';
import { isPlausibleTaskId } from '../../task/ids.js';
import { pendingInputRequests, type JsonObject } from '../../task/record.js';
import { isTerminal } from '../../task/status.js';
import type { AdminFeed } from './feed.js';
import type { TaskJournal } from './journal.js';
import { feedStream } from './sse.js';
import { parseJsonBody } from '../http/body.js';
import type { AdminOperator } from './tokens.js';
import { isTaskOutcome } from '../../task/outcome.js';
import { listByOutcome, type OutcomeListQuery } from './outcomes.js';
import { detailOf, summaryOf } from './views.js';
import { isWaitKind } from '../../task/run-meta.js';
import { serveDownload, serveOutput } from './texts.js';

export interface ApiDeps {
  store: TaskStore;
  runtime: () => TaskRuntime;
  journal: TaskJournal;
  feed: AdminFeed;
  pollMs: number;
  closing: AbortSignal;
}

const MAX_BODY = 1024 * 1024;

export function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}

const notFound = (): Response => json(404, { error: 'not_found' });

/** `/dashboard/api/*`, for an authenticated operator. */
export async function serveApi(
  deps: ApiDeps,
  request: Request,
  operator: AdminOperator,
  route: string,
): Promise<Response> {
  const get = request.method === 'GET';
  if (route === 'me' && get) return json(200, operator);
  if (route === 'events' && get) {
    return feedStream(deps.feed, AbortSignal.any([request.signal, deps.closing]), deps.pollMs);
  }
  if (route === 'tasks' && get) return listTasks(deps, new URL(request.url).searchParams);
  const match = /^tasks\/([^/]+)(?:\/(cancel|answer|output|result|structured))?$/.exec(route);
  const id = match?.[1];
  if (id === undefined || !isPlausibleTaskId(id)) return notFound();
  const action = match?.[2];
  if (action === undefined && get) return showTask(deps, id);
  if (action === 'output' && get)
    return serveOutput(deps.store, id, new URL(request.url).searchParams);
  if ((action === 'result' || action === 'structured') && get) {
    const task = await deps.store.get(id);
    return task === undefined ? notFound() : serveDownload(deps.store, task, action);
  }
  if (request.method !== 'POST') return json(405, { error: 'method_not_allowed' });
  if (action === 'cancel') return cancelTask(deps, id, operator);
  if (action === 'answer') return answerTask(deps, request, id, operator);
  return notFound();
}

function listQuery(params: URLSearchParams): OutcomeListQuery | string {
  const outcomes = (params.get('status') ?? '').split(',').filter((s) => s !== '');
  if (!outcomes.every(isTaskOutcome)) return 'unknown status';
  const waiting = (params.get('waiting') ?? '').split(',').filter((s) => s !== '');
  if (!waiting.every(isWaitKind))
    return 'waiting must be backoff, sleep or permit (comma-separated)';
  const limit = Number(params.get('limit') ?? '200');
  if (!Number.isInteger(limit) || limit < 1) return 'limit must be a positive integer';
  const query: OutcomeListQuery = { limit: Math.min(limit, 1000) };
  if (outcomes.length > 0) query.outcomes = outcomes;
  if (waiting.length > 0) query.waiting = waiting;
  for (const key of ['tool', 'principal', 'cursor'] as const) {
    const value = params.get(key);
    if (value !== null && value !== '') query[key] = value;
  }
  return query;
}

/** `status` filters by outcome: `completed` and `tool_error` (an `isError` result) apart. */
async function listTasks(deps: ApiDeps, params: URLSearchParams): Promise<Response> {
  const query = listQuery(params);
  if (typeof query === 'string') return json(400, { error: 'bad_request', message: query });
  let page: Awaited<ReturnType<typeof listByOutcome>>;
  try {
    page = await listByOutcome(deps.store, query);
  } catch (error) {
    // A cursor the store never gave out (the store says so before any query runs).
    if (!(error instanceof TaskrailError && error.code === 'INVALID_ARGUMENT')) throw error;
    return json(400, { error: 'bad_request', message: error.message });
  }
  const now = Date.now();
  return json(200, {
    tasks: page.tasks.map((task) => summaryOf(task, now)),
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
  });
}

async function showTask(deps: ApiDeps, id: string): Promise<Response> {
  const task = await deps.store.get(id);
  if (task === undefined) return notFound();
  return json(200, detailOf(task, deps.journal.timeline(task)));
}

async function cancelTask(deps: ApiDeps, id: string, operator: AdminOperator): Promise<Response> {
  if (!operator.canCancel) {
    return json(403, { error: 'forbidden', message: 'this admin token may only read' });
  }
  const task = await deps.store.get(id);
  if (task === undefined) return notFound();
  if (isTerminal(task.status)) return json(409, { error: 'terminal', task: summaryOf(task) });
  const message = `Cancelled by operator ${operator.name}.`;
  const after = await deps.runtime().cancelTask(id, task.principal, message);
  if (after === undefined) return notFound();
  return json(after.status === 'cancelled' ? 200 : 409, { task: summaryOf(after) });
}

async function readAnswers(request: Request): Promise<Record<string, JsonObject> | undefined> {
  const text = await request.text();
  if (text.length > MAX_BODY) return undefined;
  const parsed = parseJsonBody(text);
  if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object') return undefined;
  const raw = (parsed.value as { inputResponses?: unknown }).inputResponses;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const entries = Object.entries(raw as Record<string, unknown>);
  if (!entries.every(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v))) {
    return undefined;
  }
  return Object.fromEntries(entries) as Record<string, JsonObject>;
}

async function answerTask(
  deps: ApiDeps,
  request: Request,
  id: string,
  operator: AdminOperator,
): Promise<Response> {
  if (!operator.canAnswer) {
    return json(403, { error: 'forbidden', message: 'this admin token may not answer input' });
  }
  const responses = await readAnswers(request);
  if (responses === undefined) {
    return json(400, { error: 'bad_request', message: 'inputResponses must map keys to objects' });
  }
  const task = await deps.store.get(id);
  if (task === undefined) return notFound();
  const pending = Object.keys(pendingInputRequests(task));
  const accepted = Object.keys(responses).filter((key) => pending.includes(key));
  if (task.status !== 'input_required' || accepted.length === 0) {
    return json(409, { error: 'nothing_pending', task: summaryOf(task) });
  }
  deps.journal.creditAnswer(id, operator.name);
  const after = await deps
    .runtime()
    .answerInput(id, task.principal, responses)
    .catch((error) => {
      deps.journal.uncreditAnswer(id);
      throw error;
    });
  if (after === undefined) {
    deps.journal.uncreditAnswer(id);
    return notFound();
  }
  return json(200, { accepted, task: summaryOf(after) });
}
