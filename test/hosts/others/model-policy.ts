import type { Exchange, Json, Script, Step } from '../vendors/scripted-model.js';

/** How a host names taskrail's tools to its model, and what it offers for reading resources. */
export interface HostProfile {
  /** `codex`, `gemini-cli`, `copilot`. */
  name: string;
  /** The model-visible name of a taskrail tool. */
  tool(name: string): string;
  /** A step the model must take before it can call a tool (Codex's tool_search), once. */
  preamble?(history: Exchange[]): Step | undefined;
  /** The host's own resource tool, as a call; undefined: the host offers none (task_result). */
  readResource?(uri: string): Step;
  /** A host's own way to follow a call it moved to the background (Copilot's read_agent). */
  followUp?(seen: string): Step | undefined;
  /** Whether the host offered the resource tool this turn. */
  offersRead?(offered: string[]): boolean;
  /** Characters the model asks for per page (the host shows at most so much whole). */
  pageChars: number;
  /** The host reads only a URI exactly as listed (Gemini CLI): the bare URI, the whole text. */
  readsListedUriOnly?: boolean;
}

export interface Notice {
  total: number;
  shown: number;
  uri: string;
}

const NOTICE = /This result was shortened: it has (\d+) characters and only the first (\d+) follow/;
const RESULT_URI = /taskrail:\/\/tasks\/[A-Za-z0-9_-]+\/result/;

export function noticeIn(seen: string): Notice | undefined {
  const match = NOTICE.exec(seen);
  const uri = RESULT_URI.exec(seen)?.[0];
  if (match === null || uri === undefined) return undefined;
  return { total: Number(match[1]), shown: Number(match[2]), uri };
}

/**
 * The task id of a handle the model was given and the tool it says to call next: the JSON
 * (`"next":"task_result"`, hosts that show `structuredContent`) or the words of the text
 * (`Call task_result with {"taskId":…}`, `Answer it with task_answer {"taskId":…}`).
 */
export function handleIn(seen: string): { taskId: string; next: string } | undefined {
  const next = /"next":\s*"(task_result|task_status|task_answer)"/.exec(seen)?.[1];
  const taskId = /"taskId":\s*"([^"]+)"/.exec(seen)?.[1];
  if (next !== undefined && taskId !== undefined) return { taskId, next };
  const said = /\b(task_result|task_answer) (?:with )?\{\s*"taskId":\s*"([^"]+)"/.exec(seen);
  return said === null ? undefined : { next: said[1] as string, taskId: said[2] as string };
}

/**
 * The text of one page as the model saw it: a resource read's `contents[].text` (Codex,
 * Claude Code hand the model the JSON of the read), a `task_result` page after its first line,
 * or the bare text (wrappers such as Gemini's `<untrusted_context>` removed).
 */
export function pageTextOf(seen: string, viaTaskResult: boolean): string {
  try {
    const parsed = JSON.parse(seen) as { contents?: Json[] };
    if (Array.isArray(parsed.contents))
      return parsed.contents.map((c) => String(c['text'] ?? '')).join('');
  } catch {
    // Not JSON: the text itself.
  }
  const bare = seen.replace(/^<untrusted_context>\n/, '');
  return viaTaskResult ? bare.slice(bare.indexOf('\n') + 1) : bare;
}

/** The model's progress through a shortened result: the notice, the pages read so far. */
export interface Reading {
  notice: Notice;
  /** Text collected so far (the first part, when the model saw it whole, then each page). */
  text: string;
  /** Characters of the first part the model took from the shortened result itself. */
  firstPart: number;
  reads: number;
}

/**
 * What a model that follows taskrail's words does: call the tool; while a handle comes back,
 * call `task_result`; when a notice says the result is shortened, read the rest page by page
 * (the host's resource tool, else `task_result` with `offset`/`length`) until it has all of it.
 */
export function followTheResult(
  profile: HostProfile,
  first: { tool: string; args: Json },
  onReading?: (reading: Reading) => void,
): Script {
  return (history, offered) => {
    const pre = profile.preamble?.(history);
    if (pre !== undefined) return pre;
    const calls = history.filter((exchange) => exchange.tool !== 'tool_search');
    if (calls.length === 0) return { tool: profile.tool(first.tool), args: first.args };
    if (calls.length > 60) return { text: 'Giving up after 60 calls.' };
    const reading = readingOf(profile, calls);
    if (reading !== undefined) {
      onReading?.(reading);
      if (reading.text.length >= reading.notice.total) return { text: 'I have the whole result.' };
      return nextPage(profile, reading, offered);
    }
    const lastSeen = calls.at(-1)?.seen ?? '';
    const hostWay = profile.followUp?.(lastSeen);
    if (hostWay !== undefined) return hostWay;
    const handle = handleIn(lastSeen);
    if (handle?.next === 'task_result') {
      return { tool: profile.tool('task_result'), args: { taskId: handle.taskId } };
    }
    const canAnswer = offered.includes(profile.tool('task_answer'));
    if (handle !== undefined && handle.next !== 'task_result' && canAnswer) {
      const content = { proceed: true };
      return { tool: profile.tool('task_answer'), args: { taskId: handle.taskId, content } };
    }
    return { text: 'Done.' };
  };
}

function nextPage(profile: HostProfile, reading: Reading, offered: string[]): Step {
  const offset = reading.text.length;
  const length = Math.min(profile.pageChars, reading.notice.total - offset);
  if (profile.readResource !== undefined && (profile.offersRead?.(offered) ?? true)) {
    if (profile.readsListedUriOnly === true) return profile.readResource(reading.notice.uri);
    return profile.readResource(`${reading.notice.uri}?offset=${offset}&length=${length}`);
  }
  const taskId = /tasks\/([^/]+)\/result/.exec(reading.notice.uri)?.[1] ?? '';
  return { tool: profile.tool('task_result'), args: { taskId, offset, length } };
}

function readingOf(profile: HostProfile, calls: Exchange[]): Reading | undefined {
  const at = calls.findIndex((exchange) => noticeIn(exchange.seen) !== undefined);
  if (at < 0) return undefined;
  const seen = calls[at]?.seen ?? '';
  const notice = noticeIn(seen) as Notice;
  const afterNotice = seen.slice(seen.indexOf(']\n', seen.search(NOTICE)) + 2);
  // The first part counts only when the model saw it whole (a host may cut or spill it).
  let text = afterNotice.length >= notice.shown ? afterNotice.slice(0, notice.shown) : '';
  const firstPart = text.length;
  let reads = 0;
  for (const page of calls.slice(at + 1)) {
    const viaTaskResult = page.tool === profile.tool('task_result');
    const { offset, length } = pageAsked(page.args);
    const wanted = Math.min(length, notice.total - offset);
    text = text.slice(0, offset) + pageTextOf(page.seen, viaTaskResult).slice(0, wanted);
    reads += 1;
  }
  return { notice, text, firstPart, reads };
}

/** The offset and length a read asked for: `task_result` arguments or the URI's query. */
function pageAsked(args: Json): { offset: number; length: number } {
  const uri = typeof args['uri'] === 'string' ? args['uri'] : '';
  const query = new URLSearchParams(uri.includes('?') ? uri.slice(uri.indexOf('?')) : '');
  const offset = Number(args['offset'] ?? query.get('offset') ?? 0);
  const length = Number(args['length'] ?? query.get('length') ?? Infinity);
  return { offset, length };
}
