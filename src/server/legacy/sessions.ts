import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/envelope.js';
import { principalOf } from '../core/principal.js';
import type { LegacyDeps } from './deps.js';
import { buildSessionServer, forwardStatusNotifications } from './session-server.js';

export interface LegacySessionOptions {
  /** A session with no request for this long is closed. Default 1 hour. */
  idleMs?: number;
  maxBodyBytes: number;
}

interface Session {
  principal: string;
  mcp: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  stop: () => void;
}

type FetchOptions = { authInfo?: AuthInfo; parsedBody?: unknown };
type NodeRequest = IncomingMessage & { auth?: AuthInfo };
type NodeHandler = (req: NodeRequest, res: ServerResponse, parsedBody?: unknown) => Promise<void>;

const SESSION_HEADER = 'mcp-session-id';
const NOT_FOUND = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32001, message: 'Session not found' },
});

/**
 * The 2025-11-25 sessions of one server: `initialize` opens one (in memory), requests carrying
 * its `Mcp-Session-Id` go to it. Tasks live in the store, so a lost session loses only its
 * streams; another session of the same principal reads the same tasks.
 */
export class LegacySessions {
  readonly #deps: LegacyDeps;
  readonly #sessions = new Map<string, Session>();
  readonly #idleMs: number;
  readonly #node: NodeHandler;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(deps: LegacyDeps, options: LegacySessionOptions) {
    this.#deps = deps;
    this.#idleMs = options.idleMs ?? 60 * 60 * 1000;
    this.#node = toNodeHandler(
      { fetch: (request, opts) => this.fetch(request, opts ?? {}) },
      { maxRequestBodySize: options.maxBodyBytes },
    ) as NodeHandler;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Requests that name a session are ours (the stateless 2026 wire never sends one). */
  claimsSession(sessionHeader: string | string[] | undefined): boolean {
    return sessionHeader !== undefined;
  }

  claimsInitialize(parsed: unknown): boolean {
    return isObject(parsed) && parsed['method'] === 'initialize' && parsed['id'] !== undefined;
  }

  node(req: NodeRequest, res: ServerResponse, parsedBody?: unknown): Promise<void> {
    return this.#node(req, res, parsedBody);
  }

  async fetch(request: Request, options: FetchOptions): Promise<Response> {
    const sessionId = request.headers.get(SESSION_HEADER);
    if (sessionId === null) return this.#open(request, options);
    const session = this.#sessions.get(sessionId);
    if (session === undefined || session.principal !== principalOf({ http: options })) {
      return new Response(NOT_FOUND, {
        status: 404,
        headers: { 'content-type': 'application/json' },
      });
    }
    session.lastSeen = Date.now();
    return session.transport.handleRequest(request, options);
  }

  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await Promise.all([...this.#sessions.keys()].map((id) => this.#drop(id)));
  }

  async #open(request: Request, options: FetchOptions): Promise<Response> {
    const principal = principalOf({ http: options });
    const mcp = buildSessionServer(this.#deps, principal);
    const session: Session = {
      principal,
      mcp,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => this.#register(id, session),
        onsessionclosed: (id) => this.#drop(id),
      }),
      lastSeen: Date.now(),
      stop: () => undefined,
    };
    session.transport.onclose = () => {
      const id = session.transport.sessionId;
      if (id !== undefined) void this.#drop(id);
    };
    await mcp.connect(session.transport);
    const response = await session.transport.handleRequest(request, options);
    if (session.transport.sessionId === undefined) await mcp.close();
    return response;
  }

  #register(id: string, session: Session): void {
    session.stop = forwardStatusNotifications(session.mcp, this.#deps, id);
    this.#sessions.set(id, session);
    this.#startSweeper();
  }

  async #drop(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    session.stop();
    await session.mcp.close().catch(() => undefined);
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(
      () => {
        const before = Date.now() - this.#idleMs;
        for (const [id, session] of this.#sessions)
          if (session.lastSeen < before) void this.#drop(id);
      },
      Math.max(1000, Math.floor(this.#idleMs / 4)),
    );
    this.#sweeper.unref();
  }
}

/** `false` turns 2025-11-25 sessions off (every `initialize` is then served statelessly). */
export type LegacySessionsOption = false | { idleMs?: number };

export function createLegacySessions(
  option: LegacySessionsOption | undefined,
  deps: Omit<LegacyDeps, 'inFlight'>,
  maxBodyBytes: number,
): LegacySessions | undefined {
  if (option === false) return undefined;
  return new LegacySessions(
    { ...deps, inFlight: new Set() },
    { maxBodyBytes, ...(option?.idleMs === undefined ? {} : { idleMs: option.idleMs }) },
  );
}
