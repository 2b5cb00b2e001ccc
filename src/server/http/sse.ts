/**
 * The one Server-Sent Events writer of the server: the frames (task streams, the operator
 * feed) and a web `ReadableStream` body to write them to. A Node response takes the same frames
 * with `res.write`.
 */

/** The headers of a task stream (`subscriptions/listen`). */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  // Proxies such as nginx would otherwise hold notifications back in their buffers.
  'x-accel-buffering': 'no',
});

/**
 * One event: its name and one `data:` line, `retry:` first when given. `data` must hold no raw
 * newline (JSON.stringify never emits one).
 */
export function sseEvent(event: string, data: string, retryMs?: number): string {
  const retry = retryMs === undefined ? '' : `retry: ${retryMs}\n`;
  return `${retry}event: ${event}\ndata: ${data}\n\n`;
}

/** A comment line: readers skip it, proxies see traffic on an idle stream. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/** A web SSE body and the side that writes frames to it. */
export interface WebSse {
  readonly body: ReadableStream<Uint8Array>;
  /** Enqueues one frame: false when the stream is over, or when this frame ended it (below). */
  write(frame: string): boolean;
  /** Ends the body after the frames already written; nothing when already over. */
  close(): void;
  /** Bytes enqueued and not yet read (0 without `maxBufferedBytes`). */
  buffered(): number;
  /** Runs `listener` each time the reader asks for more. */
  onPull(listener: () => void): void;
}

/**
 * A `ReadableStream` of UTF-8 frames. With `maxBufferedBytes`, a reader that lets more than
 * that pile up is cut off: the stream errors and `write` says false. `onCancel` runs when the
 * reader goes away.
 */
export function webSse(onCancel: () => void, maxBufferedBytes?: number): WebSse {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let open = true;
  const pulled: (() => void)[] = [];
  const strategy =
    maxBufferedBytes === undefined
      ? undefined
      : new ByteLengthQueuingStrategy({ highWaterMark: maxBufferedBytes });
  const cancel = (): void => {
    open = false;
    onCancel();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => {
        for (const listener of pulled) listener();
      },
      cancel,
    },
    strategy,
  );
  return {
    body,
    write(frame) {
      if (!open || controller === undefined) return false;
      controller.enqueue(encoder.encode(frame));
      if (maxBufferedBytes === undefined || (controller.desiredSize ?? 0) > 0) return true;
      open = false;
      controller.error(new Error('the event stream reader fell too far behind'));
      return false;
    },
    close() {
      if (!open) return;
      open = false;
      controller?.close();
    },
    buffered: () =>
      maxBufferedBytes === undefined ? 0 : maxBufferedBytes - (controller?.desiredSize ?? 0),
    onPull: (listener) => void pulled.push(listener),
  };
}
