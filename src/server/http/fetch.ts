import type { AuthInfo } from '@modelcontextprotocol/server';
import type { HeaderReader } from '../../protocol/index.js';
import type { AuthReply } from './auth.js';
import { readWebBody, type BodyOutcome } from './body.js';
import type { Exchange, FetchOptions, HttpHandler } from './exchange.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The web-standard adapter (Workers, Bun, Deno, Hono): one Request as the chain's Exchange. */
export class FetchExchange implements Exchange<Response> {
  readonly path: string;
  readonly method: string;
  readonly host: string | undefined;
  readonly preAuth = undefined;
  readonly connection = undefined;
  readonly pipelined = false;
  readonly #request: Request;
  #options: FetchOptions = {};
  /** The body as read here; the Request's own stream is spent then. */
  #text: string | undefined;

  constructor(
    request: Request,
    readonly allowedHosts: ReadonlySet<string> | undefined,
  ) {
    this.#request = request;
    const url = new URL(request.url);
    this.path = url.pathname;
    this.method = request.method;
    this.host = request.headers.get('host') ?? url.host;
  }

  readonly headers: HeaderReader = (name) => this.#request.headers.get(name) ?? undefined;

  async readBody(limit: number): Promise<BodyOutcome> {
    const body = await readWebBody(this.#request, limit);
    if (body.ok) this.#text = body.text;
    return body;
  }

  closed(): AbortSignal {
    return this.#request.signal;
  }

  onClose(listener: () => void): void {
    const signal = this.#request.signal;
    if (signal.aborted) listener();
    else signal.addEventListener('abort', listener, { once: true });
  }

  authenticated(authInfo: AuthInfo | undefined): void {
    this.#options = authInfo === undefined ? {} : { authInfo };
  }

  note(): void {
    // The debug line follows Node responses only.
  }

  json(status: number, body: string): Response {
    return new Response(body === '' ? null : body, {
      status,
      headers: body === '' ? {} : JSON_HEADERS,
    });
  }

  reply(reply: AuthReply): Response {
    return new Response(reply.body, { status: reply.status, headers: reply.headers });
  }

  hand(handler: HttpHandler, parsed?: { body: unknown }): Response | Promise<Response> {
    if (parsed === undefined) return handler.fetch(this.#request, this.#options);
    const replay = new Request(this.#request.url, {
      method: 'POST',
      headers: this.#request.headers,
      body: this.#text ?? '',
    });
    return handler.fetch(replay, { ...this.#options, parsedBody: parsed.body });
  }
}
