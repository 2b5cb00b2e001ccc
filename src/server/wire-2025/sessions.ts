import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';
import { isObject } from '../../protocol/envelope.js';
import { principalOf } from '../tasks/principal.js';
import {
  describeRefusal,
  FairBound,
  fairKeyOf,
  type FairRefusalAnswer,
  type FairTicket,
} from '../tasks/fair-bound.js';
import { withRefusalStatus } from '../tasks/queue-full.js';
import type { Wire2025Deps } from './deps.js';
import { buildSessionServer, followSessionTools, forwardStatusNotifications } from './route.js';
import { forwardResourceListChanges } from '../sdk/resource-list-changes.js';
import { HEADER, INITIALIZE_METHOD, SERVER_ERROR } from '../../protocol/constants.js';
import { lazySdkNodeHandler, type SdkNodeHandler } from '../http/sdk-node.js';

export interface Wire2025SessionOptions extends SessionLimits {
  maxBodyBytes: number;
}

/** Bounds on 2025-11-25 sessions (each holds an SDK server instance, ~30 KB, in memory). */
export interface SessionLimits {
  /** A session with no request but `ping` for this long is closed. Default 1 hour. */
  idleMs?: number;
  /**
   * Open sessions at most, all callers together; one caller holds at most half while others
   * hold or ask (fair-bound.ts). Default 1000.
   */
  maxSessions?: number;
  /** Open sessions at most per principal (anonymous ones count each on its own). Default 100. */
  maxSessionsPerPrincipal?: number;
  /**
   * At a cap, the least recently used session is closed to make room if it has had no request
   * but `ping` for this long and none is in progress. Default 1 minute; fresher sessions are kept and the
   * new `initialize` is refused instead.
   */
  evictAfterIdleMs?: number;
  /** `tasks/result` requests waiting at once in all sessions, shared fairly. Default 1000. */
  maxWaitingResults?: number;
}

export const SESSION_DEFAULTS = {
  idleMs: 60 * 60 * 1000,
  maxSessions: 1000,
  maxSessionsPerPrincipal: 100,
  evictAfterIdleMs: 60 * 1000,
  maxWaitingResults: 1000,
} as const;

interface Session {
  principal: string;
  /** Whom it counts against: the principal; an anonymous caller's session counts on its own. */
  key: string;
  ticket: FairTicket;
  mcp: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  /** When it last did work: any request but `ping` (pings alone leave a session idle). */
  lastSeen: number;
  /** Requests of this session being served now (a busy session is never evicted). */
  busy: number;
  stop: () => void;
}

type FetchOptions = { authInfo?: AuthInfo; parsedBody?: unknown };
type NodeRequest = IncomingMessage & { auth?: AuthInfo };

const SESSION_HEADER = HEADER.sessionId;
const NOT_FOUND = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: SERVER_ERROR.SESSION_NOT_FOUND, message: 'Session not found' },
});

function tooManySessions(id: unknown, refused: FairRefusalAnswer): Response {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: {
      code: SERVER_ERROR.LIMIT_REACHED,
      message: `${refused.message} (close an unused one: HTTP DELETE with its Mcp-Session-Id)`,
      data: refused.data,
    },
  });
  return new Response(body, {
    status: refused.httpStatus,
    headers: {
      'content-type': 'application/json',
      'retry-after': String(refused.retryAfterSeconds),
    },
  });
}

function perCallerRefusal(perCaller: number, capacity: number): FairRefusalAnswer {
  return {
    httpStatus: 429,
    retryAfterSeconds: 60,
    message: `Too many open sessions for one caller: at most ${perCaller}`,
    data: { bound: 'sessions', capacity, share: perCaller, reason: 'share' },
  };
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
  readonly #bound: FairBound;
  readonly #node: SdkNodeHandler;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(deps: Wire2025Deps, options: Wire2025SessionOptions) {
    this.#limits = {
      idleMs: options.idleMs ?? SESSION_DEFAULTS.idleMs,
      maxSessions: options.maxSessions ?? SESSION_DEFAULTS.maxSessions,
      maxSessionsPerPrincipal:
        options.maxSessionsPerPrincipal ?? SESSION_DEFAULTS.maxSessionsPerPrincipal,
      evictAfterIdleMs: options.evictAfterIdleMs ?? SESSION_DEFAULTS.evictAfterIdleMs,
      maxWaitingResults: options.maxWaitingResults ?? SESSION_DEFAULTS.maxWaitingResults,
    };
    this.#bound = new FairBound({ capacity: this.#limits.maxSessions, lend: true });
    const waitingResults = new FairBound({ capacity: this.#limits.maxWaitingResults });
    this.#deps = { ...deps, waitingResults };
    this.#node = lazySdkNodeHandler(
      { fetch: (request, opts) => this.fetch(request, opts ?? {}) },
      options.maxBodyBytes,
    );
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
    // A ping shows the client is there, not that the session is in use: it does not renew it.
    const work = !isPing(options.parsedBody);
    if (work) session.lastSeen = Date.now();
    session.busy += 1;
    try {
      const response = await session.transport.handleRequest(request, options);
      return request.method === 'GET' ? openedAtOnce(response) : response;
    } finally {
      session.busy -= 1;
      if (work) session.lastSeen = Date.now();
    }
  }

  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await Promise.all([...this.#sessions.keys()].map((id) => this.#drop(id)));
  }

  async #open(request: Request, options: FetchOptions): Promise<Response> {
    const principal = principalOf({ http: options });
    const key = fairKeyOf(principal, randomUUID());
    const ticket = await this.#makeRoom(key);
    if (!('give' in ticket)) {
      const id = isObject(options.parsedBody) ? options.parsedBody['id'] : undefined;
      this.#deps.logger?.warn('2025-11-25 session refused: at the session cap', {
        reason: ticket.data.reason,
        open: this.#bound.total,
      });
      return tooManySessions(id, ticket);
    }
    const mcp = buildSessionServer(this.#deps, principal);
    const session: Session = {
      principal,
      key,
      ticket,
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
    try {
      await mcp.connect(session.transport);
      return await session.transport.handleRequest(request, options);
    } finally {
      if (session.transport.sessionId === undefined) {
        ticket.give();
        await mcp.close();
      }
    }
  }

  #register(id: string, session: Session): void {
    const stopStatus = forwardStatusNotifications(session.mcp, this.#deps, id);
    const stopTools = followSessionTools(session.mcp, this.#deps);
    const stopLists = forwardResourceListChanges(
      session.mcp,
      this.#deps.instanceDeps.resources?.store,
      { principal: session.principal, session: id },
    );
    session.stop = () => {
      stopStatus();
      stopTools();
      stopLists();
    };
    this.#sessions.set(id, session);
    this.#startSweeper();
  }

  async #drop(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    session.ticket.give();
    session.stop();
    await session.mcp.close().catch(() => undefined);
  }

  /**
   * A place for one more session counted against `key`: where a cap is reached, the least
   * recently used idle session that stands in the way is closed (see #victims). Returns the
   * place, or what the caller is told when none can be made.
   */
  async #makeRoom(key: string): Promise<FairTicket | FairRefusalAnswer> {
    const { maxSessionsPerPrincipal } = this.#limits;
    const own = [...this.#sessions].filter(([, session]) => session.key === key);
    if (own.length >= maxSessionsPerPrincipal && !(await this.#evictOldest(own))) {
      return perCallerRefusal(maxSessionsPerPrincipal, this.#bound.capacity);
    }
    for (;;) {
      const ticket = this.#bound.tryTake(key);
      if (typeof ticket !== 'string') return ticket;
      const { candidates, fresh } = this.#victims(key, ticket === 'share');
      if (!(await this.#evictOldest(candidates, fresh))) {
        return describeRefusal('sessions', ticket, this.#bound, 60);
      }
    }
  }

  /**
   * Who may be closed for a new session: at its share, the caller's own idle sessions; with the
   * cap full, those of the caller holding the most when that one is past its share (even if
   * used recently: it took more than half while nobody else asked), else anyone's idle ones.
   */
  #victims(key: string, atShare: boolean): { candidates: [string, Session][]; fresh: boolean } {
    const all = [...this.#sessions];
    if (atShare) return { candidates: all.filter(([, s]) => s.key === key), fresh: false };
    const top = this.#bound.largest();
    if (top !== undefined && top.key !== key && top.held > this.#bound.share) {
      return { candidates: all.filter(([, s]) => s.key === top.key), fresh: true };
    }
    return { candidates: all, fresh: false };
  }

  async #evictOldest(candidates: [string, Session][], fresh = false): Promise<boolean> {
    const before = fresh ? Infinity : Date.now() - this.#limits.evictAfterIdleMs;
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

function isPing(parsedBody: unknown): boolean {
  return isObject(parsedBody) && parsedBody['method'] === 'ping';
}

const OPENING = new TextEncoder().encode(': stream open\n\n');

/**
 * The standalone stream (GET) with an SSE comment first: node:http sends a response's headers
 * only with its first bytes, so without one a client cannot tell the stream is open (and
 * that notifications sent from then on will reach it) until the first notification comes.
 */
function openedAtOnce(response: Response): Response {
  const type = response.headers.get('content-type') ?? '';
  if (response.body === null || !type.includes('text/event-stream')) return response;
  const opened = new TransformStream<Uint8Array, Uint8Array>({
    start: (controller) => controller.enqueue(OPENING),
  });
  void response.body.pipeTo(opened.writable).catch(() => undefined);
  return new Response(opened.readable, { status: response.status, headers: response.headers });
}
