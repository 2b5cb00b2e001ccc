import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { HEADER, parseError } from '../protocol/index.js';
import { SERVER_ERROR } from '../protocol/constants.js';
import { RPC } from '../task/errors.js';
import type { CallerAuth } from './http/auth.js';
import { MAX_BODY_VALUES, parseJsonBody, type ParsedBody } from './http/body.js';
import type { Exchange, HttpHandler } from './http/exchange.js';
import { FetchExchange } from './http/fetch.js';
import { hostVerdict } from './http/host-check.js';
import { NodeExchange } from './http/node.js';
import { lazySdkNodeHandler } from './http/sdk-node.js';
import type { RequestLog } from './http/request-log.js';
import type { SocketGuard } from './http/sockets.js';
import { answerWithSdk } from './http/sdk-answer.js';
import type { AdminFace } from './admin/index.js';
import {
  openNodeListen,
  openWebListen,
  type ListenHub,
  type ListenRequest,
} from './listen/index.js';
import { classify, route } from './wire-2026/route.js';
import {
  errorReply,
  type Answer,
  type Carrier,
  type Reply,
  type Wire2026Deps,
} from './wire-2026/call.js';
import type { Wire2025Sessions } from './wire-2025/sessions.js';
import { describeRefusal, fairKeyOf, type FairBound } from './tasks/fair-bound.js';
import { anonymousConnectionInfo } from './tasks/caller-scope.js';
import { ANONYMOUS } from './tasks/principal.js';
import type { AuthReply } from './http/auth.js';
import { refusalOf, withRefusalStatus } from './tasks/queue-full.js';

export interface HttpDeps extends Wire2026Deps {
  /** The SDK's handler as built: HTTP 503 for store trouble is applied here. */
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
  /** Connections busy with a request, shared fairly (set by `listen`, with `maxConnections`). */
  connections?: FairBound | undefined;
  /** `listen`'s per-address cap and idle-socket closing (it learns which sockets are busy). */
  sockets?: SocketGuard | undefined;
}

/** Refused before the body is read whole or parsed (its Content-Length, or the bytes so far). */
function tooLarge(limit: number): string {
  const message =
    `Request body too large: this server accepts at most ${limit} bytes ` +
    '(raise it with taskrail serve --max-body, or maxBodyBytes of createTaskServer)';
  return JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: RPC.INVALID_REQUEST, message },
  });
}
/** Malformed or too deeply nested JSON, refused before any parse on every wire (body.ts). */
const PARSE_FAILED: Reply = errorReply(null, parseError());
/** More values than any request needs, refused (413) before JSON.parse: its cost is everyone's. */
const TOO_WIDE: Reply = {
  status: 413,
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: RPC.INVALID_REQUEST,
      message:
        `Request body too wide: more than ${MAX_BODY_VALUES} JSON values. ` +
        'Send fewer, larger values (a long string is one value) or split the request.',
    },
  }),
};

function unparsed(parsed: Exclude<ParsedBody, { ok: true }>): Reply {
  return parsed.reason === 'too-wide' ? TOO_WIDE : PARSE_FAILED;
}
const NOT_FOUND = JSON.stringify({ error: 'not_found' });
const FORBIDDEN = JSON.stringify({ error: 'forbidden', message: 'Host or Origin not allowed' });
const BAD_HOST = JSON.stringify({
  error: 'bad_request',
  message: 'The Host header must be a host name or address with an optional port',
});
const INTERNAL_ERROR = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: RPC.INTERNAL_ERROR, message: 'Internal error' },
});

/**
 * The SDK's handler on both runtimes. A body read here goes to its web handler with the parsed
 * body (Node: `answerWithSdk`, which applies the 503 itself); an unread one to its own Node
 * adapter.
 */
function sdkHandler(deps: HttpDeps): HttpHandler {
  const fetch = withRefusalStatus(deps.sdk.fetch);
  const node = lazySdkNodeHandler({ ...deps.sdk, fetch }, deps.maxBodyBytes);
  return {
    node: (req, res, parsedBody) =>
      parsedBody === undefined
        ? node(req, res)
        : answerWithSdk(deps.sdk.fetch, req, res, parsedBody),
    fetch,
  };
}

/** An accepted task stream, as SSE on whichever runtime the request came. */
function listenHandler(
  deps: HttpDeps,
  hub: ListenHub,
  request: ListenRequest,
  principal: string,
): HttpHandler {
  return {
    node: (_req, res) => openNodeListen(hub, request, principal, deps.serverInfo, res),
    fetch: () => openWebListen(hub, request, principal, deps.serverInfo),
  };
}

/** What a POST's JSON-RPC body gets: an answer made here, or the parsed body for the SDK. */
type Decision = Exclude<Answer, { kind: 'sdk' }> | { kind: 'delegate'; parsed: unknown };

/** Parses the body, then the 2026-07-28 route classifies and answers what is not the SDK's. */
async function decide(deps: HttpDeps, text: string, carrier: Carrier): Promise<Decision> {
  const parsed = parseJsonBody(text);
  if (!parsed.ok) return { kind: 'reply', reply: unparsed(parsed) };
  const classified = classify(parsed.value, carrier.headers);
  if (classified.kind === 'invalid') return { kind: 'reply', reply: classified.reply };
  if (classified.kind === 'sdk') return { kind: 'delegate', parsed: parsed.value };
  const answer = await route(deps, classified.req, carrier);
  return answer.kind === 'sdk' ? { kind: 'delegate', parsed: parsed.value } : answer;
}

/**
 * Counts the request's connection against its caller until the response ends; the answer for
 * a caller past its share, if it is. An anonymous caller is keyed by its own connection, and
 * the sockets cap at accept bounds how many there are, so its one request at a time is not
 * counted (that count could refuse nothing). Requests pipelined behind it are: without them
 * one connection could hold any number of waiting requests.
 */
function holdConnection<Out>(
  deps: HttpDeps,
  ex: Exchange<Out>,
  principal: string,
): AuthReply | undefined {
  const bound = deps.connections;
  const alone = principal === ANONYMOUS && !ex.pipelined;
  if (bound === undefined || alone || ex.connection === undefined) {
    return undefined;
  }
  const ticket = bound.tryTake(fairKeyOf(principal, ex.connection));
  if (typeof ticket !== 'string') {
    ex.onClose(ticket.give);
    return undefined;
  }
  const refused = describeRefusal('connections', ticket, bound);
  return {
    status: refused.httpStatus,
    headers: {
      'content-type': 'application/json',
      'retry-after': String(refused.retryAfterSeconds),
      connection: 'close',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: SERVER_ERROR.LIMIT_REACHED, message: refused.message, data: refused.data },
    }),
  };
}

/** An anonymous caller's connection, for the SDK path (tasks it makes count against it). */
function anonymousInfo(principal: string, connection: string | undefined) {
  if (principal !== ANONYMOUS || connection === undefined) return undefined;
  return anonymousConnectionInfo(connection);
}

function carrierOf<Out>(ex: Exchange<Out>, principal: string): Carrier {
  return {
    headers: ex.headers,
    routingHeaders: true,
    toolsCallFastPath: true,
    refusesInitialize: true,
    principal,
    connection: ex.connection,
    closed: () => ex.closed(),
  };
}

/**
 * The one ordered chain every HTTP request goes through, on Node and fetch alike: Host check,
 * OAuth metadata, operator routes, the MCP path, the caller, 2025-11-25 sessions, then a POST's
 * body through the 2026-07-28 route; what nothing here answers goes to the SDK.
 */
async function serveHttp<Out>(deps: HttpDeps, sdk: HttpHandler, ex: Exchange<Out>): Promise<Out> {
  const host = hostVerdict(ex.allowedHosts, ex.headers('host'), ex.host, ex.headers('origin'));
  if (host === 'malformed') return ex.json(400, BAD_HOST, true);
  if (host === 'forbidden') return ex.json(403, FORBIDDEN);
  const metadata = deps.auth.wellKnown(ex.path);
  if (metadata !== undefined) return ex.reply(metadata);
  if (deps.admin?.handles(ex.path)) return ex.hand(deps.admin);
  if (ex.path !== deps.path) return ex.json(404, NOT_FOUND);
  const pending = deps.auth.authenticate(ex.headers('authorization'), ex.preAuth);
  // Anonymous and token callers are known at once: no await, no turn of the microtask queue.
  const auth = pending instanceof Promise ? await pending : pending;
  if (!auth.ok) return ex.reply(auth.reply);
  ex.authenticated(auth.authInfo ?? anonymousInfo(auth.principal, ex.connection));
  const refused = holdConnection(deps, ex, auth.principal);
  if (refused !== undefined) return ex.reply(refused);
  const session = deps.wire2025?.claimsSession(ex.headers(HEADER.sessionId))
    ? deps.wire2025
    : undefined;
  if (ex.method !== 'POST') return ex.hand(session ?? sdk);
  const body = await ex.readBody(deps.maxBodyBytes);
  if (!body.ok) {
    return body.reason === 'too-large'
      ? ex.json(413, tooLarge(deps.maxBodyBytes), true)
      : ex.json(400, '', true);
  }
  ex.note(body.text, auth.principal);
  if (session !== undefined) {
    const parsed = parseJsonBody(body.text);
    if (!parsed.ok) return replyOut(ex, unparsed(parsed));
    return ex.hand(session, { body: parsed.value });
  }
  const decision = await decide(deps, body.text, carrierOf(ex, auth.principal));
  if (decision.kind === 'reply') return replyOut(ex, decision.reply);
  if (decision.kind === 'listen') {
    return ex.hand(listenHandler(deps, decision.hub, decision.request, auth.principal));
  }
  const parsed = { body: decision.parsed };
  if (deps.wire2025?.claimsInitialize(decision.parsed)) return ex.hand(deps.wire2025, parsed);
  return ex.hand(sdk, parsed);
}

/** A reply made here; a queue-full refusal (HTTP 429) carries `Retry-After`. */
function replyOut<Out>(ex: Exchange<Out>, reply: Reply): Out {
  const refusal = refusalOf(reply.status, reply.body);
  if (refusal.headers === undefined) return ex.json(reply.status, reply.body);
  const headers = { 'content-type': 'application/json', ...refusal.headers };
  return ex.reply({ status: refusal.status, body: reply.body, headers });
}

/** The `node:http` / Express face: the chain, then the SDK's own Node adapter. */
export function createNodeHandler(
  deps: HttpDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const sdk = sdkHandler(deps);
  return (req, res) => {
    const ex = new NodeExchange(req, res, deps);
    serveHttp(deps, sdk, ex).catch((error: unknown) => {
      deps.onError(error);
      ex.json(500, INTERNAL_ERROR);
    });
  };
}

/** The web-standard face (Workers, Bun, Deno, Hono): the same chain. */
export function createFetchHandler(deps: HttpDeps): (request: Request) => Promise<Response> {
  const sdk = sdkHandler(deps);
  return (request) => serveHttp(deps, sdk, new FetchExchange(request, deps.allowedHosts));
}
