import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import { parseError, type HeaderReader } from '../../protocol/index.js';
import type { ListenHub, ListenRequest } from '../listen/index.js';
import { errorReply, type Answer, type Carrier, type Wire2026Deps } from '../wire-2026/call.js';
import { classify, route } from '../wire-2026/route.js';
import type { Wire2025Sessions } from '../wire-2025/sessions.js';
import type { AuthReply, CallerAuth } from './auth.js';
import { parseJsonBody, type BodyOutcome } from './body.js';
import { hostAllowed } from './host-check.js';
import type { RequestLog } from './request-log.js';

/** The operator routes (server/admin), as the chain and its adapters use them. */
export interface AdminRoutes {
  handles(path: string): boolean;
  fetch(request: Request): Promise<Response>;
  node(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface HttpDeps extends Wire2026Deps {
  /** The SDK's handler as built: HTTP 503 for store trouble is applied by each adapter. */
  sdk: McpHttpHandler;
  path: string;
  maxBodyBytes: number;
  /** Who the caller is: anonymous, a token file, or OAuth (also serves RFC 9728 metadata). */
  auth: CallerAuth;
  onError: (error: unknown) => void;
  /** 2025-11-25 sessions: `initialize` and requests with `Mcp-Session-Id` go there. */
  wire2025?: Wire2025Sessions | undefined;
  /** The operator routes (`--admin`); absent, they do not exist. */
  admin?: AdminRoutes | undefined;
  /** Host names accepted in Host/Origin (DNS-rebinding protection); undefined = any. */
  allowedHosts?: ReadonlySet<string> | undefined;
  /** Without `allowedHosts`: a request reaching a loopback address must name the local machine. */
  hostsBySocket?: boolean;
  /** Per-request debug lines (only when the logger takes them). */
  requestLog?: RequestLog | undefined;
}

/**
 * One HTTP request and its answer, as the chain sees it: what it reads of the request, and the
 * answers it can give. `node.ts` and `fetch.ts` make one per request; `Out` is what their
 * runtime expects back (nothing for `node:http`, a Response for fetch).
 */
export interface Exchange<Out> {
  readonly path: string;
  readonly method: string;
  readonly headers: HeaderReader;
  /** The Host names this request may carry (see host-check.ts); undefined = any. */
  readonly allowedHosts: ReadonlySet<string> | undefined;
  readonly host: string | undefined;
  /** AuthInfo a framework put on the request before us (Express middleware). */
  readonly preAuth: AuthInfo | undefined;
  readBody(limit: number): Promise<BodyOutcome>;
  /** Aborted when the caller goes away. */
  closed(): AbortSignal;
  /** The caller is known: what the SDK and 2025-11-25 sessions get as AuthInfo. */
  authenticated(authInfo: AuthInfo | undefined): void;
  note(text: string, principal: string): void;
  /** A JSON answer (or none, for an empty body) made here. */
  json(status: number, body: string, close?: boolean): Out;
  authReply(reply: AuthReply): Out;
  admin(routes: AdminRoutes): Out | Promise<Out>;
  /** To the 2025-11-25 sessions: the request as it came, or with the body parsed here. */
  sessions(sessions: Wire2025Sessions): Out | Promise<Out>;
  sessionsParsed(sessions: Wire2025Sessions, parsed: unknown): Out | Promise<Out>;
  /** To the SDK's handler: the request as it came, or with the body parsed here. */
  sdk(): Out | Promise<Out>;
  sdkParsed(parsed: unknown): Out | Promise<Out>;
  listen(hub: ListenHub, request: ListenRequest, principal: string): Out;
}

const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Request body too large' },
});
const NOT_FOUND = JSON.stringify({ error: 'not_found' });
const FORBIDDEN = JSON.stringify({ error: 'forbidden', message: 'Host or Origin not allowed' });

/**
 * The one ordered chain every HTTP request goes through, on Node and fetch alike: Host check,
 * OAuth metadata, operator routes, the MCP path, the caller, 2025-11-25 sessions, then a POST's
 * body through the 2026-07-28 route; what nothing here answers goes to the SDK.
 */
export async function serveHttp<Out>(deps: HttpDeps, ex: Exchange<Out>): Promise<Out> {
  const origin = ex.headers('origin');
  if (!hostAllowed(ex.allowedHosts, ex.host, origin)) return ex.json(403, FORBIDDEN);
  const metadata = deps.auth.wellKnown(ex.path);
  if (metadata !== undefined) return ex.authReply(metadata);
  if (deps.admin?.handles(ex.path)) return ex.admin(deps.admin);
  if (ex.path !== deps.path) return ex.json(404, NOT_FOUND);
  const pending = deps.auth.authenticate(ex.headers('authorization'), ex.preAuth);
  // Anonymous and token callers are known at once: no await, no turn of the microtask queue.
  const auth = pending instanceof Promise ? await pending : pending;
  if (!auth.ok) return ex.authReply(auth.reply);
  ex.authenticated(auth.authInfo);
  if (deps.wire2025?.claimsSession(ex.headers('mcp-session-id'))) {
    return ex.sessions(deps.wire2025);
  }
  if (ex.method !== 'POST') return ex.sdk();
  const body = await ex.readBody(deps.maxBodyBytes);
  if (!body.ok) {
    return body.reason === 'too-large' ? ex.json(413, TOO_LARGE, true) : ex.json(400, '', true);
  }
  ex.note(body.text, auth.principal);
  const carrier = carrierOf(ex, auth.principal);
  const decision = await decide(deps, body.text, carrier);
  if (decision.kind === 'reply') return ex.json(decision.reply.status, decision.reply.body);
  if (decision.kind === 'listen') return ex.listen(decision.hub, decision.request, auth.principal);
  if (deps.wire2025?.claimsInitialize(decision.parsed)) {
    return ex.sessionsParsed(deps.wire2025, decision.parsed);
  }
  return ex.sdkParsed(decision.parsed);
}

function carrierOf<Out>(ex: Exchange<Out>, principal: string): Carrier {
  return {
    headers: ex.headers,
    routingHeaders: true,
    toolsCallFastPath: true,
    refusesInitialize: true,
    principal,
    closed: () => ex.closed(),
  };
}

/** What a POST's JSON-RPC body gets: an answer made here, or the parsed body for the SDK. */
type Decision = Exclude<Answer, { kind: 'sdk' }> | { kind: 'delegate'; parsed: unknown };

async function decide(deps: HttpDeps, text: string, carrier: Carrier): Promise<Decision> {
  const parsed = parseJsonBody(text);
  if (!parsed.ok) return { kind: 'reply', reply: errorReply(null, parseError()) };
  const classified = classify(parsed.value, carrier.headers);
  if (classified.kind === 'invalid') return { kind: 'reply', reply: classified.reply };
  if (classified.kind === 'sdk') return { kind: 'delegate', parsed: parsed.value };
  const answer = await route(deps, classified.req, carrier);
  return answer.kind === 'sdk' ? { kind: 'delegate', parsed: parsed.value } : answer;
}
