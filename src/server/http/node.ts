import type { ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { HeaderReader } from '../../protocol/index.js';
import type { AuthReply } from './auth.js';
import { readNodeBody, type BodyOutcome } from './body.js';
import type { Exchange, HttpHandler, NodeRequest } from './exchange.js';
import { hostsFor } from './host-check.js';
import type { RequestLog } from './request-log.js';

/** What the Node adapter needs besides the request: the Host policy and the debug log. */
export interface NodeExchangeOptions {
  allowedHosts?: ReadonlySet<string> | undefined;
  hostsBySocket?: boolean;
  requestLog?: RequestLog | undefined;
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

/**
 * Aborted when the response closes before it was answered (the caller went away). Never
 * aborted after a normal answer: an abort builds a DOMException with a stack, which on a busy
 * server cost more than the answer itself, and nothing waits on a signal once answered.
 */
function closeSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed && !res.writableFinished) controller.abort();
  else {
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
  }
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
  #connection: string | undefined;

  constructor(req: NodeRequest, res: ServerResponse, options: NodeExchangeOptions) {
    this.#req = req;
    this.#res = res;
    this.#log = options.requestLog;
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
    if (this.#connection !== undefined) return this.#connection;
    const socket = this.#req.socket;
    const address = socket.remoteAddress;
    if (address === undefined) return undefined;
    return (this.#connection = `${address}:${socket.remotePort}`);
  }

  get preAuth(): AuthInfo | undefined {
    return this.#req.auth;
  }

  readBody(limit: number): Promise<BodyOutcome> {
    return readNodeBody(this.#req, limit);
  }

  closed(): AbortSignal {
    return (this.#closed ??= closeSignal(this.#res));
  }

  onClose(listener: () => void): void {
    if (this.#res.destroyed) listener();
    else this.#res.once('close', listener);
  }

  authenticated(authInfo: AuthInfo | undefined): void {
    if (authInfo !== undefined) this.#req.auth = authInfo;
  }

  note(text: string, principal: string): void {
    this.#log?.note(this.#req, text, principal);
  }

  json(status: number, body: string, close?: boolean): void {
    sendJson(this.#res, status, body, close);
  }

  reply(reply: AuthReply): void {
    if (this.#res.headersSent) return void this.#res.end();
    this.#res.writeHead(reply.status, reply.headers);
    this.#res.end(reply.body);
  }

  hand(handler: HttpHandler, parsed?: { body: unknown }): void | Promise<void> {
    return parsed === undefined
      ? handler.node(this.#req, this.#res)
      : handler.node(this.#req, this.#res, parsed.body);
  }
}
