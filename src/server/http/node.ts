import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { HeaderReader } from '../../protocol/index.js';
import type { AuthReply } from './auth.js';
import { readNodeBody, type BodyOutcome } from './body.js';
import type { Exchange, HttpHandler, NodeRequest } from './exchange.js';
import { hostsFor } from './host-check.js';
import type { RequestLog } from './request-log.js';
import type { SocketGuard } from './sockets.js';

/** What the Node adapter needs besides the request: the Host policy and the debug log. */
export interface NodeExchangeOptions {
  allowedHosts?: ReadonlySet<string> | undefined;
  hostsBySocket?: boolean;
  requestLog?: RequestLog | undefined;
  /** `listen`'s socket bookkeeping: told when a request starts and when its answer is out. */
  sockets?: SocketGuard | undefined;
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

/**
 * The close signal of one keep-alive connection, shared by the requests on it that ask for one.
 * On HTTP/1.1 a response closes unanswered only when its connection does, so the connection's
 * close says what a per-response signal would, without an AbortController and a `close`
 * listener per request (a synchronous `tools/call` asks on every request). It is aborted only
 * when the connection closes while a request that asked is still unanswered: an abort builds a
 * DOMException with a stack, which on a busy server cost more than the answer itself.
 */
class ConnectionClose {
  readonly #controller = new AbortController();
  /** Requests that asked for the signal and are not answered yet. */
  #waiting = 0;

  constructor(socket: Socket) {
    socket.once('close', () => {
      if (this.#waiting > 0) this.#controller.abort();
    });
  }

  ask(): AbortSignal {
    this.#waiting += 1;
    return this.#controller.signal;
  }

  answered(): void {
    this.#waiting -= 1;
  }
}

const connectionCloses = new WeakMap<Socket, ConnectionClose>();

/** The request's own socket (a pipelined request's response has none yet). */
function connectionClose(socket: Socket): ConnectionClose | undefined {
  if (socket.destroyed) return undefined;
  let close = connectionCloses.get(socket);
  if (close === undefined) connectionCloses.set(socket, (close = new ConnectionClose(socket)));
  return close;
}

/**
 * A socket's `address:port`, made once per socket: the same string on every request of a
 * keep-alive connection, so the memos keyed by it (caller-scope.ts) find it by its cached hash.
 */
const connections = new WeakMap<Socket, string>();

function connectionOf(socket: Socket): string | undefined {
  const known = connections.get(socket);
  if (known !== undefined) return known;
  const address = socket.remoteAddress;
  if (address === undefined) return undefined;
  const connection = `${address}:${socket.remotePort}`;
  connections.set(socket, connection);
  return connection;
}

/** What a request gets whose connection is gone already. */
function abortedSignal(): AbortSignal {
  const controller = new AbortController();
  controller.abort();
  return controller.signal;
}

/** A JSON answer, or none when `body` is empty. */
export function sendJson(res: ServerResponse, status: number, body: string, close = false): void {
  if (res.headersSent) return void res.end();
  const headers: Record<string, string> = body === '' ? {} : { 'content-type': 'application/json' };
  if (close) headers['connection'] = 'close';
  // A declared length spares chunked framing: head and body leave in one write.
  headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(body);
}

/** The `node:http` / Express adapter: one request and response as the chain's Exchange. */
export class NodeExchange implements Exchange<void> {
  readonly path: string;
  readonly method: string;
  readonly allowedHosts: ReadonlySet<string> | undefined;
  readonly #req: NodeRequest;
  readonly #res: ServerResponse;
  readonly #log: RequestLog | undefined;
  /** Made only when a handler asks for it (most requests never do). */
  #closed: AbortSignal | undefined;
  /** The connection's close signal, while this request counts as waiting on it. */
  #waitingOn: ConnectionClose | undefined;
  #connection: string | undefined;
  readonly #sockets: SocketGuard | undefined;
  /** What runs once the request is over (`onClose`), besides the socket guard. */
  #onOver: (() => void) | undefined;
  #over = false;
  /** A `close` listener is on the response (it may outlive this turn: SDK, streams, waits). */
  #watching = false;

  constructor(req: NodeRequest, res: ServerResponse, options: NodeExchangeOptions) {
    this.#req = req;
    this.#res = res;
    this.#log = options.requestLog;
    this.#sockets = options.sockets;
    this.#sockets?.requestStarted(req.socket);
    this.path = pathOf(req.url);
    this.method = req.method ?? 'GET';
    this.allowedHosts = hostsFor(options, req.socket.localAddress);
  }

  readonly headers: HeaderReader = (name) => {
    const value = this.#req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };

  get host(): string | undefined {
    return this.#req.headers.host;
  }

  /** Asked several times per request (caller scope, fair bound, route): made once. */
  get connection(): string | undefined {
    return (this.#connection ??= connectionOf(this.#req.socket));
  }

  /** Node gives a pipelined request's response its socket only when those ahead are answered. */
  get pipelined(): boolean {
    return this.#res.socket === null;
  }

  get preAuth(): AuthInfo | undefined {
    return this.#req.auth;
  }

  readBody(limit: number): Promise<BodyOutcome> {
    return readNodeBody(this.#req, limit);
  }

  closed(): AbortSignal {
    if (this.#closed !== undefined) return this.#closed;
    const close = this.#res.writableFinished ? undefined : connectionClose(this.#req.socket);
    if (close === undefined) return (this.#closed = abortedSignal());
    this.#waitingOn = close;
    this.#watchClose();
    return (this.#closed = close.ask());
  }

  /** The answer is going out: a close of the connection from now on is no caller gone away. */
  #answering(): void {
    this.#waitingOn?.answered();
    this.#waitingOn = undefined;
  }

  onClose(listener: () => void): void {
    if (this.#over || this.#res.destroyed) return listener();
    const before = this.#onOver;
    this.#onOver = before === undefined ? listener : () => (before(), listener());
  }

  /**
   * An answer made here ends the request as it is written, so the bookkeeping is settled then,
   * with no `close` listener; a request handed on, or waiting on its connection, is settled by
   * its response's `close`. Whichever comes first counts, once.
   */
  #isOver(): void {
    if (this.#over) return;
    this.#over = true;
    this.#sockets?.requestEnded(this.#req.socket);
    this.#onOver?.();
  }

  #watchClose(): void {
    if (this.#watching) return;
    this.#watching = true;
    this.#res.once('close', () => this.#isOver());
  }

  authenticated(authInfo: AuthInfo | undefined): void {
    if (authInfo !== undefined) this.#req.auth = authInfo;
  }

  note(text: string, principal: string): void {
    this.#log?.note(this.#req, text, principal);
  }

  json(status: number, body: string, close?: boolean): void {
    this.#answering();
    sendJson(this.#res, status, body, close);
    this.#isOver();
  }

  reply(reply: AuthReply): void {
    this.#answering();
    if (this.#res.headersSent) this.#res.end();
    else this.#res.writeHead(reply.status, reply.headers).end(reply.body);
    this.#isOver();
  }

  hand(handler: HttpHandler, parsed?: { body: unknown }): void | Promise<void> {
    this.#watchClose();
    return parsed === undefined
      ? handler.node(this.#req, this.#res)
      : handler.node(this.#req, this.#res, parsed.body);
  }
}
