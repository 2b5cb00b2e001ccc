import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { parseError, type HeaderReader } from '../protocol/index.js';
import type { AuthReply, CallerAuth } from './http/auth.js';
import { parseJsonBody, readNodeBody, readWebBody, type BodyOutcome } from './http/body.js';
import type { AdminFace } from './admin/index.js';
import { openNodeListen, openWebListen } from './listen/index.js';
import { classify, route } from './wire-2026/route.js';
import {
  errorReply,
  type Answer,
  type Carrier,
  type Reply,
  type Wire2026Deps,
} from './wire-2026/call.js';
import type { Wire2025Sessions } from './wire-2025/sessions.js';
import { hostAllowed, hostHeaderWellFormed, hostsFor } from './http/host-check.js';
import type { RequestLog } from './http/request-log.js';
import { answerWithSdk } from './http/sdk-answer.js';
import { withTroubleStatus } from './tasks/server-trouble.js';

export interface HttpDeps extends Wire2026Deps {
  /** The SDK's handler as built: HTTP 503 for store trouble is applied here, per face. */
  sdk: McpHttpHandler;
  path: string;
  maxBodyBytes: number;
  /** Who the caller is: anonymous, a token file, or OAuth (also serves RFC 9728 metadata). */
  auth: CallerAuth;
  onError: (error: unknown) => void;
  /** 2025-11-25 sessions: `initialize` and requests with `Mcp-Session-Id` go there. */
  wire2025?: Wire2025Sessions | undefined;
  /** The operator routes (`--admin`); absent, they do not exist. */
  admin?: AdminFace | undefined;
  /** Host names accepted in Host/Origin (DNS-rebinding protection); undefined = any. */
  allowedHosts?: ReadonlySet<string> | undefined;
  /** Without `allowedHosts`: a request reaching a loopback address must name the local machine. */
  hostsBySocket?: boolean;
  /** Per-request debug lines (only when the logger takes them). */
  requestLog?: RequestLog | undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Request body too large' },
});
/** Malformed or too deeply nested JSON, refused before any parse on every wire (body.ts). */
const PARSE_FAILED: Reply = errorReply(null, parseError());
const NOT_FOUND = JSON.stringify({ error: 'not_found' });
const FORBIDDEN = JSON.stringify({ error: 'forbidden', message: 'Host or Origin not allowed' });
const BAD_HOST = JSON.stringify({
  error: 'bad_request',
  message: 'The Host header must be a host name or address with an optional port',
});

/** A Host header that is there and not `host[:port]` (an absent one is left to the checks below). */
function badHost(host: string | null | undefined): boolean {
  return host !== undefined && host !== null && !hostHeaderWellFormed(host);
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

function nodeHeaders(req: IncomingMessage): HeaderReader {
  return (name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
}

/** Aborted when the response's connection closes (the caller went away, or it was answered). */
function closeSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed) controller.abort();
  else res.once('close', () => controller.abort());
  return controller.signal;
}

function send(res: ServerResponse, status: number, body: string, close = false): void {
  if (res.headersSent) return void res.end();
  const headers: Record<string, string> = body === '' ? {} : { 'content-type': 'application/json' };
  if (close) headers['connection'] = 'close';
  // A declared length spares chunked framing: head and body leave in one write.
  headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(body);
}

function sendReply(res: ServerResponse, reply: AuthReply): void {
  if (res.headersSent) return void res.end();
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body);
}

function failedBody(outcome: Exclude<BodyOutcome, { ok: true }>): { status: number; body: string } {
  return outcome.reason === 'too-large'
    ? { status: 413, body: TOO_LARGE }
    : { status: 400, body: '' };
}

/** What the POST of a JSON-RPC body gets: an answer made here, or the parsed body for the SDK. */
type Decision = Exclude<Answer, { kind: 'sdk' }> | { kind: 'delegate'; parsed: unknown };

/** Parses the body, then the 2026-07-28 route classifies and answers what is not the SDK's. */
async function decide(deps: HttpDeps, text: string, carrier: Carrier): Promise<Decision> {
  const parsed = parseJsonBody(text);
  if (!parsed.ok) return { kind: 'reply', reply: PARSE_FAILED };
  const classified = classify(parsed.value, carrier.headers);
  if (classified.kind === 'invalid') return { kind: 'reply', reply: classified.reply };
  if (classified.kind === 'sdk') return { kind: 'delegate', parsed: parsed.value };
  const answer = await route(deps, classified.req, carrier);
  return answer.kind === 'sdk' ? { kind: 'delegate', parsed: parsed.value } : answer;
}

function carrierOf(headers: HeaderReader, principal: string, closed: () => AbortSignal): Carrier {
  return {
    headers,
    routingHeaders: true,
    toolsCallFastPath: true,
    refusesInitialize: true,
    principal,
    closed,
  };
}

/** The `node:http` / Express face: fast path first, then the SDK's own Node adapter. */
export function createNodeHandler(
  deps: HttpDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const sdk = withTroubleStatus(deps.sdk.fetch);
  const sdkNode = toNodeHandler(
    { ...deps.sdk, fetch: sdk },
    { maxRequestBodySize: deps.maxBodyBytes },
  );
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = pathOf(req.url);
    if (badHost(req.headers.host)) return send(res, 400, BAD_HOST, true);
    const allowed = hostsFor(deps, req.socket.localAddress);
    if (!hostAllowed(allowed, req.headers.host, req.headers.origin)) {
      return send(res, 403, FORBIDDEN);
    }
    const metadata = deps.auth.wellKnown(path);
    if (metadata !== undefined) return sendReply(res, metadata);
    if (deps.admin?.handles(path)) return deps.admin.node(req, res);
    if (path !== deps.path) return send(res, 404, NOT_FOUND);
    const withAuth = req as IncomingMessage & { auth?: AuthInfo };
    const pending = deps.auth.authenticate(req.headers.authorization, withAuth.auth);
    // Anonymous and token callers are known at once: no await, no turn of the microtask queue.
    const auth = pending instanceof Promise ? await pending : pending;
    if (!auth.ok) return sendReply(res, auth.reply);
    if (auth.authInfo !== undefined) withAuth.auth = auth.authInfo;
    const inSession = deps.wire2025?.claimsSession(req.headers['mcp-session-id']) === true;
    if (req.method !== 'POST') {
      return inSession ? deps.wire2025?.node(withAuth, res) : sdkNode(withAuth, res);
    }
    const body = await readNodeBody(req, deps.maxBodyBytes);
    if (!body.ok) {
      const failed = failedBody(body);
      return send(res, failed.status, failed.body, true);
    }
    deps.requestLog?.note(req, body.text, auth.principal);
    if (inSession) {
      const parsed = parseJsonBody(body.text);
      if (!parsed.ok) return send(res, PARSE_FAILED.status, PARSE_FAILED.body);
      return deps.wire2025?.node(withAuth, res, parsed.value);
    }
    const carrier = carrierOf(nodeHeaders(req), auth.principal, () => closeSignal(res));
    const decision = await decide(deps, body.text, carrier);
    if (decision.kind === 'reply') return send(res, decision.reply.status, decision.reply.body);
    if (decision.kind === 'listen') {
      const { hub, request } = decision;
      return openNodeListen(hub, request, auth.principal, deps.serverInfo, res);
    }
    if (deps.wire2025?.claimsInitialize(decision.parsed))
      return deps.wire2025.node(withAuth, res, decision.parsed);
    return answerWithSdk(deps.sdk.fetch, withAuth, res, decision.parsed);
  };
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      deps.onError(error);
      send(
        res,
        500,
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: 'Internal error' },
        }),
      );
    });
  };
}

function toResponse(reply: Reply): Response {
  return new Response(reply.body === '' ? null : reply.body, {
    status: reply.status,
    headers: reply.body === '' ? {} : JSON_HEADERS,
  });
}

function replyResponse(reply: AuthReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** The request again with the body already read (the SDK reads `parsedBody`, not this). */
function replayOf(request: Request, text: string): Request {
  return new Request(request.url, { method: 'POST', headers: request.headers, body: text });
}

/** The web-standard face (Workers, Bun, Deno, Hono): same routing as the Node face. */
export function createFetchHandler(deps: HttpDeps): (request: Request) => Promise<Response> {
  const sdkFetch = withTroubleStatus(deps.sdk.fetch);
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (badHost(request.headers.get('host'))) {
      return new Response(BAD_HOST, { status: 400, headers: JSON_HEADERS });
    }
    const host = request.headers.get('host') ?? new URL(request.url).host;
    if (!hostAllowed(deps.allowedHosts, host, request.headers.get('origin') ?? undefined)) {
      return new Response(FORBIDDEN, { status: 403, headers: JSON_HEADERS });
    }
    const metadata = deps.auth.wellKnown(path);
    if (metadata !== undefined) return replyResponse(metadata);
    if (deps.admin?.handles(path)) return deps.admin.fetch(request);
    if (path !== deps.path) return new Response(NOT_FOUND, { status: 404, headers: JSON_HEADERS });
    const auth = await deps.auth.authenticate(request.headers.get('authorization') ?? undefined);
    if (!auth.ok) return replyResponse(auth.reply);
    const options = auth.authInfo === undefined ? {} : { authInfo: auth.authInfo };
    const session = deps.wire2025?.claimsSession(request.headers.get('mcp-session-id') ?? undefined)
      ? deps.wire2025
      : undefined;
    if (request.method !== 'POST') {
      return session === undefined ? sdkFetch(request, options) : session.fetch(request, options);
    }
    const body = await readWebBody(request, deps.maxBodyBytes);
    if (!body.ok) return toResponse(failedBody(body));
    if (session !== undefined) {
      const parsed = parseJsonBody(body.text);
      if (!parsed.ok) return toResponse(PARSE_FAILED);
      return session.fetch(replayOf(request, body.text), { ...options, parsedBody: parsed.value });
    }
    const headers: HeaderReader = (name) => request.headers.get(name) ?? undefined;
    const carrier = carrierOf(headers, auth.principal, () => request.signal);
    const decision = await decide(deps, body.text, carrier);
    if (decision.kind === 'reply') return toResponse(decision.reply);
    if (decision.kind === 'listen') {
      return openWebListen(decision.hub, decision.request, auth.principal, deps.serverInfo);
    }
    const replay = replayOf(request, body.text);
    if (deps.wire2025?.claimsInitialize(decision.parsed))
      return deps.wire2025.fetch(replay, { ...options, parsedBody: decision.parsed });
    return sdkFetch(replay, { ...options, parsedBody: decision.parsed });
  };
}
