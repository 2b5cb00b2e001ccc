import type { ServerResponse } from 'node:http';

/** Where one listen stream's SSE frames go: a Node response or a web `ReadableStream`. */
export interface SseSink {
  /** Sends one frame. False when the reader is gone or fell too far behind (the sink is closed). */
  write(frame: string): boolean;
  /** Ends the response after the frames already written. */
  end(): void;
  /** Runs once when the stream is over, whoever ended it (us, the client, a broken socket). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  // Proxies such as nginx would otherwise hold notifications back in their buffers.
  'x-accel-buffering': 'no',
});

/** One JSON-RPC message as one SSE event (JSON.stringify never emits a raw newline). */
export function messageFrame(json: string): string {
  return `event: message\ndata: ${json}\n\n`;
}

export const KEEP_ALIVE_FRAME = ': keep-alive\n\n';

class CloseSignal {
  #closed = false;
  readonly #listeners: (() => void)[] = [];

  get closed(): boolean {
    return this.#closed;
  }

  add(listener: () => void): void {
    if (this.#closed) listener();
    else this.#listeners.push(listener);
  }

  fire(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#listeners.splice(0)) listener();
  }
}

export function nodeSink(res: ServerResponse, maxBufferedBytes: number): SseSink {
  const close = new CloseSignal();
  res.on('close', () => close.fire());
  res.writeHead(200, SSE_HEADERS);
  res.socket?.setNoDelay(true);
  res.flushHeaders();
  return {
    get closed() {
      return close.closed;
    },
    write(frame) {
      if (close.closed) return false;
      res.write(frame);
      if (res.writableLength <= maxBufferedBytes) return true;
      res.destroy();
      close.fire();
      return false;
    },
    end() {
      if (!close.closed) res.end();
    },
    onClose: (listener) => close.add(listener),
  };
}

export function webSink(maxBufferedBytes: number): { sink: SseSink; response: Response } {
  const close = new CloseSignal();
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      cancel: () => close.fire(),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBufferedBytes }),
  );
  const sink: SseSink = {
    get closed() {
      return close.closed;
    },
    write(frame) {
      if (close.closed || controller === undefined) return false;
      controller.enqueue(encoder.encode(frame));
      if ((controller.desiredSize ?? 0) > 0) return true;
      controller.error(new Error('the listen stream reader fell too far behind'));
      close.fire();
      return false;
    },
    end() {
      if (close.closed) return;
      controller?.close();
      close.fire();
    },
    onClose: (listener) => close.add(listener),
  };
  return { sink, response: new Response(body, { status: 200, headers: SSE_HEADERS }) };
}
