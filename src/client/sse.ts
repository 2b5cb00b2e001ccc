import { TaskrailClientError } from './errors.js';

/**
 * The largest message the client reads from a server: one JSON body (in bytes) or one SSE event
 * (in characters, once decoded). A server the host may not trust must not make it buffer
 * without end.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Reads JSON-RPC messages from a `text/event-stream` response body, one per SSE event, until
 * `stop` says the awaited message arrived. Comment lines (`:` keep-alives), other fields and
 * non-JSON data are skipped. Our own because the 2026-07-28 stream is request-scoped and we stop
 * reading as soon as our response arrives (the SDK client's transport owns its streams); it is
 * linear in the stream's length, and an event larger than `maxEventChars` fails the read
 * instead of growing the buffer.
 */
export async function readSseMessages(
  body: ByteStream,
  stop: (message: unknown) => boolean,
  maxEventChars = MAX_MESSAGE_BYTES,
): Promise<void> {
  const decoder = new TextDecoder();
  const lines = new SseLines(maxEventChars);
  // Leaving the loop early (the awaited message arrived) cancels the body, as a reader would.
  for await (const chunk of body) {
    for (const data of lines.push(decoder.decode(chunk, { stream: true }))) {
      const message = parseData(data);
      if (message !== undefined && stop(message)) return;
    }
  }
  for (const data of lines.push(decoder.decode(), true)) {
    const message = parseData(data);
    if (message !== undefined && stop(message)) return;
  }
}

/**
 * A response body: a Node `IncomingMessage` as it is (wrapping it in a web stream cost more per
 * message than parsing it) or a fetch `ReadableStream`; both are async iterables of bytes.
 */
export type ByteStream = AsyncIterable<Uint8Array>;

const LF = 10;
const CR = 13;

/**
 * The SSE line protocol: CR, LF or CRLF line ends, a blank line ends an event. Linear: each
 * chunk is scanned once, and an unfinished line is kept as pieces joined once when its end
 * arrives (re-joining or re-splitting a growing buffer on every chunk would be quadratic when
 * one large event comes in many small chunks).
 */
export class SseLines {
  readonly #max: number;
  #pending: string[] = [];
  #pendingSize = 0;
  #data: string[] = [];
  #dataSize = 0;
  #afterCr = false;
  #work = 0;

  constructor(maxEventChars: number) {
    this.#max = maxEventChars;
  }

  /** Characters scanned or copied so far; stays within a small multiple of the input. */
  get work(): number {
    return this.#work;
  }

  /** Feeds decoded text; returns the `data` of every event it completed. */
  push(chunk: string, done = false): string[] {
    const events: string[] = [];
    let start = 0;
    if (this.#afterCr && chunk.length > 0) {
      this.#afterCr = false;
      // A CRLF split across chunks: the LF is the end of the line the CR already ended.
      if (chunk.charCodeAt(0) === LF) start = 1;
    }
    for (let at = start; at < chunk.length; at++) {
      const code = chunk.charCodeAt(at);
      if (code !== LF && code !== CR) continue;
      this.#endLine(chunk.slice(start, at), events);
      if (code === CR) {
        if (at + 1 === chunk.length) this.#afterCr = true;
        else if (chunk.charCodeAt(at + 1) === LF) at++;
      }
      start = at + 1;
    }
    this.#work += chunk.length;
    if (start < chunk.length) {
      const piece = chunk.slice(start);
      this.#pending.push(piece);
      this.#pendingSize += piece.length;
      this.#checkSize(0);
    }
    if (done) {
      if (this.#pendingSize > 0) this.#endLine('', events);
      this.#line('', events);
    }
    return events;
  }

  #endLine(tail: string, events: string[]): void {
    let line = tail;
    if (this.#pending.length > 0) {
      this.#pending.push(tail);
      line = this.#pending.join('');
      this.#pending = [];
      this.#pendingSize = 0;
    }
    this.#work += line.length;
    this.#line(line, events);
  }

  #line(line: string, events: string[]): void {
    if (line === '') {
      if (this.#data.length > 0) {
        events.push(this.#data.join('\n'));
        this.#work += this.#dataSize;
      }
      this.#data = [];
      this.#dataSize = 0;
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.#checkSize(value.length + 1);
    this.#dataSize += value.length + 1;
    this.#data.push(value);
  }

  /** Fails when `more` characters on top of the event so far would pass the bound. */
  #checkSize(more: number): void {
    if (more + this.#pendingSize + this.#dataSize <= this.#max) return;
    throw new TaskrailClientError(
      'PROTOCOL',
      `the server sent an SSE event over ${this.#max} characters; the stream was closed`,
    );
  }
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/** A response body as text, failing once it passes `maxBytes` instead of buffering it all. */
export async function readBoundedText(
  body: ByteStream | null,
  maxBytes = MAX_MESSAGE_BYTES,
): Promise<string> {
  if (body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      throw new TaskrailClientError(
        'PROTOCOL',
        `the server sent a response over ${maxBytes} bytes; it was not read`,
      );
    }
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
