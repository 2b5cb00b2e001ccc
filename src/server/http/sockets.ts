import type { Socket } from 'node:net';

/** Above this share of `--max-connections`, idle sockets are closed, longest idle first. */
export const IDLE_REAP_SHARE = 0.8;

/** A flood is told in the log once a minute, with how many refusals the last line did not show. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

export interface SocketGuardOptions {
  /** Sockets open at once (Node refuses more at accept). */
  maxConnections: number;
  /** Sockets open at once from one remote address. */
  maxPerAddress: number;
  /** Told of a refusal at most once a minute (a warning naming the option); `more`: refusals since. */
  onRefused?: (address: string, open: number, more: number) => void;
}

interface SocketState {
  address: string;
  /** Requests on this socket whose response is not over yet. */
  inFlight: number;
}

/**
 * The sockets of one listening server, before anyone is known: at most `maxPerAddress` from
 * one remote address (more are closed at once), and once the total passes 80% of the cap the
 * sockets with no request in flight are closed, longest idle first, so a fresh caller always
 * finds a place. Idle here means a keep-alive socket between requests or one that has not sent
 * a request yet; a socket serving a request (an open stream included) or still writing its
 * answer is never closed here. The requests' exchanges say when each starts and ends (node.ts).
 */
export class SocketGuard {
  readonly #maxPerAddress: number;
  readonly #reapAbove: number;
  readonly #onRefused: SocketGuardOptions['onRefused'];
  readonly #states = new Map<Socket, SocketState>();
  readonly #perAddress = new Map<string, number>();
  /** Sockets with no request in flight, longest idle first (a Set keeps insertion order). */
  readonly #idle = new Set<Socket>();
  #toldAt = -Infinity;
  #untold = 0;

  constructor(options: SocketGuardOptions) {
    this.#maxPerAddress = options.maxPerAddress;
    this.#reapAbove = Math.max(1, Math.floor(options.maxConnections * IDLE_REAP_SHARE));
    this.#onRefused = options.onRefused;
  }

  get open(): number {
    return this.#states.size;
  }

  /** The server's `connection` listener. */
  readonly admit = (socket: Socket): void => {
    const address = socket.remoteAddress ?? '';
    const fromAddress = this.#perAddress.get(address) ?? 0;
    if (fromAddress >= this.#maxPerAddress) return this.#refuse(socket, address, fromAddress);
    this.#perAddress.set(address, fromAddress + 1);
    this.#states.set(socket, { address, inFlight: 0 });
    this.#idle.add(socket);
    socket.once('close', () => this.#forget(socket));
    this.#reapIdle(socket);
  };

  /** Marks `socket` busy with one more request, until `requestEnded` says its answer is out. */
  requestStarted(socket: Socket): void {
    const state = this.#states.get(socket);
    if (state === undefined) return;
    if (state.inFlight++ === 0) this.#idle.delete(socket);
  }

  /** The answer to one of `socket`'s requests is out (or the request is gone with its socket). */
  requestEnded(socket: Socket): void {
    const state = this.#states.get(socket);
    if (state === undefined || --state.inFlight > 0) return;
    // Re-inserted at the end: now the most recently idle.
    this.#idle.add(socket);
  }

  #refuse(socket: Socket, address: string, open: number): void {
    socket.destroy();
    const now = Date.now();
    if (now - this.#toldAt < REFUSAL_LOG_INTERVAL_MS) return void (this.#untold += 1);
    this.#onRefused?.(address, open, this.#untold);
    this.#toldAt = now;
    this.#untold = 0;
  }

  /** Above the threshold, closes the longest-idle sockets (never `spare`, the one just let in). */
  #reapIdle(spare: Socket): void {
    for (const socket of this.#idle) {
      if (this.#states.size <= this.#reapAbove) return;
      // An answer still in Node's buffer (a slow reader) is not dropped: that socket waits.
      if (socket === spare || socket.writableLength > 0) continue;
      this.#forget(socket);
      socket.destroy();
    }
  }

  #forget(socket: Socket): void {
    const state = this.#states.get(socket);
    if (state === undefined) return;
    this.#states.delete(socket);
    this.#idle.delete(socket);
    const left = (this.#perAddress.get(state.address) ?? 1) - 1;
    if (left > 0) return void this.#perAddress.set(state.address, left);
    this.#perAddress.delete(state.address);
  }
}
