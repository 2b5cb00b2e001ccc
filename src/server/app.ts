import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  type McpHttpHandler,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import type { Logger, RunObserver, RuntimeOptions } from '../runtime/api.js';
import { stderrLogger } from '../runtime/logger.js';
import { TaskRuntime } from '../runtime/runtime.js';
import type { ToolHandler } from '../runtime/tool.js';
import type { TaskStore } from '../store/port.js';
import { createAdmin, type AdminFace, type AdminOptions } from './admin/index.js';
import { tracedRuntime } from './tasks/tracing.js';
import { anonymousAuth, tokenAuth, type CallerAuth, type TokenMap } from './http/auth.js';
import { checkResourceUrl, oauthAuth, type OAuthOptions } from './oauth/caller-auth.js';
import { createFetchHandler, createNodeHandler, type HttpDeps } from './http.js';
import { buildMcpServer, type InstanceDeps } from './sdk/mcp-server.js';
import { DEFAULT_MAX_READ_CHARS } from './sdk/task-resources.js';
import { handlerForHosts } from './sdk/task-support-hint.js';
import { createListenHub, DEFAULT_LISTEN_OPTIONS, type ListenOptions } from './listen/index.js';
import type { Wire2025Deps } from './wire-2025/deps.js';
import { createWire2025Sessions, type Wire2025SessionsOption } from './wire-2025/sessions.js';
import { ANONYMOUS, principalOf } from './tasks/principal.js';
import { isLoopbackHost, localHostSet } from './http/host-check.js';
import { ToolRegistry } from './tasks/tool-registry.js';
import { wireOfSdkEra } from './sdk/era.js';
import { RequestLog } from './http/request-log.js';
import type { TaskRuntimePort } from './tasks/runtime-port.js';
import { guardedRuntime, TroubleReporter } from './tasks/server-trouble.js';
import type {
  McpConfigurer,
  HandlerFor,
  NoUnknownKeys,
  TaskToolConfig,
  TaskTyped,
  ToolConfigShape,
  ToolSchema,
} from './tasks/types.js';
import { FairBound } from './tasks/fair-bound.js';
import { SocketGuard } from './http/sockets.js';

/**
 * The largest request body by default (4 MiB). Its parse is bounded by its shape, not its size
 * (http/body.ts): a body of more values than any request needs is refused before JSON.parse.
 */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

function fallbackRequiredOf(options: TaskServerOptions): boolean {
  return options.fallbackTools === true && options.fallbackRequiredTools !== false;
}

function bodyLimit(options: TaskServerOptions): number {
  return options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
}

export interface TaskServerOptions {
  store: TaskStore;
  name?: string;
  version?: string;
  instructions?: string;
  /**
   * `{ tokens }`: bearer token → principal name. `{ oauth }`: JWT access tokens of an OAuth
   * authorization server; the principal is `sub`. Without it every caller is `anonymous`
   * (or, for the Node handler mounted behind the host application's auth middleware, the
   * principal of its `req.auth`).
   */
  auth?: { tokens: TokenMap } | { oauth: OAuthOptions };
  /** Operator endpoints `/dashboard` and `/metrics`, for admin tokens or scopes only. Off by default. */
  admin?: AdminOptions;
  /**
   * Request bodies over this many bytes get HTTP 413, refused before they are parsed. Default:
   * the runtime's `maxArgumentsBytes` (1 MiB) plus 256 KiB for the rest of the request.
   */
  maxBodyBytes?: number;
  /**
   * Host names accepted in the Host and Origin headers. Default: when `listen` binds a
   * loopback address, only local names (DNS-rebinding protection); a non-loopback `listen`
   * accepts any; the handlers mounted in another server check local names on requests that
   * reached a loopback address.
   */
  allowedHosts?: string[];
  /** The endpoint path. Default `/mcp`. */
  path?: string;
  /** Runtime settings (executor, concurrency, TTLs, limits); the store and tools are filled in. */
  runtime?: Omit<RuntimeOptions, 'store' | 'tools'>;
  logger?: Logger;
  /** Limits of the task notification streams (`subscriptions/listen` with taskIds). */
  listen?: Partial<ListenOptions>;
  /** 2025-11-25 sessions opened by `initialize` (default on; `false`: no sessions, `initialize` answered statelessly). */
  wire2025Sessions?: Wire2025SessionsOption;
  /** For hosts without tasks: past the inline wait a handle, and task_status/result/answer/cancel. */
  fallbackTools?: boolean;
  /**
   * With `fallbackTools`, whether `required` tools answer hosts without tasks too (default true)
   * instead of the spec's -32021 (`taskrail serve` sets it only for an explicit --fallback-tools).
   */
  fallbackRequiredTools?: boolean;
  /**
   * How long a `tools/call` from a host that did not declare tasks waits for the task it runs
   * behind the scenes before answering with a handle (with `fallbackTools`). Default 45 s.
   */
  inlineWaitMs?: number;
  /**
   * Results with more text are handed out shortened, the whole text readable as
   * `taskrail://tasks/ID/result`. Default 40,000. (The runtime's `maxResultChars`, which
   * shortens, defaults to the same.)
   */
  maxResultChars?: number;
  /**
   * One `resources/read` of a task text returns at most this many characters; a read without
   * `?offset=&length=` returns the whole text up to it. Default 8,388,608.
   */
  maxReadChars?: number;
  /** Socket limits of the server `listen` starts (not used by `fetch` / `nodeHandler`). */
  http?: HttpLimits;
}

/** Limits that keep slow or idle clients from holding the server's sockets. */
export interface HttpLimits {
  /** Time a client has to send its request headers. Default 30 s (Node: 60 s). */
  headersTimeoutMs?: number;
  /** Time to receive a whole request. Default 60 s. Responses (SSE streams) are not limited. */
  requestTimeoutMs?: number;
  /** An idle keep-alive socket is closed after this long. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /**
   * Sockets open at once; more are refused at accept. Default 1024. One caller's connections
   * busy with a request are at most half of them (HTTP 429 past that, docs/operations.md).
   * Above 80% of it, sockets with no request in flight are closed, longest idle first.
   */
  maxConnections?: number;
  /** Sockets open at once from one remote address; more are closed at once. Default half of `maxConnections`. */
  maxConnectionsPerAddress?: number;
}

export const HTTP_DEFAULTS = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
} as const;

function applyLimits(server: Server, limits: HttpLimits = {}): void {
  const headersTimeout = limits.headersTimeoutMs ?? HTTP_DEFAULTS.headersTimeoutMs;
  const requestTimeout = limits.requestTimeoutMs ?? HTTP_DEFAULTS.requestTimeoutMs;
  server.headersTimeout = headersTimeout;
  // Node wants requestTimeout ≥ headersTimeout (0 = off).
  server.requestTimeout = requestTimeout === 0 ? 0 : Math.max(requestTimeout, headersTimeout);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs ?? HTTP_DEFAULTS.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections ?? HTTP_DEFAULTS.maxConnections;
}

/** How often Node checks header/request timers: often enough to honour short limits. */
function checkingInterval(limits: HttpLimits = {}): number {
  const headersTimeout = limits.headersTimeoutMs ?? HTTP_DEFAULTS.headersTimeoutMs;
  return Math.min(30_000, Math.max(250, Math.floor(headersTimeout / 4)));
}

/** The per-address cap and idle closing of `listen`'s sockets (none without a finite cap). */
function socketGuard(options: TaskServerOptions): SocketGuard | undefined {
  const maxConnections = options.http?.maxConnections ?? HTTP_DEFAULTS.maxConnections;
  if (!Number.isFinite(maxConnections) || maxConnections <= 0) return undefined;
  const maxPerAddress =
    options.http?.maxConnectionsPerAddress ?? Math.max(1, Math.ceil(maxConnections / 2));
  return new SocketGuard({
    maxConnections,
    maxPerAddress,
    onRefused: (address, open, more) =>
      options.logger?.warn('connection refused: its address holds the most sockets it may', {
        address,
        open,
        ...(more > 0 ? { refusedSinceLastLine: more } : {}),
        hint: 'raise --max-connections-per-address (e.g. behind a reverse proxy)',
      }),
  });
}

type RequestStateVerify = NonNullable<InstanceDeps['requestState']>['verify'];

export interface ListenInfo {
  url: string;
  host: string;
  port: number;
}

/** An MCP server whose task-capable tools run as durable tasks on `store`. */
export interface TaskServer {
  /**
   * Registers a tool; see `TaskToolConfig` for the task modes. The handler's `args` are typed by
   * the `inputSchema` (a zod object: its output type) and its `structuredContent` by the
   * `outputSchema`. Returns the server.
   */
  tool<Config extends ToolConfigShape, InputSchema extends ToolSchema | undefined = undefined>(
    name: string,
    config: Config & NoUnknownKeys<Config, TaskToolConfig> & TaskTyped<InputSchema>,
    handler: HandlerFor<Config>,
  ): TaskServer;
  /** Registers raw SDK things (resources, prompts, plain tools) on every server instance. */
  configure(configurer: McpConfigurer): TaskServer;
  /**
   * Verifies every echoed MRTR `requestState` before a raw handler runs, e.g. the `verify` of
   * the SDK's `createRequestStateCodec`; a rejection answers -32602. Returns the server.
   */
  verifyRequestState(verify: RequestStateVerify): TaskServer;
  readonly runtime: TaskRuntime;
  readonly tools: ToolRegistry;
  readonly store: TaskStore;
  /** Publishes list-changed events to open `subscriptions/listen` streams. */
  readonly notify: ServerNotifier;
  /** Web-standard face: serve one HTTP request. */
  fetch(request: Request): Promise<Response>;
  /** `node:http` / Express face. */
  readonly nodeHandler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Starts an HTTP server; resolves once it accepts connections. */
  listen(port?: number, host?: string): Promise<ListenInfo>;
  /** Stops the HTTP server and the runtime (running work gets `graceMs`); the store stays open. */
  close(graceMs?: number): Promise<void>;
  /** The pieces the stdio face reuses. */
  readonly instanceDeps: InstanceDeps;
  /** What 2025-11-25 sessions share, HTTP and stdio alike; undefined with `wire2025Sessions: false`. */
  readonly wire2025Deps: Wire2025Deps | undefined;
}

/** The resource URL OAuth tokens must name: the one configured, else the one `listen()` prints. */
function resourceHolder(options: TaskServerOptions): {
  get: () => string | undefined;
  listened: (url: string) => void;
} {
  const configured =
    options.auth !== undefined && 'oauth' in options.auth ? options.auth.oauth.resource : undefined;
  if (configured !== undefined) checkResourceUrl(configured);
  let listened: string | undefined;
  return { get: () => configured ?? listened, listened: (url) => (listened = url) };
}

function callerAuth(
  options: TaskServerOptions,
  path: string,
  resource: () => string | undefined,
): CallerAuth {
  const auth = options.auth;
  if (auth === undefined) return anonymousAuth;
  if ('oauth' in auth) return oauthAuth(auth.oauth, path, resource, options.logger);
  return tokenAuth(auth.tokens);
}

/** The caller's run observer and the metrics' one, each told of every event. */
function bothObservers(
  mine: RunObserver | undefined,
  metrics: RunObserver | undefined,
): RunObserver | undefined {
  if (mine === undefined || metrics === undefined) return mine ?? metrics;
  return {
    attemptTimedOut: (tool) => {
      metrics.attemptTimedOut?.(tool);
      mine.attemptTimedOut?.(tool);
    },
    retrying: (tool, reason) => {
      metrics.retrying?.(tool, reason);
      mine.retrying?.(tool, reason);
    },
    waiting: (tool, kind) => {
      metrics.waiting?.(tool, kind);
      mine.waiting?.(tool, kind);
    },
  };
}

export function createTaskServer(options: TaskServerOptions): TaskServer {
  const tools = new ToolRegistry();
  const configurers: McpConfigurer[] = [];
  const path = options.path ?? '/mcp';
  const resource = resourceHolder(options);
  const auth = callerAuth(options, path, resource.get);
  const admin: AdminFace | undefined =
    options.admin === undefined
      ? undefined
      : createAdmin(options.admin, {
          store: options.store,
          callerTokens:
            options.auth !== undefined && 'tokens' in options.auth
              ? options.auth.tokens
              : undefined,
          runtime: (): TaskRuntime => runtime,
          resource: resource.get,
          logger: options.logger,
        });
  const observer = bothObservers(options.runtime?.observer, admin?.observer);
  const runtime = new TaskRuntime({
    ...options.runtime,
    ...(options.maxResultChars === undefined ? {} : { maxResultChars: options.maxResultChars }),
    store: admin?.store ?? options.store,
    tools,
    ...(observer === undefined ? {} : { observer }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const trouble = new TroubleReporter(options.logger ?? stderrLogger('warn'));
  const guarded = guardedRuntime(tracedRuntime(runtime), trouble);
  const face = (): TaskRuntimePort => guarded;
  const instanceDeps: InstanceDeps = {
    name: options.name ?? 'taskrail',
    version: options.version ?? '0.0.0',
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    tools,
    runtime: face,
    configurers,
    fallbackTools: options.fallbackTools === true,
    fallbackRequired: fallbackRequiredOf(options),
    trouble,
    ...(options.inlineWaitMs === undefined ? {} : { inlineWaitMs: options.inlineWaitMs }),
    maxResultChars: options.maxResultChars ?? options.runtime?.maxResultChars ?? 40_000,
    resources: {
      runtime: face,
      store: options.store,
      maxReadChars: options.maxReadChars ?? DEFAULT_MAX_READ_CHARS,
    },
  };
  const onError = (error: unknown): void =>
    options.logger?.error('request failed', { error: String(error) });
  const maxBodyBytes = bodyLimit(options);
  const sdkHandler: McpHttpHandler = createMcpHandler(
    (ctx) =>
      buildMcpServer(instanceDeps, {
        wire: wireOfSdkEra(ctx.era),
        principal: principalOf({ http: { authInfo: ctx.authInfo } }),
      }),
    { maxRequestBodySize: maxBodyBytes },
  );
  const sdk = handlerForHosts(sdkHandler, tools);
  const wire2025Deps: Wire2025Deps = {
    instanceDeps,
    runtime,
    fallbackTools: options.fallbackTools === true,
    fallbackRequired: fallbackRequiredOf(options),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    inFlight: new Set(),
  };
  const wire2025 = createWire2025Sessions(options.wire2025Sessions, wire2025Deps, maxBodyBytes);
  const debug = options.logger?.debug?.bind(options.logger);
  const requestLog = debug === undefined ? undefined : new RequestLog(debug);
  const httpDeps: HttpDeps = {
    runtime: face,
    wire2025,
    fallbackTools: options.fallbackTools === true,
    fallbackRequired: fallbackRequiredOf(options),
    inlineWaitMs: options.inlineWaitMs,
    tools,
    serverInfo: { name: instanceDeps.name, version: instanceDeps.version },
    listen: createListenHub(runtime, options.listen),
    sdk,
    path,
    maxBodyBytes,
    auth,
    onError,
    allowedHosts: options.allowedHosts === undefined ? undefined : new Set(options.allowedHosts),
    hostsBySocket: true,
    admin,
    requestLog,
  };
  const nodeHandler = requestLog?.wrap(createNodeHandler(httpDeps)) ?? createNodeHandler(httpDeps);
  const fetchHandler = createFetchHandler(httpDeps);
  let http: Server | undefined;

  const server: TaskServer = {
    tool(name, config, handler) {
      // The arguments are parsed with the inputSchema before the handler or the key sees them.
      tools.add(name, config as TaskToolConfig, handler as unknown as ToolHandler);
      return server;
    },
    configure(configurer) {
      configurers.push(configurer);
      return server;
    },
    verifyRequestState(verify) {
      instanceDeps.requestState = { verify };
      return server;
    },
    runtime,
    tools,
    store: options.store,
    notify: sdk.notify,
    fetch: fetchHandler,
    nodeHandler,
    instanceDeps,
    wire2025Deps: wire2025 === undefined ? undefined : wire2025Deps,
    async listen(port = 3000, host = '127.0.0.1') {
      if (tools.hasTaskTools()) runtime.start();
      if (options.allowedHosts === undefined) {
        if (isLoopbackHost(host)) httpDeps.allowedHosts = localHostSet();
        else httpDeps.hostsBySocket = false;
      }
      const sockets = socketGuard(options);
      http = createServer(
        // The sweep interval is fixed at creation: pick it from the limits.
        { connectionsCheckingInterval: checkingInterval(options.http) },
        nodeHandler,
      );
      applyLimits(http, options.http);
      if (sockets !== undefined) http.on('connection', sockets.admit);
      httpDeps.sockets = sockets;
      if (Number.isFinite(http.maxConnections)) {
        httpDeps.connections = new FairBound({ capacity: http.maxConnections });
      }
      await new Promise<void>((resolve, reject) => {
        http?.once('error', reject);
        http?.listen(port, host, () => resolve());
      });
      const address = http.address() as AddressInfo;
      const shown = host.includes(':') ? `[${host}]` : host;
      const url = `http://${shown}:${address.port}${httpDeps.path}`;
      resource.listened(url);
      return { url, host, port: address.port };
    },
    async close(graceMs = 10_000) {
      const closing = http;
      http = undefined;
      if (closing !== undefined) {
        await new Promise<void>((resolve) => {
          closing.close(() => resolve());
          closing.closeAllConnections();
        });
      }
      admin?.close();
      await wire2025?.close();
      await sdk.close();
      await runtime.stop(graceMs);
    },
  };
  return server;
}

export { ANONYMOUS, DEFAULT_LISTEN_OPTIONS, DEFAULT_MAX_READ_CHARS };
