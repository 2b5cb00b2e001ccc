import { TaskrailClientError } from './errors.js';

/**
 * The largest message the client reads from a server, as one JSON body or one SSE event. A
 * server the host may not trust must not make it buffer without end.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Reads JSON-RPC messages from a `text/event-stream` response body, one per SSE event, until
 * `stop` says the awaited message arrived. Comment lines (`:` keep-alives), other fields and
 * non-JSON data are skipped. Written by hand because the 2026-07-28 stream is request-scoped and
 * we stop reading as soon as our response arrives; it touches each byte a bounded number of
 * times (only the unfinished last line is carried over between chunks), and an event larger
 * than `maxEventBytes` fails the read instead of growing the buffer.
 */
export async function readSseMessages(
  body: ReadableStream<Uint8Array>,
  stop: (message: unknown) => boolean,
  maxEventBytes = MAX_MESSAGE_BYTES,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const lines = new SseLines(maxEventBytes);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const data of lines.push(text, done)) {
        const message = parseData(data);
        if (message !== undefined && stop(message)) return;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The SSE line protocol: CR, LF or CRLF line ends, a blank line ends an event. */
export class SseLines {
  readonly #max: number;
  #partial = '';
  #data: string[] = [];
  #size = 0;
  #afterCr = false;

  constructor(maxEventBytes: number) {
    this.#max = maxEventBytes;
  }

  /** Feeds decoded text; returns the `data` of every event it completed. */
  push(chunk: string, done = false): string[] {
    let text = chunk;
    // A CRLF split across chunks: the LF is the end of the line the CR already ended.
    if (this.#afterCr && text.startsWith('\n')) text = text.slice(1);
    const cut = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    const events: string[] = [];
    if (cut < 0) {
      if (text !== '') this.#afterCr = false;
      this.#partial += text;
      this.#checkSize(this.#partial.length);
    } else {
      this.#afterCr = text[cut] === '\r';
      const complete = this.#partial + text.slice(0, cut);
      this.#partial = text.slice(cut + 1);
      for (const line of complete.split(/\r\n|\r|\n/)) this.#line(line, events);
    }
    if (done) {
      if (this.#partial !== '') this.#line(this.#partial, events);
      this.#partial = '';
      this.#line('', events);
    }
    return events;
  }

  #line(line: string, events: string[]): void {
    if (line === '') {
      if (this.#data.length > 0) events.push(this.#data.join('\n'));
      this.#data = [];
      this.#size = 0;
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.#checkSize(value.length + 1);
    this.#size += value.length + 1;
    this.#data.push(value);
  }

  /** Fails when `more` characters on top of the event's data so far would pass the bound. */
  #checkSize(more: number): void {
    if (more + this.#size <= this.#max) return;
    throw new TaskrailClientError(
      'PROTOCOL',
      `the server sent an SSE event over ${this.#max} bytes; the stream was closed`,
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
  body: ReadableStream<Uint8Array> | null,
  maxBytes = MAX_MESSAGE_BYTES,
): Promise<string> {
  if (body === null) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      bytes += value.byteLength;
      if (bytes > maxBytes) {
        throw new TaskrailClientError(
          'PROTOCOL',
          `the server sent a response over ${maxBytes} bytes; it was not read`,
        );
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
