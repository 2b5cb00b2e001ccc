import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { resultText } from '../../runtime/big-result.js';
import { keptApart } from '../../task/kept-apart.js';
import type { StoredText, TaskStore, TaskTextKind } from '../../store/port.js';
import { readRange, sliceText, type TextSlice } from '../../store/text.js';
import type { TaskRecord } from '../../task/record.js';
import type { TaskRuntimePort } from '../tasks/runtime-port.js';
import { ANONYMOUS, principalOf } from '../tasks/principal.js';
import { CALL_SESSION_META, SESSION_META, taskUriParts } from '../tasks/task-uri.js';

/** What the task resources need: the caller's tasks, their texts, and the read limit. */
export interface TaskResourceDeps {
  runtime: () => TaskRuntimePort;
  store: TaskStore;
  /** The most characters one read returns (`--max-read-chars`); a bare read over it says how to read on. */
  maxReadChars: number;
}

/** Default `--max-read-chars`: a bare read of a result returns the whole text up to this. */
export const DEFAULT_MAX_READ_CHARS = 8 * 1024 * 1024;

const MIME: Record<TaskTextKind, string> = {
  result: 'text/plain',
  output: 'text/plain',
  structured: 'application/json',
};

export type Handler = (
  request: { params?: Record<string, unknown> },
  ctx: ServerContext,
) => unknown;

export const RESOURCE_TEMPLATES = (['result', 'output', 'structured'] as const).map((kind) => ({
  uriTemplate: `taskrail://tasks/{taskId}/${kind}{?offset,length}`,
  name: `task-${kind}`,
  title: `A task's ${kind === 'structured' ? 'structured result (JSON)' : kind}`,
  description:
    kind === 'output'
      ? 'What the task printed while it ran, read in pages (offset and length count characters).'
      : `The whole ${kind === 'result' ? 'text' : 'structuredContent'} of a task's result, read in pages.`,
  mimeType: MIME[kind],
}));

export interface ParsedUri {
  taskId: string;
  kind: TaskTextKind;
  offset: number;
  length: number;
  /** No offset or length asked: the whole text (up to the read bound). */
  bare: boolean;
}

function whole(name: string, raw: string | null, fallback: number): number {
  if (raw === null || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `${name} must be a whole number ≥ 0, got '${raw}'`,
    );
  }
  return value;
}

export function parseUri(uri: string, maxChars: number): ParsedUri | undefined {
  const parts = taskUriParts(uri);
  if (parts === undefined) return undefined;
  const query = new URLSearchParams(parts.query);
  const offset = whole('offset', query.get('offset'), 0);
  const length = Math.min(maxChars, whole('length', query.get('length'), maxChars));
  const bare = !query.has('offset') && !query.has('length');
  return { taskId: parts.taskId, kind: parts.kind, offset, length, bare };
}

/** A text held in memory (a result small enough to stay in the record) as the store gives it. */
function inMemory(text: string): StoredText {
  return { chunks: text === '' ? [] : [{ start: 0, text }], end: text.length, dropped: 0 };
}

/** The slice of one of `task`'s texts (owner checks are the caller's), or undefined when gone. */
export async function readSlice(
  deps: Pick<TaskResourceDeps, 'store'>,
  task: TaskRecord,
  { kind, offset, length }: Pick<ParsedUri, 'kind' | 'offset' | 'length'>,
): Promise<TextSlice | undefined> {
  if (kind === 'output' || keptApart(task.result, kind) !== undefined) {
    const range = readRange(offset, length);
    const stored = await deps.store.readText(task.id, kind, range.offset, range.length);
    return stored === undefined ? undefined : sliceText(stored, offset, length);
  }
  if (kind === 'result') return sliceText(inMemory(resultText(task.result ?? {})), offset, length);
  const structured = task.result?.['structuredContent'];
  const json = structured === undefined ? '' : JSON.stringify(structured);
  return sliceText(inMemory(json), offset, length);
}

/** The line in front of a read that starts in output that gave way to the bound. */
function droppedMarker(slice: TextSlice, offset: number): string {
  if (offset >= slice.dropped) return '';
  return `[… ${slice.dropped} earlier characters of this output were dropped to keep it bounded; it continues at offset ${slice.dropped} …]\n`;
}

/**
 * Whether the caller of `ctx` may see `task`: its principal's, and for an anonymous caller on a
 * 2025-11-25 session one that session created (as `tasks/list` rules): anonymous sessions do
 * not see each other's tasks.
 */
export function seenBy(task: TaskRecord, ctx: ServerContext): boolean {
  if (principalOf(ctx) !== ANONYMOUS || ctx.sessionId === undefined) return true;
  const session = ctx.sessionId;
  return task.meta[SESSION_META] === session || task.meta[CALL_SESSION_META] === session;
}

/** The caller's task of `taskId`, or undefined: unknown, another's, another session's. */
export async function callersTask(
  deps: TaskResourceDeps,
  taskId: string,
  ctx: ServerContext,
): Promise<TaskRecord | undefined> {
  const task = await deps.runtime().getTask(taskId, principalOf(ctx));
  return task !== undefined && seenBy(task, ctx) ? task : undefined;
}

/**
 * The line ending a bare read of a text longer than the read bound: hosts that read a URI only
 * as listed get everything up to the bound, and a model that can page is told how to go on.
 */
function readOnLine(parsed: ParsedUri, next: number, total: number, max: number): string {
  const uri = `taskrail://tasks/${encodeURIComponent(parsed.taskId)}/${parsed.kind}`;
  return (
    `\n[This read stops at character ${next} of ${total} (the server's --max-read-chars is ` +
    `${max}). Read on with ${uri}?offset=${next}&length=${max}.]`
  );
}

async function read(deps: TaskResourceDeps, uri: string, ctx: ServerContext) {
  const parsed = parseUri(uri, deps.maxReadChars);
  if (parsed === undefined) return undefined;
  const task = await callersTask(deps, parsed.taskId, ctx);
  // Another principal's task is answered exactly as a task that never existed.
  if (task === undefined) throw new ResourceNotFoundError(uri);
  const slice = await readSlice(deps, task, parsed);
  if (slice === undefined) throw new ResourceNotFoundError(uri);
  const marker = droppedMarker(slice, parsed.offset);
  const text =
    marker === ''
      ? slice.text
      : marker + slice.text.slice(0, Math.max(0, parsed.length - marker.length));
  const shown = text.length - marker.length;
  const next = slice.start + shown;
  const readOn =
    parsed.bare && next < slice.end ? readOnLine(parsed, next, slice.end, deps.maxReadChars) : '';
  return {
    contents: [
      {
        uri,
        mimeType: MIME[parsed.kind],
        text: text + readOn,
        _meta: {
          'taskrail/offset': slice.start,
          'taskrail/nextOffset': next,
          'taskrail/total': slice.end,
          'taskrail/dropped': slice.dropped,
          'taskrail/status': task.status,
        },
      },
    ],
  };
}

/** Another server's resources answered beside taskrail's own (a proxy's upstream). */
export interface PassedThroughResources {
  read: Handler;
  list: Handler;
  templates: Handler;
}

const passedThrough = new WeakMap<McpServer, PassedThroughResources>();

/**
 * Has `handlers` answer the resources that are not taskrail's on `mcp` (call it from a
 * configurer: `registerTaskResources` runs after them and combines both).
 */
export function passResourcesThrough(
  mcp: McpServer,
  handlers: PassedThroughResources,
  { keepExisting = false }: { keepExisting?: boolean } = {},
): void {
  if (keepExisting && passedThrough.has(mcp)) return;
  passedThrough.set(mcp, handlers);
}

/**
 * `resources/read` and `resources/templates/list` of `taskrail://tasks/ID/{result,output,structured}`,
 * owner-only. Handlers registered before (a proxy's upstream resources) answer every other URI,
 * and their templates are listed beside these.
 */
export function registerTaskResources(mcp: McpServer, deps: TaskResourceDeps): void {
  const upstream = passedThrough.get(mcp);
  const upstreamRead = upstream?.read;
  const upstreamTemplates = upstream?.templates;
  const upstreamList = upstream?.list;
  mcp.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  const readHandler: Handler = async (request, ctx) => {
    const uri = String(request.params?.['uri'] ?? '');
    const answer = await read(deps, uri, ctx);
    if (answer !== undefined) return answer;
    if (upstreamRead !== undefined) return upstreamRead(request, ctx);
    throw new ResourceNotFoundError(uri);
  };
  mcp.server.setRequestHandler('resources/read', readHandler as never);
  const templatesHandler: Handler = async (request, ctx) => {
    const theirs = (await upstreamTemplates?.(request, ctx)) as
      { resourceTemplates?: unknown[] } | undefined;
    return { resourceTemplates: [...RESOURCE_TEMPLATES, ...(theirs?.resourceTemplates ?? [])] };
  };
  mcp.server.setRequestHandler('resources/templates/list', templatesHandler as never);
  const listHandler: Handler = async (request, ctx) => {
    const mine = await ownResources(deps, ctx, request.params?.['cursor']);
    if (upstreamList === undefined || mine.nextCursor !== undefined) return mine;
    const theirs = (await upstreamList(request, ctx)) as { resources?: unknown[] } | undefined;
    return { resources: [...mine.resources, ...(theirs?.resources ?? [])] };
  };
  mcp.server.setRequestHandler('resources/list', listHandler as never);
}

const LIST_PAGE = 50;

/** The caller's own tasks' output and shortened results, newest first, one page. */
async function ownResources(
  deps: TaskResourceDeps,
  ctx: ServerContext,
  cursor: unknown,
): Promise<{ resources: object[]; nextCursor?: string }> {
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'cursor must be a string');
  }
  const page = await deps.store.list({
    principal: principalOf(ctx),
    limit: LIST_PAGE,
    ...(cursor === undefined ? {} : { cursor }),
  });
  const resources: object[] = [];
  for (const task of page.tasks.filter((task) => seenBy(task, ctx))) {
    const output = await deps.store.readText(task.id, 'output', 0, 0);
    if (output !== undefined && output.end > 0) {
      resources.push({
        uri: `taskrail://tasks/${task.id}/output`,
        name: `output of task ${task.id} (${task.tool})`,
        mimeType: 'text/plain',
      });
    }
    for (const kind of ['result', 'structured'] as const) {
      const kept = keptApart(task.result, kind);
      if (kept === undefined) continue;
      resources.push({
        uri: `taskrail://tasks/${task.id}/${kind}`,
        name: `${kind === 'result' ? 'result' : 'structured result'} of task ${task.id} (${task.tool})`,
        mimeType: MIME[kind],
        size: kept.bytes,
      });
    }
  }
  return page.nextCursor === undefined ? { resources } : { resources, nextCursor: page.nextCursor };
}
