import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 between a client (a worker, a server) and its store, whose link can
 * be cut and healed while the test runs — the way Toxiproxy is built, but in-process.
 *
 * - `pass`: bytes flow both ways.
 * - `blackhole`: sockets stay open (new ones are accepted too) and every byte is dropped, both
 *   ways, so the client waits on replies that never come. A stream that lost bytes cannot be
 *   resumed, so when the link heals (any other mode) those connections are reset; sockets that
 *   carried nothing during the cut survive. With `holedStreams: 'keep'` they are left open
 *   instead, as Toxiproxy does: a client waits for the lost replies until its own time-out.
 * - `reset`: every open connection is reset (RST) and new connections are reset on accept.
 * - `latency`: every chunk is delivered `latencyMs` later, in order.
 *
 * A side that closes its end (FIN) closes the whole pipe: the relay never half-closes.
 */
export type RelayMode = 'pass' | 'blackhole' | 'reset' | 'latency';

export interface TcpRelay {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly mode: RelayMode;
  /** Client connections currently open through the relay. */
  readonly openConnections: number;
  /** Bytes dropped so far (blackhole, reset, or delayed bytes cut off by a blackhole). */
  readonly droppedBytes: number;
  /** `url` with its host and port replaced by the relay's (redis://, postgres://, http://). */
  urlFor(url: string): string;
  /** Switches every open and future connection; `latencyMs` is required for `latency`. */
  setMode(mode: RelayMode, latencyMs?: number): void;
  /** Stops listening and destroys every connection; resolves when the port is free. */
  close(): Promise<void>;
}

export interface RelayTarget {
  host?: string;
  port: number;
}

interface Pipe {
  client: Socket;
  upstream: Socket;
  /** Set when bytes were dropped in a blackhole: the stream has a hole and is reset on heal. */
  lostBytes: boolean;
  timers: Set<NodeJS.Timeout>;
  /** When the last delayed chunk of each direction is due, so chunks never overtake. */
  dueAt: { up: number; down: number };
}

export interface RelayOptions {
  mode?: RelayMode;
  latencyMs?: number;
  /** What the heal does to connections that lost bytes in a blackhole. Default `reset`. */
  holedStreams?: 'reset' | 'keep';
}

export async function startTcpRelay(
  target: RelayTarget,
  initial: RelayOptions = {},
): Promise<TcpRelay> {
  const targetHost = target.host ?? '127.0.0.1';
  const pipes = new Set<Pipe>();
  let mode: RelayMode = 'pass';
  let latencyMs = 0;
  let closed = false;
  let droppedBytes = 0;

  const setMode = (next: RelayMode, nextLatencyMs?: number): void => {
    if (next === 'latency') {
      if (nextLatencyMs === undefined || !(nextLatencyMs >= 0)) {
        throw new Error(
          'tcp relay: latency mode needs latencyMs >= 0, e.g. setMode("latency", 200)',
        );
      }
      latencyMs = nextLatencyMs;
    }
    const leavingBlackhole =
      mode === 'blackhole' && next !== 'blackhole' && initial.holedStreams !== 'keep';
    mode = next;
    for (const pipe of [...pipes]) {
      if (next === 'reset' || (leavingBlackhole && pipe.lostBytes)) resetPipe(pipe);
      else if (next === 'blackhole') dropDelayed(pipe);
    }
  };

  const dropDelayed = (pipe: Pipe): void => {
    if (pipe.timers.size > 0) pipe.lostBytes = true;
    for (const timer of pipe.timers) clearTimeout(timer);
    pipe.timers.clear();
  };

  const resetPipe = (pipe: Pipe): void => {
    dropDelayed(pipe);
    pipes.delete(pipe);
    pipe.client.resetAndDestroy();
    pipe.upstream.resetAndDestroy();
  };

  const forward = (pipe: Pipe, direction: 'up' | 'down', chunk: Buffer): void => {
    const to = direction === 'up' ? pipe.upstream : pipe.client;
    if (mode === 'blackhole' || mode === 'reset') {
      pipe.lostBytes = true;
      droppedBytes += chunk.length;
      return;
    }
    const now = Date.now();
    const delay = mode === 'latency' ? latencyMs : 0;
    const due = Math.max(now + delay, pipe.dueAt[direction]);
    if (due <= now) {
      to.write(chunk);
      return;
    }
    pipe.dueAt[direction] = due;
    const timer = setTimeout(() => {
      pipe.timers.delete(timer);
      if (!to.destroyed) to.write(chunk);
    }, due - now);
    pipe.timers.add(timer);
  };

  const accept = (client: Socket): void => {
    if (mode === 'reset' || closed) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: targetHost, port: target.port, allowHalfOpen: true });
    const pipe: Pipe = {
      client,
      upstream,
      lostBytes: false,
      timers: new Set(),
      dueAt: { up: 0, down: 0 },
    };
    pipes.add(pipe);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (chunk: Buffer) => forward(pipe, 'up', chunk));
    upstream.on('data', (chunk: Buffer) => forward(pipe, 'down', chunk));
    const end = (): void => {
      if (!pipes.delete(pipe)) return;
      dropDelayed(pipe);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('end', end);
      socket.on('error', end);
      socket.on('close', end);
    }
  };

  // Half-open sockets, so that a FIN from either side tears the pipe down at once instead of
  // Node answering it with a shutdown of its own: libuv cannot reset a socket whose shutdown is
  // under way (uv_tcp_close_reset answers EINVAL) and Node then never closes that handle, so a
  // test process whose relay healed or reset such a pipe spun at exit, waiting for it.
  const server: Server = createServer({ allowHalfOpen: true }, accept);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  if (initial.mode) setMode(initial.mode, initial.latencyMs);

  return {
    host: '127.0.0.1',
    port,
    get mode() {
      return mode;
    },
    get openConnections() {
      return pipes.size;
    },
    get droppedBytes() {
      return droppedBytes;
    },
    urlFor(url: string): string {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    setMode,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const pipe of [...pipes]) {
        dropDelayed(pipe);
        pipes.delete(pipe);
        pipe.client.destroy();
        pipe.upstream.destroy();
      }
      await stopped;
    },
  };
}
