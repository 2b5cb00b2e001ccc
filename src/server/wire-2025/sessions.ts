import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/envelope.js';
import { principalOf } from '../tasks/principal.js';
import { withRefusalStatus } from '../tasks/queue-full.js';
import type { Wire2025Deps } from './deps.js';
import { buildSessionServer, followSessionTools, forwardStatusNotifications } from './route.js';
import { HEADER, INITIALIZE_METHOD, SERVER_ERROR } from '../../protocol/constants.js';

export interface Wire2025SessionOptions extends SessionLimits {
  maxBodyBytes: number;
}

/** Bounds on 2025-11-25 sessions (each holds an SDK server instance, ~30 KB, in memory). */
export interface SessionLimits {
  /** A session with no request for this long is closed. Default 1 hour. */
  idleMs?: number;
  /** Open sessions at most, all callers together. Default 1000. */
  maxSessions?: number;
  /** Open sessions at most per principal. Default 100. */
  maxSessionsPerPrincipal?: number;
  /**
   * At a cap, the least recently used session is closed to make room if it has had no request
   * for this long and none is in progress. Default 1 minute; fresher sessions are kept and the
   * new `initialize` is refused instead.
   */
  evictAfterIdleMs?: number;
}

export const SESSION_DEFAULTS = {
  idleMs: 60 * 60 * 1000,
  maxSessions: 1000,
  maxSessionsPerPrincipal: 100,
  evictAfterIdleMs: 60 * 1000,
} as const;

interface Session {
  principal: string;
  mcp: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  /** Requests of this session being served now (a busy session is never evicted). */
  busy: number;
  stop: () => void;
}

type FetchOptions = { authInfo?: AuthInfo; parsedBody?: unknown };
type NodeRequest = IncomingMessage & { auth?: AuthInfo };
type NodeHandler = (req: NodeRequest, res: ServerResponse, parsedBody?: unknown) => Promise<void>;

const SESSION_HEADER = HEADER.sessionId;
const NOT_FOUND = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: SERVER_ERROR.SESSION_NOT_FOUND, message: 'Session not found' },
});

function tooManySessions(id: unknown, scope: string): Response {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: {
      code: SERVER_ERROR.LIMIT_REACHED,
      message:
        `Too many open sessions (${scope}): close an unused session (HTTP DELETE with its ` +
        'Mcp-Session-Id) or retry later',
    },
  });
  return new Response(body, {
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '60' },
  });
}

/**
 * The 2025-11-25 sessions of one server: `initialize` opens one (in memory), requests carrying
 * its `Mcp-Session-Id` go to it. Tasks live in the store, so a lost session loses only its
 * streams; another session of the same principal reads the same tasks.
 */
export class Wire2025Sessions {
  readonly #deps: Wire2025Deps;
  readonly #sessions = new Map<string, Session>();
  readonly #limits: Required<SessionLimits>;
  readonly #node: NodeHandler;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(deps: Wire2025Deps, options: Wire2025SessionOptions) {
    this.#deps = deps;
    this.#limits = {
      idleMs: options.idleMs ?? SESSION_DEFAULTS.idleMs,
      maxSessions: options.maxSessions ?? SESSION_DEFAULTS.maxSessions,
      maxSessionsPerPrincipal:
        options.maxSessionsPerPrincipal ?? SESSION_DEFAULTS.maxSessionsPerPrincipal,
      evictAfterIdleMs: options.evictAfterIdleMs ?? SESSION_DEFAULTS.evictAfterIdleMs,
    };
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
    return isObject(parsed) && parsed['method'] === INITIALIZE_METHOD && parsed['id'] !== undefined;
  }

  node(req: NodeRequest, res: ServerResponse, parsedBody?: unknown): Promise<void> {
    return this.#node(req, res, parsedBody);
  }

  readonly fetch = withRefusalStatus((request: Request, options: FetchOptions) =>
    this.#serve(request, options),
  );

  async #serve(request: Request, options: FetchOptions): Promise<Response> {
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
    session.busy += 1;
    try {
      return await session.transport.handleRequest(request, options);
    } finally {
      session.busy -= 1;
      session.lastSeen = Date.now();
    }
  }

  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await Promise.all([...this.#sessions.keys()].map((id) => this.#drop(id)));
  }

  async #open(request: Request, options: FetchOptions): Promise<Response> {
    const principal = principalOf({ http: options });
    const full = await this.#makeRoom(principal);
    if (full !== undefined) {
      const id = isObject(options.parsedBody) ? options.parsedBody['id'] : undefined;
      this.#deps.logger?.warn('2025-11-25 session refused: at the session cap', {
        scope: full,
        open: this.#sessions.size,
      });
      return tooManySessions(id, full);
    }
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
      busy: 0,
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
    const stopStatus = forwardStatusNotifications(session.mcp, this.#deps, id);
    const stopTools = followSessionTools(session.mcp, this.#deps);
    session.stop = () => {
      stopStatus();
      stopTools();
    };
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

  /**
   * Frees a place for one more session of `principal`: closes the least recently used idle one
   * where a cap is reached. Returns which cap still blocks, or undefined when there is room.
   */
  async #makeRoom(principal: string): Promise<string | undefined> {
    const { maxSessions, maxSessionsPerPrincipal } = this.#limits;
    const own = [...this.#sessions].filter(([, session]) => session.principal === principal);
    if (own.length >= maxSessionsPerPrincipal && !(await this.#evictOldest(own))) {
      return `at most ${maxSessionsPerPrincipal} per caller`;
    }
    if (this.#sessions.size >= maxSessions && !(await this.#evictOldest([...this.#sessions]))) {
      return `at most ${maxSessions} in all`;
    }
    return undefined;
  }

  async #evictOldest(candidates: [string, Session][]): Promise<boolean> {
    const before = Date.now() - this.#limits.evictAfterIdleMs;
    let oldest: [string, Session] | undefined;
    for (const entry of candidates) {
      const session = entry[1];
      if (session.busy > 0 || session.lastSeen > before) continue;
      if (oldest === undefined || session.lastSeen < oldest[1].lastSeen) oldest = entry;
    }
    if (oldest === undefined) return false;
    await this.#drop(oldest[0]);
    return true;
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(
      () => {
        const before = Date.now() - this.#limits.idleMs;
        for (const [id, session] of this.#sessions)
          if (session.lastSeen < before && session.busy === 0) void this.#drop(id);
      },
      Math.max(1000, Math.min(60_000, Math.floor(this.#limits.idleMs / 4))),
    );
    this.#sweeper.unref();
  }
}

/** `false` turns 2025-11-25 sessions off (every `initialize` is then served statelessly). */
export type Wire2025SessionsOption = false | SessionLimits;

export function createWire2025Sessions(
  option: Wire2025SessionsOption | undefined,
  deps: Wire2025Deps,
  maxBodyBytes: number,
): Wire2025Sessions | undefined {
  if (option === false) return undefined;
  return new Wire2025Sessions(deps, { maxBodyBytes, ...option });
}
