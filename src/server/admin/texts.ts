import type { TaskStore, TaskTextKind } from '../../store/port.js';
import { readRange, sliceText } from '../../store/text.js';
import type { TaskRecord } from '../../task/record.js';

/** What one output request of the page carries at most; the page asks again from `end`. */
const OUTPUT_PAGE_CHARS = 64 * 1024;
/** What one store read of a download takes; a download reads until the text's end. */
const DOWNLOAD_READ_CHARS = 1024 * 1024;

function jsonResponse(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}

/**
 * `GET tasks/ID/output?offset=N`: the task's output from `offset` (UTF-16 code units of the
 * whole stream), at most 64 Ki characters: `{ text, start, end, dropped }`, where `start` is
 * where `text` begins (moved up past a dropped front) and `end` the output's length so far.
 */
export async function serveOutput(
  store: TaskStore,
  id: string,
  params: URLSearchParams,
): Promise<Response> {
  const offset = Number(params.get('offset') ?? '0');
  if (!Number.isSafeInteger(offset) || offset < 0) {
    return jsonResponse(400, { error: 'bad_request', message: 'offset must be an integer ≥ 0' });
  }
  const range = readRange(offset, OUTPUT_PAGE_CHARS);
  const stored = await store.readText(id, 'output', range.offset, range.length);
  if (stored === undefined) return jsonResponse(404, { error: 'not_found' });
  return jsonResponse(200, sliceText(stored, offset, OUTPUT_PAGE_CHARS));
}

/** The whole stored text of a kind, read in large slices; '' when none was stored. */
async function wholeText(store: TaskStore, id: string, kind: TaskTextKind): Promise<string> {
  const parts: string[] = [];
  let offset = 0;
  for (;;) {
    const range = readRange(offset, DOWNLOAD_READ_CHARS);
    const stored = await store.readText(id, kind, range.offset, range.length);
    if (stored === undefined) return parts.join('');
    const slice = sliceText(stored, offset, DOWNLOAD_READ_CHARS);
    if (slice.text === '') return parts.join('');
    parts.push(slice.text);
    offset = slice.start + slice.text.length;
  }
}

/** A result that was not shortened: its text blocks joined, or its structuredContent. */
function recordText(task: TaskRecord, kind: 'result' | 'structured'): string | undefined {
  const result = task.result;
  if (result === undefined) return undefined;
  if (kind === 'structured') {
    const structured = result['structuredContent'];
    return structured === undefined ? undefined : JSON.stringify(structured, null, 2);
  }
  const content = Array.isArray(result['content']) ? (result['content'] as unknown[]) : [];
  const texts = content.flatMap((block) => {
    const b = block as { type?: unknown; text?: unknown };
    return b.type === 'text' && typeof b.text === 'string' ? [b.text] : [];
  });
  return texts.join('\n');
}

/**
 * `GET tasks/ID/result` and `tasks/ID/structured`: the whole result as a download — the text
 * kept in the store when the result handed out was shortened, else the record's own.
 */
export async function serveDownload(
  store: TaskStore,
  task: TaskRecord,
  kind: 'result' | 'structured',
): Promise<Response> {
  const stored = await wholeText(store, task.id, kind);
  const text = stored !== '' ? stored : recordText(task, kind);
  if (text === undefined) return jsonResponse(404, { error: 'no_result' });
  const json = kind === 'structured';
  return new Response(text, {
    headers: {
      'content-type': json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
      'content-disposition': `attachment; filename="task-${task.id}-${kind}.${json ? 'json' : 'txt'}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
