import type { IncomingMessage } from 'node:http';

export type BodyOutcome =
  { ok: true; text: string } | { ok: false; reason: 'too-large' | 'aborted' };

function declaredTooLarge(contentLength: string | null | undefined, limit: number): boolean {
  if (contentLength === undefined || contentLength === null) return false;
  const declared = Number(contentLength);
  return Number.isFinite(declared) && declared > limit;
}

function textOf(chunks: Buffer[]): string {
  // Most bodies arrive in one chunk: decoding it in place spares a copy.
  return chunks.length === 1
    ? (chunks[0] as Buffer).toString('utf8')
    : Buffer.concat(chunks).toString('utf8');
}

/** Reads a Node request body as UTF-8, refusing more than `limit` bytes. */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<BodyOutcome> {
  if (declaredTooLarge(req.headers['content-length'], limit)) {
    req.resume();
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (outcome: BodyOutcome): void => {
      if (done) return;
      done = true;
      resolve(outcome);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish({ ok: true, text: textOf(chunks) }));
    req.on('error', () => finish({ ok: false, reason: 'aborted' }));
    req.on('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/** Reads a web `Request` body as UTF-8, refusing more than `limit` bytes. */
export async function readWebBody(request: Request, limit: number): Promise<BodyOutcome> {
  if (declaredTooLarge(request.headers.get('content-length'), limit))
    return { ok: false, reason: 'too-large' };
  if (request.body === null) return { ok: true, text: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'too-large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'aborted' };
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

/** What a body's shape costs to parse, read in one pass before JSON.parse sees it. */
export type BodyShape = 'ok' | 'too-deep' | 'too-wide';

/**
 * Nesting deeper than `maxDepth` is refused before parsing, so no later recursive walk (schema
 * validation, cloning) can overflow the stack on a hostile body; so are more than `maxValues`
 * values (counted by their separators), since a body of many small objects costs its parse to
 * everyone on the event loop whatever its size in bytes.
 */
export function bodyShape(text: string, maxDepth: number, maxValues: number): BodyShape {
  // Every separator is a character: a body no longer than the limit is only measured for depth.
  if (text.length <= maxValues) return nestingExceeds(text, maxDepth) ? 'too-deep' : 'ok';
  let depth = 0;
  let separators = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) i = closingQuote(text, i + 1);
    else if (c === 44 || c === 58) {
      if (++separators > maxValues) return 'too-wide';
    } else if (c === 123 || c === 91) {
      if (++depth > maxDepth) return 'too-deep';
    } else if (c === 125 || c === 93) depth--;
  }
  return 'ok';
}

export function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) i = closingQuote(text, i + 1);
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/**
 * Where the string whose content starts at `from` ends: its first quote not escaped (after an
 * even run of backslashes), or the end of the text. Found with indexOf, as most of a body's
 * characters are inside strings.
 */
function closingQuote(text: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - backslashes - 1 >= at && text.charCodeAt(quote - backslashes - 1) === 92) {
      backslashes++;
    }
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

const MAX_NESTING = 64;
/**
 * Values (separators) a body may hold: ~10-30 ms of JSON.parse on one core. A 1 MiB string
 * argument is one value; a 4 MiB body of tiny objects is over a million.
 */
export const MAX_BODY_VALUES = 262_144;

export type ParsedBody =
  { ok: true; value: unknown } | { ok: false; reason: 'malformed' | 'too-wide' };

/** A JSON-RPC body parsed, or not: malformed JSON, nested deeper or wider than any request needs. */
export function parseJsonBody(text: string): ParsedBody {
  const shape = bodyShape(text, MAX_NESTING, MAX_BODY_VALUES);
  if (shape === 'too-wide') return { ok: false, reason: 'too-wide' };
  if (shape === 'too-deep') return { ok: false, reason: 'malformed' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
}
