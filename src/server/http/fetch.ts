import type { AuthInfo } from '@modelcontextprotocol/server';
import { openWebListen } from '../listen/index.js';
import { withTroubleStatus } from '../tasks/server-trouble.js';
import type { AuthReply } from './auth.js';
import { readWebBody } from './body.js';
import { serveHttp, type Exchange, type HttpDeps } from './chain.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

function jsonResponse(status: number, body: string): Response {
  return new Response(body === '' ? null : body, {
    status,
    headers: body === '' ? {} : JSON_HEADERS,
  });
}

function replyResponse(reply: AuthReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** The web-standard adapter of the chain (chain.ts) for Workers, Bun, Deno, Hono. */
export function createFetchHandler(deps: HttpDeps): (request: Request) => Promise<Response> {
  const sdkFetch = withTroubleStatus(deps.sdk.fetch);
  const exchange = (request: Request): Exchange<Response> => {
    const url = new URL(request.url);
    let options: { authInfo?: AuthInfo } = {};
    let text = '';
    /** The request again with the body read here (its own stream is spent). */
    const replay = (): Request =>
      new Request(request.url, { method: 'POST', headers: request.headers, body: text });
    return {
      path: url.pathname,
      method: request.method,
      headers: (name) => request.headers.get(name) ?? undefined,
      allowedHosts: deps.allowedHosts,
      host: request.headers.get('host') ?? url.host,
      preAuth: undefined,
      readBody: async (limit) => {
        const body = await readWebBody(request, limit);
        if (body.ok) text = body.text;
        return body;
      },
      closed: () => request.signal,
      authenticated: (authInfo) => {
        options = authInfo === undefined ? {} : { authInfo };
      },
      note: () => undefined,
      json: (status, body) => jsonResponse(status, body),
      authReply: replyResponse,
      admin: (routes) => routes.fetch(request),
      sessions: (sessions) => sessions.fetch(request, options),
      sessionsParsed: (sessions, parsed) =>
        sessions.fetch(replay(), { ...options, parsedBody: parsed }),
      sdk: () => sdkFetch(request, options),
      sdkParsed: (parsed) => sdkFetch(replay(), { ...options, parsedBody: parsed }),
      listen: (hub, request, principal) => openWebListen(hub, request, principal, deps.serverInfo),
    };
  };
  return (request) => serveHttp(deps, exchange(request));
}
