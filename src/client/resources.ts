import { RPC, type JsonRpcErrorObject } from '../task/errors.js';
import { withoutStructuredNotice } from '../task/kept-apart.js';
import { TaskrailClientError } from './errors.js';
import type { RpcReply } from './rpc-http.js';
import type { CallToolResult } from './wire.js';

type JsonObject = Record<string, unknown>;

/** The resources a taskrail server keeps per task (interface.md "Results of any size"). */
export type TaskResourceKind = 'result' | 'structured' | 'output';

const TASK_URI = /^taskrail:\/\/tasks\/([^/?#]+)\/(result|structured|output)(?:[?#].*)?$/;

/** `taskrail://tasks/ID/KIND`. */
export function taskResourceUri(taskId: string, kind: TaskResourceKind): string {
  return `taskrail://tasks/${encodeURIComponent(taskId)}/${kind}`;
}

/** The task id and kind of a `taskrail://tasks/…` URI, or undefined for any other URI. */
export function parseTaskResourceUri(
  uri: string,
): { taskId: string; kind: TaskResourceKind } | undefined {
  const match = TASK_URI.exec(uri);
  if (match === null) return undefined;
  return { taskId: decodeURIComponent(match[1]!), kind: match[2] as TaskResourceKind };
}

export interface Range {
  /** In UTF-16 code units, as JavaScript strings count them. */
  offset?: number;
  length?: number;
}

/** `uri` with `?offset=&length=` set (any query it had is replaced). */
export function withRange(uri: string, range: Range): string {
  const base = uri.replace(/[?#].*$/, '');
  const query: string[] = [];
  if (range.offset !== undefined) query.push(`offset=${checkCount(range.offset, 'offset')}`);
  if (range.length !== undefined) query.push(`length=${checkCount(range.length, 'length')}`);
  return query.length === 0 ? base : `${base}?${query.join('&')}`;
}

function checkCount(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TaskrailClientError('USAGE', `${name} must be a whole number ≥ 0, got ${value}`);
  }
  return value;
}

/** A `resource_link` block of a shortened result. */
export interface ResourceLink {
  uri: string;
  name?: string;
  mimeType?: string;
  /** In bytes (UTF-8), when the server said. */
  size?: number;
}

/** The links of a result to a task's whole `result` or `structured` resource. */
export function shortenedLinks(result: CallToolResult): ResourceLink[] {
  const links: ResourceLink[] = [];
  for (const block of result.content) {
    const b = block as JsonObject;
    if (b['type'] !== 'resource_link' || typeof b['uri'] !== 'string') continue;
    const kind = parseTaskResourceUri(b['uri'])?.kind;
    if (kind !== 'result' && kind !== 'structured') continue;
    links.push({
      uri: b['uri'],
      ...(typeof b['name'] === 'string' ? { name: b['name'] } : {}),
      ...(typeof b['mimeType'] === 'string' ? { mimeType: b['mimeType'] } : {}),
      ...(typeof b['size'] === 'number' ? { size: b['size'] } : {}),
    });
  }
  return links;
}

/** True when the server handed out a shortened result (its whole text is a resource). */
export function isShortened(result: CallToolResult): boolean {
  return shortenedLinks(result).length > 0;
}

/**
 * One page of a read. A taskrail server also says where the next page starts (past a marker of
 * dropped output, too) and how long the whole text is so far, in the content's `_meta`.
 */
export interface Page {
  text: string;
  nextOffset?: number;
  total?: number;
  /** The task's status when the page was read (all it wrote before then is in the text). */
  status?: string;
}

/** One `resources/read`. */
export type ReadPage = (uri: string, signal?: AbortSignal) => Promise<Page>;

const NEXT_OFFSET_META = 'taskrail/nextOffset';
const TOTAL_META = 'taskrail/total';
const STATUS_META = 'taskrail/status';

/** The page of a `resources/read` reply (its first content), or an error naming the URI. */
export function parsePage(uri: string, reply: RpcReply): Page {
  const text = pageText(uri, reply);
  const contents = (reply as { result: JsonObject }).result['contents'] as JsonObject[];
  const meta = (contents[0]?.['_meta'] ?? {}) as JsonObject;
  const next = meta[NEXT_OFFSET_META];
  const total = meta[TOTAL_META];
  const status = meta[STATUS_META];
  return {
    text,
    ...(Number.isSafeInteger(next) ? { nextOffset: next as number } : {}),
    ...(Number.isSafeInteger(total) ? { total: total as number } : {}),
    ...(typeof status === 'string' ? { status } : {}),
  };
}

/** The text of a `resources/read` reply, or an error naming the URI. */
export function pageText(uri: string, reply: RpcReply): string {
  if (reply.kind === 'error') throw readError(uri, reply.error);
  const contents = reply.result['contents'];
  if (!Array.isArray(contents)) {
    throw new TaskrailClientError('PROTOCOL', `resources/read ${uri}: the reply has no contents`);
  }
  const first = contents[0] as JsonObject | undefined;
  if (first === undefined) return '';
  if (typeof first['text'] === 'string') return first['text'];
  if (typeof first['blob'] === 'string') return Buffer.from(first['blob'], 'base64').toString();
  throw new TaskrailClientError('PROTOCOL', `resources/read ${uri}: content has no text`);
}

function readError(uri: string, error: JsonRpcErrorObject): TaskrailClientError {
  if (error.code === RPC.METHOD_NOT_FOUND) {
    return new TaskrailClientError(
      'PROTOCOL',
      `cannot read ${uri}: the server serves no resources`,
    );
  }
  // Both wires answer a resource the caller may not read exactly as an unknown one.
  return new TaskrailClientError(
    'NOT_FOUND',
    `cannot read ${uri}: error ${error.code}: ${error.message}`,
  );
}

/** Characters asked per page; the server caps a read at its --max-result-chars. */
export const PAGE_CHARS = 1_000_000;
const MAX_PAGES = 100_000;

/**
 * Reads a resource from `offset` to its end, page by page: each page starts where the text
 * read so far ends (a server never splits a surrogate pair, so a page may be a unit short),
 * and the end is an empty page, or `sizeBytes` of UTF-8 read when the link said its size.
 */
export async function readToEnd(
  read: ReadPage,
  uri: string,
  options: { offset?: number; sizeBytes?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const parts: string[] = [];
  let offset = options.offset ?? 0;
  let bytes = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const page = await read(withRange(uri, { offset, length: PAGE_CHARS }), options.signal);
    const text = page.text;
    if (text === '') break;
    parts.push(text);
    offset = page.nextOffset ?? offset + text.length;
    bytes += Buffer.byteLength(text);
    if (page.total !== undefined && offset >= page.total) break;
    // Only a read from the start can be held against the whole size.
    if (options.offset === undefined && options.sizeBytes !== undefined) {
      if (bytes >= options.sizeBytes) break;
    }
  }
  return parts.join('');
}

/**
 * The result with its shortened parts read whole: the text blocks and the links replaced by
 * one text block of the whole text (any other block kept after it), `structuredContent`
 * parsed back from its resource.
 */
export async function wholeResult(
  read: ReadPage,
  result: CallToolResult,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const links = shortenedLinks(result);
  if (links.length === 0) return result;
  let whole: CallToolResult = result;
  for (const link of links) {
    const text = await readToEnd(read, link.uri, {
      ...(link.size === undefined ? {} : { sizeBytes: link.size }),
      ...(signal === undefined ? {} : { signal }),
    });
    whole =
      parseTaskResourceUri(link.uri)?.kind === 'structured'
        ? withStructured(whole, link.uri, parseStructured(link.uri, text))
        : { ...whole, content: [{ type: 'text', text }, ...otherBlocks(whole)] };
  }
  return whole;
}

/** The result with its structuredContent read back: the line and the link that said where, gone. */
function withStructured(
  result: CallToolResult,
  uri: string,
  structuredContent: unknown,
): CallToolResult {
  const content = result.content.flatMap((block) => {
    const b = block as JsonObject;
    if (b['type'] === 'resource_link' && b['uri'] === uri) return [];
    if (b['type'] !== 'text' || typeof b['text'] !== 'string') return [block];
    const text = withoutStructuredNotice(b['text']);
    return text === '' ? [] : [{ ...b, text }];
  });
  return { ...result, content, structuredContent } as CallToolResult;
}

/** The blocks a shortened result keeps besides its text and its links (images, resources…). */
function otherBlocks(result: CallToolResult): unknown[] {
  return result.content.filter((block) => {
    const b = block as JsonObject;
    if (b['type'] === 'text') return false;
    return !(b['type'] === 'resource_link' && parseTaskResourceUri(String(b['uri'])) !== undefined);
  });
}

function parseStructured(uri: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TaskrailClientError('PROTOCOL', `${uri} is not JSON: ${(error as Error).message}`);
  }
}
