import type { ServerResponse } from 'node:http';
import { SSE_HEADERS, sseComment, sseEvent, webSse } from '../http/sse.js';

/**
 * Where one listen stream's messages go: SSE frames on a Node response or a web
 * `ReadableStream` (HTTP), or JSON-RPC messages on a stdio connection.
 */
export interface ListenSink {
  /** Sends one JSON-RPC message. False when the reader is gone or fell too far behind (closed). */
  send(message: object): boolean;
  /** A keep-alive where the transport has one (an SSE comment); false when the sink is closed. */
  keepAlive(): boolean;
  /**
   * Sends what was written once the promise callbacks queued so far have run, not on the next
   * tick: Node's `res.write` holds its bytes until then, behind whatever else the turn still
   * runs (for a task's final state, the finished run's bookkeeping). Frames written by the
   * callbacks before it (the other tasks of one commit) leave in the same write.
   */
  flush(): void;
  /** Ends the response after the frames already written. */
  end(): void;
  /** Runs once when the stream is over, whoever ended it (us, the client, a broken socket). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
  /**
   * The reader is behind: more than LISTEN_HIGH_WATER_BYTES wait unsent. Task notifications are
   * then held back (the subscription sends each task's latest state once it catches up).
   */
  readonly backedUp: boolean;
  /** Runs `listener` whenever the reader has caught up again (never on a message transport). */
  onDrain(listener: () => void): void;
}

/** Unsent bytes past which a stream's task notifications are coalesced instead of queued. */
export const LISTEN_HIGH_WATER_BYTES = 64 * 1024;

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

/** The ListenSink of SSE frames written by `write` (false: the stream is closed). */
function sseSink(
  close: CloseSignal,
  write: (frame: string) => boolean,
  end: () => void,
  pressure: { backedUp: () => boolean; onDrain: (listener: () => void) => void },
  flush: () => void = () => undefined,
): ListenSink {
  return {
    get closed() {
      return close.closed;
    },
    get backedUp() {
      return pressure.backedUp();
    },
    onDrain: pressure.onDrain,
    // One JSON-RPC message as one SSE event (JSON.stringify never emits a raw newline).
    send: (message) => write(sseEvent('message', JSON.stringify(message))),
    keepAlive: () => write(sseComment('keep-alive')),
    flush,
    end,
    onClose: (listener) => close.add(listener),
  };
}

export function nodeSink(res: ServerResponse, maxBufferedBytes: number): ListenSink {
  const close = new CloseSignal();
  res.on('close', () => close.fire());
  res.writeHead(200, SSE_HEADERS);
  res.socket?.setNoDelay(true);
  // The headers are not flushed on their own: they leave with the acknowledgement (written as
  // soon as the tasks are read), one write and one wake-up of the client fewer per stream.
  return sseSink(
    close,
    (frame) => {
      if (close.closed) return false;
      res.write(frame);
      if (res.writableLength <= maxBufferedBytes) return true;
      res.destroy();
      close.fire();
      return false;
    },
    () => {
      if (!close.closed) res.end();
    },
    {
      backedUp: () => res.writableLength > Math.min(LISTEN_HIGH_WATER_BYTES, maxBufferedBytes),
      onDrain: (listener) => void res.on('drain', listener),
    },
    uncorkSoon(res),
  );
}

/**
 * Node corks the socket at a response's write and uncorks it on the next tick; uncorking it in a
 * microtask writes sooner (Node's own uncork then finds nothing to do).
 */
function uncorkSoon(res: ServerResponse): () => void {
  let queued = false;
  const uncork = (): void => {
    queued = false;
    const socket = res.socket;
    while (socket !== null && socket.writableCorked > 0) socket.uncork();
  };
  return () => {
    if (queued) return;
    queued = true;
    queueMicrotask(uncork);
  };
}

export function webSink(maxBufferedBytes: number): { sink: ListenSink; response: Response } {
  const close = new CloseSignal();
  const sse = webSse(() => close.fire(), maxBufferedBytes);
  const write = (frame: string): boolean => {
    if (sse.write(frame)) return true;
    close.fire();
    return false;
  };
  const end = (): void => {
    sse.close();
    close.fire();
  };
  const soft = Math.min(LISTEN_HIGH_WATER_BYTES, maxBufferedBytes);
  const sink = sseSink(close, write, end, {
    backedUp: () => sse.buffered() > soft,
    onDrain: (listener) => sse.onPull(() => (sse.buffered() <= soft ? listener() : undefined)),
  });
  return { sink, response: new Response(sse.body, { status: 200, headers: SSE_HEADERS }) };
}

/**
 * A listen stream on a message transport (stdio): each message is handed to `send` whole; there
 * is no keep-alive frame. `close()` ends it from the outside (the client's
 * `notifications/cancelled`, the connection closing) without a final message.
 */
export function messageSink(send: (message: object) => void): ListenSink & { close(): void } {
  const close = new CloseSignal();
  return {
    get closed() {
      return close.closed;
    },
    send(message) {
      if (close.closed) return false;
      send(message);
      return true;
    },
    keepAlive: () => !close.closed,
    backedUp: false,
    onDrain: () => undefined,
    flush: () => undefined,
    end: () => close.fire(),
    close: () => close.fire(),
    onClose: (listener) => close.add(listener),
  };
}
