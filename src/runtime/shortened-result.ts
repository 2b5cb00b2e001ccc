import { splitsPair } from '../store/text.js';
import {
  KEPT_APART_META,
  STRUCTURED_KEPT_APART_META,
  STRUCTURED_NOTICE_START,
  type KeptApart,
  type KeptApartKind,
} from '../task/kept-apart.js';
import type { JsonObject } from '../task/record.js';
import type { ToolResult } from './tool.js';

/** The parts of a result kept whole in the task's texts, as the tool returned them. */
export interface PartsKeptApart {
  /** The whole text of the text blocks (joined by a newline), when it was kept apart. */
  text?: string;
  /** The JSON of `structuredContent`, when it was kept apart. */
  structuredJson?: string;
}

export function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  return (
    typeof block === 'object' &&
    block !== null &&
    (block as { type?: unknown }).type === 'text' &&
    typeof (block as { text?: unknown }).text === 'string'
  );
}

function sizeOf(text: string): KeptApart {
  return { chars: text.length, bytes: Buffer.byteLength(text, 'utf8') };
}

function linkTo(taskId: string, kind: KeptApartKind, bytes: number): JsonObject {
  const structured = kind === 'structured';
  return {
    type: 'resource_link',
    uri: `taskrail://tasks/${taskId}/${kind}`,
    name: `${structured ? 'structured result' : 'result'} of task ${taskId}`,
    mimeType: structured ? 'application/json' : 'text/plain',
    size: bytes,
  };
}

/**
 * How to read on, both ways: a host with a resource tool reads the URI (Codex, Claude Code,
 * Gemini CLI); one without (Copilot CLI) calls the fallback `task_result` with an offset.
 */
function pagingHint(taskId: string, kind: KeptApartKind, offset: number, maxChars: number): string {
  const part = kind === 'structured' ? ',"part":"structured"' : '';
  return (
    `with the MCP resource taskrail://tasks/${taskId}/${kind}?offset=${offset}&length=${maxChars} ` +
    `or the tool task_result {"taskId":"${taskId}","offset":${offset}${part}}.]\n`
  );
}

function structuredNotice(taskId: string, json: string, maxChars: number): string {
  return (
    `${STRUCTURED_NOTICE_START} its JSON has ${json.length} characters. ` +
    `Read it ${pagingHint(taskId, 'structured', 0, maxChars)}`
  );
}

/** What a moved structuredContent adds to the result handed out: its notice line and link. */
export function structuredOverhead(taskId: string, json: string, maxChars: number): number {
  const link = linkTo(taskId, 'structured', sizeOf(json).bytes);
  return structuredNotice(taskId, json, maxChars).length + JSON.stringify(link).length;
}

/** The text block saying the text was shortened, with as much of the text as fits in `room`. */
function shortenedText(taskId: string, whole: string, room: number, maxChars: number): string {
  const notice = (shown: number) =>
    `[This result was shortened: it has ${whole.length} characters and only the first ${shown} ` +
    `follow. Read the rest ${pagingHint(taskId, 'result', shown, maxChars)}`;
  let shown = Math.max(0, Math.min(whole.length, room - notice(whole.length).length));
  if (splitsPair(whole, shown)) shown -= 1;
  return notice(shown) + whole.slice(0, shown);
}

/**
 * The result as handed out: a line per part kept apart telling the model how to read it, the
 * first part of the text (or the text blocks as they were, when only structuredContent moved),
 * the other blocks, then a `resource_link` per part; text and links together stay within
 * `maxChars` characters. A moved structuredContent is left out; `_meta` records each part's size.
 */
export function shortened(
  result: ToolResult,
  taskId: string,
  parts: PartsKeptApart,
  maxChars: number,
): ToolResult {
  const content = result.content ?? [];
  const others = content.filter((block) => !isTextBlock(block));
  const links: JsonObject[] = [];
  const kept: JsonObject = {};
  let lead = '';
  if (parts.structuredJson !== undefined) {
    kept[STRUCTURED_KEPT_APART_META] = { ...sizeOf(parts.structuredJson) };
    links.push(linkTo(taskId, 'structured', sizeOf(parts.structuredJson).bytes));
    lead = structuredNotice(taskId, parts.structuredJson, maxChars);
  }
  let texts: unknown[];
  if (parts.text === undefined) {
    texts = [{ type: 'text', text: lead }, ...content.filter(isTextBlock)];
  } else {
    kept[KEPT_APART_META] = { ...sizeOf(parts.text) };
    links.unshift(linkTo(taskId, 'result', sizeOf(parts.text).bytes));
    const room = maxChars - lead.length - links.reduce((n, l) => n + JSON.stringify(l).length, 0);
    texts = [{ type: 'text', text: lead + shortenedText(taskId, parts.text, room, maxChars) }];
  }
  const meta =
    typeof result['_meta'] === 'object' && result['_meta'] !== null ? result['_meta'] : {};
  const handedOut: ToolResult = {
    ...result,
    content: [...texts, ...others, ...links],
    _meta: { ...(meta as JsonObject), ...kept },
  };
  if (parts.structuredJson !== undefined) delete handedOut['structuredContent'];
  return handedOut;
}
