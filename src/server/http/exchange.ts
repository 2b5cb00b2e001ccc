import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { HeaderReader } from '../../protocol/index.js';
import type { AuthReply } from './auth.js';
import type { BodyOutcome } from './body.js';

/** A Node request as handlers after the caller check see it: with its AuthInfo, if any. */
export type NodeRequest = IncomingMessage & { auth?: AuthInfo };

/** What a web handler is given besides the Request: the caller, and the body parsed here. */
export interface FetchOptions {
  authInfo?: AuthInfo;
  parsedBody?: unknown;
}

/**
 * Where the chain can hand a request on, on either runtime: the operator routes, the
 * 2025-11-25 sessions, the SDK, a task stream. `parsedBody` is the body the chain already read
 * and parsed (never undefined then: JSON has no undefined); absent, the body is still unread.
 */
export interface HttpHandler {
  node(req: NodeRequest, res: ServerResponse, parsedBody?: unknown): void | Promise<void>;
  fetch(request: Request, options: FetchOptions): Response | Promise<Response>;
}

/**
 * One HTTP request and its answer as the chain sees it (server/http.ts): what it reads of the
 * request and the answers it can give. `node.ts` and `fetch.ts` make one per request; `Out` is
 * what their runtime takes back (nothing for `node:http`, a Response for fetch).
 */
export interface Exchange<Out> {
  readonly path: string;
  readonly method: string;
  readonly headers: HeaderReader;
  readonly host: string | undefined;
  /** The Host names this request may carry (see host-check.ts); undefined = any. */
  readonly allowedHosts: ReadonlySet<string> | undefined;
  /** The caller's connection (`address:port` on Node; undefined where the runtime hides it). */
  readonly connection: string | undefined;
  /** A request ahead of this one on its connection is still unanswered (HTTP/1.1 pipelining). */
  readonly pipelined: boolean;
  /** AuthInfo a framework put on the request before us (Express middleware). */
  readonly preAuth: AuthInfo | undefined;
  readBody(limit: number): Promise<BodyOutcome>;
  /**
   * Aborted when the caller goes away before the answer (not after a normal answer). On Node
   * it is the connection's, shared by its requests: read it only until this one is answered.
   */
  closed(): AbortSignal;
  /** Runs `listener` once the response is over, answered or not (at once if it is). */
  onClose(listener: () => void): void;
  /** The caller is known: what handlers get as AuthInfo from now on. */
  authenticated(authInfo: AuthInfo | undefined): void;
  /** The request's debug line learns its method, tool and task (Node only). */
  note(text: string, principal: string): void;
  /** A JSON answer made here (no body when `body` is empty); `close` ends the connection. */
  json(status: number, body: string, close?: boolean): Out;
  reply(reply: AuthReply): Out;
  /** To `handler`, with the body read and parsed here when `parsed` is given. */
  hand(handler: HttpHandler, parsed?: { body: unknown }): Out | Promise<Out>;
}
