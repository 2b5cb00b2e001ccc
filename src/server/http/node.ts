import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { HeaderReader } from '../../protocol/index.js';
import { openNodeListen } from '../listen/index.js';
import { withTroubleStatus } from '../tasks/server-trouble.js';
import type { AuthReply } from './auth.js';
import { readNodeBody } from './body.js';
import { serveHttp, type Exchange, type HttpDeps } from './chain.js';
import { hostsFor } from './host-check.js';
import { answerWithSdk } from './sdk-answer.js';

type NodeRequest = IncomingMessage & { auth?: AuthInfo };

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

const INTERNAL_ERROR = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32603, message: 'Internal error' },
});

/** The `node:http` / Express adapter of the chain (chain.ts): the SDK's own Node adapter last. */
export function createNodeHandler(
  deps: HttpDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const sdk = withTroubleStatus(deps.sdk.fetch);
  const sdkNode = toNodeHandler(
    { ...deps.sdk, fetch: sdk },
    { maxRequestBodySize: deps.maxBodyBytes },
  );
  const exchange = (req: NodeRequest, res: ServerResponse): Exchange<void> => ({
    path: pathOf(req.url),
    method: req.method ?? 'GET',
    headers: nodeHeaders(req),
    allowedHosts: hostsFor(deps, req.socket.localAddress),
    host: req.headers.host,
    preAuth: req.auth,
    readBody: (limit) => readNodeBody(req, limit),
    closed: () => closeSignal(res),
    authenticated: (authInfo) => {
      if (authInfo !== undefined) req.auth = authInfo;
    },
    note: (text, principal) => deps.requestLog?.note(req, text, principal),
    json: (status, body, close) => send(res, status, body, close),
    authReply: (reply) => sendReply(res, reply),
    admin: (routes) => routes.node(req, res),
    sessions: (sessions) => sessions.node(req, res),
    sessionsParsed: (sessions, parsed) => sessions.node(req, res, parsed),
    sdk: () => sdkNode(req, res),
    sdkParsed: (parsed) => answerWithSdk(deps.sdk.fetch, req, res, parsed),
    listen: (hub, request, principal) =>
      openNodeListen(hub, request, principal, deps.serverInfo, res),
  });
  return (req, res) => {
    serveHttp(deps, exchange(req, res)).catch((error: unknown) => {
      deps.onError(error);
      send(res, 500, INTERNAL_ERROR);
    });
  };
}
